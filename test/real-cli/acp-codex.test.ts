/**
 * The acp engine with the REAL pinned zed codex-acp 0.16.0 (native binary embedding Codex) against
 * our OpenAI Responses mock on 127.0.0.1, with a temp CODEX_HOME (config.toml: mock provider,
 * approval_policy "untrusted" so shell commands ask first).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine, type AcpEngine } from '../../src/engines/acp/index.js';
import { createSession, MemoryJournal, MemoryStore, type Session } from '../../src/index.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { EventLog } from '../support/acp-hermetic.js';
import { realContext, runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { nextNotice } from '../support/acp-session.js';
import { hermeticCodex, type HermeticCodex } from '../support/codex-hermetic.js';
import { waitNoProcessesUnder } from '../support/processes.js';

describe('acp engine with codex-acp', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let session: Session | undefined;
  /** Engines driven directly: stopped after each test even when an assertion failed. */
  const engines: AcpEngine[] = [];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-acp-codex-'));
    mock = await startOpenAIResponsesMock();
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await Promise.allSettled(engines.splice(0).map((e) => e.stop()));
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  function codex(): HermeticCodex {
    return hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: 'codex-acp', approvalPolicy: 'untrusted' });
  }

  function setup(): AgentSetup {
    const h = codex();
    return {
      work: h.workDir,
      options: { preset: 'codex-acp', env: h.env },
      model: {
        text: (text) => mock.enqueue({ kind: 'text', text }),
        thinking: (thinking, text) => mock.enqueue({ kind: 'text', reasoning: thinking, text }),
        shell: (command) => mock.enqueue(execCommandCall(command)),
        slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
      },
      close: async () => undefined,
    };
  }

  it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded)', async () => {
    const timings = await runScenarioSuite('codex-acp', root, setup(), { thinking: true, rejectEndsTurn: true });
    console.log(`[acp-codex] timings ${JSON.stringify(timings)}`);
  });

  it('a SessionActor in remote mode completes a permissioned shell turn through decide()', async () => {
    const h = codex();
    session = await createSession({
      agent: 'acp',
      engines: [acpEngine({ preset: 'codex-acp' })],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: h.workDir,
      engineOptions: { env: h.env },
    });
    const log = new EventLog();
    session.on('agent', (n) => log.push(n.event));
    await log.next('ready', 'ready', 60_000);
    mock.enqueue(execCommandCall('touch from-session.txt && echo created'), { kind: 'text', text: 'Created.' });
    const prompt = nextNotice(session, 'permission_prompt');
    const done = log.next('turn_complete');
    session.send('create the file');
    const p = await prompt;
    session.decide(p.requestId, 'allow');
    expect(await done).toMatchObject({ status: 'completed' });
    expect(existsSync(join(h.workDir, 'from-session.txt'))).toBe(true);
    expect(log.of('tool_result').filter((e) => e.callId === p.callId)).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(session.snapshot().completed[p.requestId]).toMatchObject({ status: 'approved' });
    await session.stop();
    session = undefined;
    expect(await waitNoProcessesUnder(root)).toEqual([]);
  });

  it('session/load replays the history into engine.history, then the session goes on', async () => {
    const h = codex();
    const first = new EventLog();
    const a = acpEngine({ preset: 'codex-acp', env: h.env }).create(realContext()) as AcpEngine;
    engines.push(a);
    a.onEvent(first.push);
    await a.start({ gen: 1, mode: 'remote', workDir: h.workDir, options: {} });
    await first.next('ready', 'ready', 60_000);
    mock.enqueue({ kind: 'text', text: 'I will remember pineapple.' });
    let done = first.next('turn_complete');
    await a.send({ localId: 'a', text: 'remember the word pineapple' });
    await done;
    await a.stop();
    const token = first.of('session_identified')[0]!.resumeToken;

    const second = new EventLog();
    const b = acpEngine({ preset: 'codex-acp', env: h.env }).create(realContext()) as AcpEngine;
    engines.push(b);
    b.onEvent(second.push);
    const t = performance.now();
    await b.start({ gen: 2, mode: 'remote', workDir: h.workDir, resumeToken: token, options: {} });
    await second.next('ready', 'ready', 60_000);
    const loadMs = Math.round(performance.now() - t);
    expect(second.events.map((e) => e.type)).toEqual(['session_identified', 'ready']);
    expect(second.of('session_identified')[0]!.resumeToken).toBe(token);
    const history = JSON.stringify(b.history);
    expect(history).toContain('remember the word pineapple');
    expect(history).toContain('I will remember pineapple.');
    mock.enqueue({ kind: 'text', text: 'Pineapple.' });
    done = second.next('turn_complete');
    await b.send({ localId: 'b', text: 'what was the word?' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(mock.responsesRequests().at(-1)?.body?.input)).toContain('pineapple');
    await b.stop();
    expect(await waitNoProcessesUnder(root)).toEqual([]);
    console.log(`[acp-codex] load: spawn→ready ${loadMs} ms, ${b.history.length} history events`);
  });
});
