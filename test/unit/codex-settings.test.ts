/**
 * The Codex engines and the session's runtime settings (`setModel` / `setPermissionMode`), against
 * in-memory servers:
 * - app-server: the start spec's model and approval policy win over engineOptions in thread/start
 *   (and thread/resume); a change goes with the next `turn/start` only (app-server keeps it "for
 *   this turn and subsequent turns"), never with a turn already running; `null` goes back to the
 *   engineOptions value, else to what the thread started with; an approval policy app-server does
 *   not know is refused before anything is sent.
 * - mcp-server: `codex-reply` carries only {threadId, prompt}: both capabilities are false.
 * The real binary: test/real-cli/codex-app-server-engine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { codexEngine, codexMcpEngine, CodexAppServerEngine } from '../../src/engines/codex/index.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { IN_MEMORY_THREAD as THREAD, inMemoryCodexServer, type WrittenMessage } from '../support/codex-in-memory-server.js';

async function until(what: string, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !pred(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

/** An app-server that runs each turn until the test ends it (`complete(n)`), and reports `approvalPolicy` on thread/start. */
function server(threadReport: { model?: string; approvalPolicy?: string } = {}) {
  let turns = 0;
  const s = inMemoryCodexServer({
    answer: (m, push) => {
      if (m.method === 'thread/start' && threadReport.approvalPolicy) {
        // The handshake answers thread/start itself; this hook runs first, so answer here with the report instead.
        push({ id: m.id, result: { thread: { id: THREAD, path: null }, model: threadReport.model ?? 'm', approvalPolicy: threadReport.approvalPolicy } });
      }
      if (m.method === 'turn/start') {
        turns += 1;
        const turn = { id: `turn-${turns}`, status: 'inProgress', items: [], error: null };
        push({ id: m.id, result: { turn } });
        push({ method: 'turn/started', params: { threadId: THREAD, turn } });
      }
    },
  });
  const complete = (n: number) => s.push({ method: 'turn/completed', params: { threadId: THREAD, turn: { id: `turn-${n}`, status: 'completed', items: [], error: null } } });
  return { ...s, complete };
}

const paramsOf = (written: WrittenMessage[], method: string) => written.filter((m) => m.method === method).map((m) => m.params ?? {});
const settingsOf = (params: Record<string, unknown>) => ({ model: params['model'], approvalPolicy: params['approvalPolicy'] });

async function started(s: ReturnType<typeof server>, spec: { options?: Record<string, unknown>; model?: string; permissionMode?: string } = {}) {
  const engine = new CodexAppServerEngine(realEngineContext(), { launcher: s.launcher, bin: '/never-run', env: {} });
  const events: AgentEvent[] = [];
  engine.onEvent((e) => events.push(e));
  await engine.start({ gen: 1, mode: 'remote', workDir: '/tmp', options: spec.options ?? {}, ...(spec.model && { model: spec.model }), ...(spec.permissionMode && { permissionMode: spec.permissionMode }) });
  return { engine, events };
}

