/**
 * The acp engine with the REAL pinned zed codex-acp 0.16.0 (native binary embedding Codex) against
 * our OpenAI Responses mock on 127.0.0.1, with a temp CODEX_HOME (config.toml: mock provider,
 * approval_policy "untrusted" so shell commands ask first; Codex's own sandbox off, because the
 * codex-acp package carries no bubblewrap: see CODEX_ACP_DEFAULT_SANDBOX_MODE).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Session } from '../../src/index.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { AcpAgentBench, acpSession, sessionReady } from '../support/acp-agent-bench.js';
import { runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { nextNotice } from '../support/acp-session.js';
import { hermeticCodex, type HermeticCodex } from '../support/codex-hermetic.js';
import { waitNoProcessesUnder } from '../support/processes.js';

describe('acp engine with codex-acp', () => {
  let bench: AcpAgentBench<OpenAIResponsesMock>;
  let root: string;
  let mock: OpenAIResponsesMock;
  let session: Session | undefined;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-codex-', startOpenAIResponsesMock);
    ({ root, mock } = bench);
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await bench.close();
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
    const started = await acpSession({ preset: 'codex-acp' }, h.workDir, { env: h.env });
    session = started.session;
    const { log } = started;
    await sessionReady(log);
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
    const token = await bench.rememberPineapple({ preset: 'codex-acp', env: h.env }, h.workDir, 'I will remember pineapple.');

    const t = performance.now();
    const { engine: b, log: second } = await bench.startEngine({ preset: 'codex-acp', env: h.env }, { gen: 2, workDir: h.workDir, resumeToken: token });
    const loadMs = Math.round(performance.now() - t);
    // (The agent's state it announces on load — commands, mode, context — is live state, not replay.)
    expect(second.events.map((e) => e.type).filter((type) => !['available_commands', 'agent_mode', 'context_usage'].includes(type))).toEqual(['session_identified', 'ready']);
    expect(second.of('session_identified')[0]!.resumeToken).toBe(token);
    const history = JSON.stringify(b.history);
    expect(history).toContain('remember the word pineapple');
    expect(history).toContain('I will remember pineapple.');
    mock.enqueue({ kind: 'text', text: 'Pineapple.' });
    const done = second.next('turn_complete');
    await b.send({ localId: 'b', text: 'what was the word?' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(mock.responsesRequests().at(-1)?.body?.input)).toContain('pineapple');
    await b.stop();
    expect(await waitNoProcessesUnder(root)).toEqual([]);
    console.log(`[acp-codex] load: spawn→ready ${loadMs} ms, ${b.history.length} history events`);
  });
});
