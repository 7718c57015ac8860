/**
 * What a session does with engine options and engine warnings, without any agent CLI:
 * `createSession` refuses unknown or malformed `engineOptions` of every built-in engine before
 * anything is stored or started (the factory's `validateOptions`), and a `warning` AgentEvent
 * (an untested agent version) reaches clients and the transcript without touching the session's
 * error state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession, fakeEngine, MemoryJournal, MemoryStore, type EngineFactory, type SessionNotice } from '../../src/index.js';

let work: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ase-session-options-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

describe('createSession checks engineOptions with the engine', () => {
  const refused = async (agent: string, engineOptions: Record<string, unknown>) => {
    const store = new MemoryStore();
    const error = await createSession({ agent, workDir: work, store, journal: new MemoryJournal(), sessionId: 'checked', engineOptions }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(await store.load('checked')).toBeUndefined(); // nothing stored
    return error as { code?: string; message?: string } | undefined;
  };

  it.each([
    ['claude', { modle: 'opus' }, /claude engine options: unknown option "modle" \(known: .*model.*\)/],
    ['claude', { env: { ANTHROPIC_API_KEY: 1 } }, /env\.ANTHROPIC_API_KEY: must be a string, got number/],
    ['codex', { sandbox: 'none' }, /codex engine options: sandbox: /],
    ['codex', { permissionMode: 'plan' }, /codex engine options: unknown option "permissionMode" \(known: .*approvalPolicy.*\)/],
    ['codex-mcp', { approvalPolicy: 'untrusted' }, /mcp-server accepts approvalPolicy 'on-request' or 'never'/],
    ['acp', { preset: 'gemini', passEnv: 'GEMINI_API_KEY' }, /acp engine options: passEnv: /],
    ['acp', { preset: 'gemini', modelId: 'x' }, /unknown option "modelId" \(known: .*modeId, model,.*\)/],
  ])('%s refuses %j', async (agent, engineOptions, message) => {
    expect(await refused(agent, engineOptions)).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(message) });
  });

  it('an engine without validateOptions takes any options; a validator that throws a plain error is INVALID_OPTIONS', async () => {
    const session = await createSession({ agent: 'fake', workDir: work, store: new MemoryStore(), journal: new MemoryJournal(), engineOptions: { anything: 1 } });
    await session.stop();
    const picky: EngineFactory = { ...fakeEngine(), name: 'picky', validateOptions: () => { throw new TypeError('no way'); } };
    expect(await createSession({ agent: 'picky', engines: [picky], workDir: work, store: new MemoryStore(), journal: new MemoryJournal() }).catch((e: unknown) => e)).toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'no way',
    });
  });
});

describe('a warning from the engine', () => {
  it('reaches clients and the transcript; the session carries on with no error recorded', async () => {
    const warning = { type: 'warning' as const, code: 'untested_version', message: 'Toy CLI 9.9.9 (PATH) is not the version this library is tested against (1.0.0)' };
    const notices: SessionNotice[] = [];
    const session = await createSession({
      agent: 'fake',
      engines: [fakeEngine({ turns: [[{ emit: warning }, { text: 'still fine' }, { complete: {} }]] })],
      workDir: work,
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      onNotice: (n) => notices.push(n),
    });
    const done = new Promise<void>((resolve) => session.on('transcript', ({ entry }) => entry.type === 'turn_complete' && resolve()));
    session.send('hi');
    await done;
    expect(notices).toContainEqual({ type: 'agent', event: expect.objectContaining(warning) });
    expect(notices).toContainEqual({ type: 'transcript', entry: expect.objectContaining({ type: 'warning', payload: { code: warning.code, message: warning.message } }) });
    expect(session.snapshot().lastError).toBeNull();
    expect(notices.some((n) => n.type === 'error')).toBe(false);
    await session.stop();
  });
});
