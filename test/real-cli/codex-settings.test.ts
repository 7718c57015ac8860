/**
 * `session.setModel()` / `session.setPermissionMode()` against the REAL pinned Codex binaries and
 * the mock Responses API on 127.0.0.1:
 * - app-server (0.169.0): a change goes with the next `turn/start`: the model server sees the new
 *   model in the next turn's requests, and the rollout's `turn_context` shows the new approval
 *   policy; a killed server's successor resumes the thread with the stored choice.
 * - mcp-server (0.153.4): `codex-reply` carries neither, so both are refused with UNSUPPORTED and
 *   nothing changes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine, codexMcpEngine, type CodexAppServerEngine } from '../../src/engines/codex/index.js';
import { createSession, isAseError, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice } from '../../src/index.js';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { capturing } from '../support/capturing-factory.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';
import { rejection } from '../support/async.js';

describe('codex: setModel / setPermissionMode with the real binaries', () => {
  let mock: OpenAIResponsesMock;
  let root: string;
  let session: Session | undefined;

  beforeEach(async () => {
    mock = await startOpenAIResponsesMock();
    root = mkdtempSync(join(tmpdir(), 'ase-codex-settings-'));
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function turn(s: Session, text: string): Promise<Extract<AgentEvent, { type: 'turn_complete' }>> {
    const done = waitForNotice(s, agentEvent('turn_complete'), `turn_complete of "${text}"`);
    void s.send(text);
    return ((await done) as Extract<SessionNotice, { type: 'agent' }>).event as Extract<AgentEvent, { type: 'turn_complete' }>;
  }

  const lastModel = () => (mock.responsesRequests().at(-1)?.body as { model?: string } | undefined)?.model;
  /** `approval_policy` and `model` of each turn, from the rollout's `turn_context` lines. */
  const turnContexts = (rollout: string) =>
    readFileSync(rollout, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; payload: { approval_policy?: unknown; model?: unknown } })
      .filter((l) => l.type === 'turn_context')
      .map((l) => ({ approval: l.payload.approval_policy, model: l.payload.model }));

  it('app-server: the next turn runs with the new model and approval policy; a restarted server keeps them', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: '0.169.0' });
    const { factory, engines } = capturing<CodexAppServerEngine>(codexEngine());
    const s = await createSession({
      agent: 'codex',
      engines: [factory],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: h.workDir,
      engineOptions: { bin: h.bin, env: h.env, model: 'gpt-5.5', approvalPolicy: 'on-request' },
    });
    session = s;
    const errors: AgentEvent[] = [];
    s.on('agent', (n) => n.event.type === 'error' && errors.push(n.event));
    await waitForNotice(s, agentEvent('ready'), 'ready');

    expect((await turn(s, 'first')).status).toBe('completed');
    expect(lastModel()).toBe('gpt-5.5');

    await s.setModel('gpt-5.4');
    await s.setPermissionMode('never');
    expect((await turn(s, 'second')).status).toBe('completed');
    expect(lastModel()).toBe('gpt-5.4');
    // A later turn changes nothing: the thread kept the change.
    expect((await turn(s, 'third')).status).toBe('completed');
    expect(lastModel()).toBe('gpt-5.4');
    const rollout = s.snapshot().transcriptPath!;
    expect(turnContexts(rollout)).toEqual([
      { approval: 'on-request', model: 'gpt-5.5' },
      { approval: 'never', model: 'gpt-5.4' },
      { approval: 'never', model: 'gpt-5.4' },
    ]);

    // The server dies; the next message starts a new one that resumes the thread with the stored choice.
    const exited = waitForNotice(s, agentEvent('exited'), 'exited after the kill');
    process.kill(engines[0]!.pid!, 'SIGKILL');
    await exited;
    expect((await turn(s, 'fourth')).status).toBe('completed');
    expect(engines).toHaveLength(2);
    expect(lastModel()).toBe('gpt-5.4');
    expect(turnContexts(rollout).at(-1)).toEqual({ approval: 'never', model: 'gpt-5.4' });

    // null: back to engineOptions, from the next turn.
    await s.setModel(null);
    await s.setPermissionMode(null);
    expect((await turn(s, 'fifth')).status).toBe('completed');
    expect(lastModel()).toBe('gpt-5.5');
    expect(turnContexts(rollout).at(-1)).toEqual({ approval: 'on-request', model: 'gpt-5.5' });
    expect(errors.filter((e) => e.type === 'error' && !/exited/.test(e.message))).toEqual([]);
  });

  it('app-server: an approval policy it does not know is refused before anything is stored', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: '0.169.0' });
    const s = await createSession({ agent: 'codex', store: new MemoryStore(), journal: new MemoryJournal(), workDir: h.workDir, engineOptions: { bin: h.bin, env: h.env } });
    session = s;
    await waitForNotice(s, agentEvent('ready'), 'ready');
    const error = await rejection(s.setPermissionMode('acceptEdits'));
    expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('untrusted, on-request, never') });
    expect(s.snapshot()).not.toHaveProperty('permissionMode');
  });

  it('mcp-server: both are UNSUPPORTED (codex-reply takes only threadId and prompt); nothing changes', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: '0.153.4' });
    const s = await createSession({ agent: 'codex-mcp', engines: [codexMcpEngine()], store: new MemoryStore(), journal: new MemoryJournal(), workDir: h.workDir, engineOptions: { bin: h.bin, env: h.env } });
    session = s;
    await waitForNotice(s, agentEvent('ready'), 'ready');
    for (const attempt of [() => s.setModel('gpt-5.4'), () => s.setPermissionMode('never')]) {
      const error = await rejection(attempt());
      expect(isAseError(error, 'UNSUPPORTED'), String(error)).toBe(true);
      expect((error as Error).message).toContain('codex-mcp');
    }
    expect(s.snapshot()).not.toHaveProperty('model');
    expect((await turn(s, 'still works')).status).toBe('completed');
  });
});