describe('codex app-server: runtime settings', () => {
  it('declares both capabilities; mcp-server declares neither (codex-reply takes only threadId and prompt)', () => {
    expect(codexEngine().capabilities).toMatchObject({ setModel: true, setPermissionMode: true });
    expect(codexMcpEngine().capabilities).toMatchObject({ setModel: false, setPermissionMode: false });
  });

  it('the start spec wins over engineOptions in thread/start', async () => {
    const s = server();
    const { engine, events } = await started(s, { options: { model: 'gpt-5.4', approvalPolicy: 'never' }, model: 'gpt-5.5', permissionMode: 'untrusted' });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    expect(settingsOf(paramsOf(s.written, 'thread/start')[0]!)).toEqual({ model: 'gpt-5.5', approvalPolicy: 'untrusted' });
    await engine.stop();
  });

  it('a change goes with the next turn/start, not into the running turn; later turns carry nothing (the thread keeps it)', async () => {
    const s = server();
    const { engine, events } = await started(s, { options: { model: 'gpt-5.4' } });
    // A change before ready waits for the first turn too.
    await engine.configure({ permissionMode: 'on-request' });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.send({ localId: 'm1', text: 'one' });
    await until('turn 1', () => paramsOf(s.written, 'turn/start').length === 1);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[0]!)).toEqual({ model: undefined, approvalPolicy: 'on-request' });

    // Mid-turn: the running turn is not touched; the message queued behind it takes the change.
    await engine.configure({ model: 'gpt-5.5' });
    await engine.send({ localId: 'm2', text: 'two' });
    await new Promise((r) => setTimeout(r, 20));
    expect(paramsOf(s.written, 'turn/start')).toHaveLength(1);
    s.complete(1);
    await until('turn 2', () => paramsOf(s.written, 'turn/start').length === 2);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[1]!)).toEqual({ model: 'gpt-5.5', approvalPolicy: undefined });
    s.complete(2);
    await until('turn 2 done', () => events.filter((e) => e.type === 'turn_complete').length === 2);

    // Nothing changed since: the next turn carries nothing. Then null goes back to engineOptions.
    await engine.send({ localId: 'm3', text: 'three' });
    await until('turn 3', () => paramsOf(s.written, 'turn/start').length === 3);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[2]!)).toEqual({ model: undefined, approvalPolicy: undefined });
    s.complete(3);
    await until('turn 3 done', () => events.filter((e) => e.type === 'turn_complete').length === 3);
    await engine.configure({ model: null });
    await engine.send({ localId: 'm4', text: 'four' });
    await until('turn 4', () => paramsOf(s.written, 'turn/start').length === 4);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[3]!)).toEqual({ model: 'gpt-5.4', approvalPolicy: undefined });
    s.complete(4);
    await until('turn 4 done', () => events.filter((e) => e.type === 'turn_complete').length === 4);
    await engine.stop();
  });

  it('null without engineOptions goes back to what the thread started with; unknown (a chosen start) is a warning, not a guess', async () => {
    const s = server({ model: 'thread-default', approvalPolicy: 'on-request' });
    const { engine, events } = await started(s);
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.configure({ model: null, permissionMode: null });
    await engine.send({ localId: 'm1', text: 'one' });
    await until('turn 1', () => paramsOf(s.written, 'turn/start').length === 1);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[0]!)).toEqual({ model: 'thread-default', approvalPolicy: 'on-request' });
    s.complete(1);
    await until('turn 1 done', () => events.some((e) => e.type === 'turn_complete'));
    await engine.stop();

    const t = server({ model: 'chosen', approvalPolicy: 'never' });
    const second = await started(t, { model: 'chosen', permissionMode: 'never' });
    await until('ready', () => second.events.some((e) => e.type === 'ready'));
    await second.engine.configure({ model: null });
    await second.engine.send({ localId: 'm1', text: 'one' });
    await until('turn 1', () => paramsOf(t.written, 'turn/start').length === 1);
    expect(settingsOf(paramsOf(t.written, 'turn/start')[0]!)).toEqual({ model: undefined, approvalPolicy: undefined });
    expect(second.events.filter((e) => e.type === 'warning')).toEqual([expect.objectContaining({ code: 'setting_deferred', message: expect.stringContaining('model') })]);
    t.complete(1);
    await until('turn 1 done', () => second.events.some((e) => e.type === 'turn_complete'));
    await second.engine.stop();
  });

  it('an approval policy app-server does not know is refused (INVALID_INPUT, the known ones named) before anything is sent', async () => {
    const s = server();
    const { engine, events } = await started(s);
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await expect(engine.configure({ permissionMode: 'plan' })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('untrusted, on-request, never') });
    expect(() => codexEngine().validateSettings!({ permissionMode: 'acceptEdits' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => codexEngine().validateSettings!({ permissionMode: 'untrusted', model: 'anything' })).not.toThrow();
    await engine.send({ localId: 'm1', text: 'one' });
    await until('turn 1', () => paramsOf(s.written, 'turn/start').length === 1);
    expect(settingsOf(paramsOf(s.written, 'turn/start')[0]!)).toEqual({ model: undefined, approvalPolicy: undefined });
    s.complete(1);
    await until('turn 1 done', () => events.some((e) => e.type === 'turn_complete'));
    await engine.stop();
  });
});
