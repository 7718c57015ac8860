/**
 * The `codex-exec` engine (driven tier) with the REAL pinned codex 0.169.0 (`codex exec --json`,
 * then `codex exec resume <thread>`) against our mock Responses API, hermetic CODEX_HOME: the
 * kit's conformance checks (agent-session-engine/testing), resume by id across turns (one thread,
 * one rollout), and through a session (createSession).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CODEX_EXEC_CAPABILITIES, CodexExecEngine, codexExecEngine } from '../../src/engines/codex/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session } from '../../src/index.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { findRollouts, hermeticCodex, type HermeticCodex } from '../support/codex-hermetic.js';
import { EventLog, realEngineContext, recordTraffic, saveFixture, type TrafficEntry } from '../support/codex-engine-kit.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { expectWellOrdered } from '../support/well-ordered.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { processesUnder } from '../support/processes.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

describe('codex-exec engine (driven) with the real codex 0.169.0', () => {
  let mock: OpenAIResponsesMock;
  let root: string;
  let h: HermeticCodex;
  let traffic: TrafficEntry[];

  beforeEach(async () => {
    mock = await startOpenAIResponsesMock();
    root = mkdtempSync(join(tmpdir(), 'ase-codex-exec-'));
    h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'never', sandboxMode: 'workspace-write' });
    traffic = [];
  });
  afterEach(async () => {
    await mock.close();
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  // The kit's conformance checks (agent-session-engine/testing), each on a fresh engine; its `start`
  // and `resume` checks are asserted by the test below, on its engines (two codex runs fewer).
  const factory: EngineFactory = { name: 'codex-exec', capabilities: CODEX_EXEC_CAPABILITIES, create: (context) => new CodexExecEngine(context, { bin: h.bin, env: h.env }) };
  registerWithVitest(
    engineConformance(factory, {
      workDir: () => h.workDir,
      driver: () => ({
        text: (text) => void mock.enqueue({ kind: 'text', text }),
        tool: (command, then) => void mock.enqueue(execCommandCall(command), { kind: 'text', text: then }),
        failure: () => void mock.enqueue({ kind: 'error', status: 500, message: 'mock exploded' }),
        stall: () => {
          const before = mock.responsesRequests().length;
          mock.enqueue({ kind: 'stall' });
          return { stalled: mock.waitForRequests(before + 1).then(() => undefined) };
        },
      }),
      leftovers: () => processesUnder(root),
      skip: ['start', 'resume'],
    }),
    { describe, it },
  );

  it('resumes the same thread on every turn (one rollout), and runs under a session', async () => {
    const engine = new CodexExecEngine(realEngineContext(), { bin: h.bin, env: h.env, onTraffic: recordTraffic(traffic) });
    const log = new EventLog(engine);
    await engine.start({ gen: 1, mode: 'remote', workDir: h.workDir, options: {} });
    mock.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    await engine.send({ localId: 'a', text: 'first' });
    await log.waitFor('turn_complete');
    expect(log.of('session_identified')).toHaveLength(1); // once, in the first turn
    const thread = engine.resumeToken!;
    let mark = log.mark();
    await engine.send({ localId: 'b', text: 'second' });
    const second = await log.waitFor('turn_complete', mark);
    expect(second).toMatchObject({ status: 'completed', usage: { inputTokens: 100 } }); // this turn's request only
    expect(engine.resumeToken).toBe(thread);
    expect(engine.turnsRun).toBe(2);
    expect(mock.responsesRequests().map((r) => r.headers['thread-id'])).toEqual([thread, thread]);
    // The second request carries the first turn's history: it really resumed.
    expect(JSON.stringify(mock.responsesRequests()[1]!.body.input)).toContain('first');
    expect(findRollouts(h.codexHome)).toHaveLength(1);
    await engine.stop();
    expectWellOrdered(log.events, 1, 2);
    saveFixture('exec-two-turns', { scenario: 'two-turns', engine: 'codex-exec', codexVersion: '0.169.0', workDir: h.workDir, resumeToken: thread, recordedAt: new Date().toISOString() }, traffic);

    // A new engine generation resumes the same thread from the token (as after a host restart).
    const again = new CodexExecEngine(realEngineContext(), { bin: h.bin, env: h.env });
    const log2 = new EventLog(again);
    await again.start({ gen: 2, mode: 'remote', workDir: h.workDir, options: {}, resumeToken: thread });
    expect(log2.of('session_identified')).toEqual([expect.objectContaining({ resumeToken: thread })]);
    mock.enqueue({ kind: 'text', text: 'three' });
    await again.send({ localId: 'c', text: 'third' });
    // Its own usage, although exec resume reports the thread's totals (baseline from the rollout).
    expect(await log2.waitFor('turn_complete')).toMatchObject({ status: 'completed', usage: { inputTokens: 100 } });
    expect(log2.of('session_identified')).toHaveLength(1);
    expect(JSON.stringify(mock.responsesRequests()[2]!.body.input)).toContain('second');
    await again.stop();
    expectWellOrdered(log2.events, 2, 1);

    // Through createSession, registered as 'codex-exec'.
    let session: Session | undefined = await createSession({ agent: 'codex-exec', engines: [codexExecEngine({ bin: h.bin })], store: new MemoryStore(), journal: new MemoryJournal(), workDir: h.workDir, engineOptions: { env: h.env } });
    try {
      await waitForNotice(session, agentEvent('ready'), 'ready');
      mock.enqueue({ kind: 'text', text: 'via session' });
      const done = waitForNotice(session, agentEvent('turn_complete'), 'turn');
      session.send('hello');
      expect(((await done) as { event: { status: string } }).event.status).toBe('completed');
      expect(session.snapshot().resumeToken).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await session.stop();
      session = undefined;
    }
    expect(existsSync(h.workDir)).toBe(true);
  });
});
