/**
 * The `codex` engine (app-server) against the REAL pinned codex 0.169.0 binary and our mock
 * Responses API on 127.0.0.1, with a temp CODEX_HOME per test (test/support/codex-hermetic.ts).
 * Scenarios: text turns on one thread (per-turn usage), shell approval allowed and denied, patch
 * approval, interrupt mid-turn, resume after the server was killed; no process survives.
 * Set UPDATE_CODEX_FIXTURES=1 to re-record test/fixtures/codex/app-server-*.jsonl (replayed by
 * test/unit/codex-replay.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine, CodexAppServerEngine, type CodexAppServerEngineOptions } from '../../src/engines/codex/index.js';
import { applyPatchCall, execCommandCall, lastUserText, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import type { HermeticCodex } from '../support/codex-hermetic.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { CodexEngineBench } from '../support/codex-engine-bench.js';
import { codexDiesDuringCommand, stopDuringCommand } from '../support/codex-stop-scenario.js';

const VERSION = '0.169.0';

describe('codex engine (app-server) with the real codex 0.169.0', () => {
  let bench: CodexEngineBench<CodexAppServerEngine>;
  let mock: OpenAIResponsesMock;
  let root: string;
  let h: HermeticCodex;

  beforeEach(async () => {
    bench = await CodexEngineBench.open({ prefix: 'ase-codex-as-', fixturePrefix: 'app-server', engine: 'codex', codexVersion: VERSION });
    ({ mock, root, h } = bench);
  });

  afterEach(() => bench.close());

  function launch(gen: number, options: CodexAppServerEngineOptions = {}, resumeToken?: string) {
    return bench.launch((defaults) => new CodexAppServerEngine(realEngineContext(), { ...defaults, ...options }), gen, resumeToken);
  }

  it('runs two text turns on one thread with per-turn usage, then stops cleanly', async () => {
    const { engine, log, traffic, started } = launch(1);
    await log.waitFor('ready');
    const readyMs = Math.round(performance.now() - started);

    mock.enqueue({ kind: 'text', text: 'Hello from the mock.', reasoning: 'considering', usage: { inputTokens: 120, cachedInputTokens: 20 } });
    let mark = log.mark();
    let t = performance.now();
    await engine.send({ localId: 'm1', text: 'first prompt' });
    const tc1 = await log.waitFor('turn_complete', mark);
    const turn1Ms = Math.round(performance.now() - t);
    const identified = log.of('session_identified')[0]!;
    expect(identified.resumeToken).toBe(engine.threadId);
    expect(identified.transcriptPath).toMatch(new RegExp(`rollout-.*-${engine.threadId}\\.jsonl$`));
    expect(log.events.indexOf(identified)).toBeLessThan(log.events.findIndex((e) => e.type === 'message'));
    expect(tc1).toMatchObject({ status: 'completed', usage: { inputTokens: 100, cacheReadTokens: 20, cacheWriteTokens: 0 } });
    expect(tc1.usage.outputTokens).toBeGreaterThan(0);
    const turn1 = log.events.slice(mark);
    expect(turn1.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('')).toBe('Hello from the mock.');
    const messages = turn1.filter((e) => e.type === 'message');
    expect(messages.map((m) => [m.role, m.blocks[0]?.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'thinking'],
      ['assistant', 'text'],
    ]);
    expect(messages[2]!.blocks[0]).toEqual({ type: 'text', text: 'Hello from the mock.' });
    expect(turn1.filter((e) => e.type === 'thinking').map((e) => e.active)).toEqual([true, false]);

    // Second turn on the same thread: its usage is its own request only, not the thread total.
    mark = log.mark();
    t = performance.now();
    await engine.send({ localId: 'm2', text: 'second prompt' });
    const tc2 = await log.waitFor('turn_complete', mark);
    const turn2Ms = Math.round(performance.now() - t);
    expect(tc2).toMatchObject({ status: 'completed', usage: { inputTokens: 100, cacheReadTokens: 0 } });
    expect(log.of('message', mark).at(-1)?.blocks[0]).toEqual({ type: 'text', text: 'Echo: second prompt' });
    expect(mock.responsesRequests().at(-1)!.headers['thread-id']).toBe(engine.threadId);

    await engine.stop();
    expect(log.events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
    expect(new Set(log.events.map((e) => e.gen))).toEqual(new Set([1]));
    expect(engine.invalidEvents).toEqual([]);
    bench.record('text-two-turns', traffic);
    console.log(`[codex app-server] spawn→ready ${readyMs} ms, text turn ${turn1Ms} ms, second turn ${turn2Ms} ms`);
  });

  it('asks for a shell command: allowed runs it, denied does not (turn continues)', async () => {
    const { engine, log, traffic } = launch(1);
    await log.waitFor('ready');
    const allowedFile = join(h.workDir, 'allowed.txt');
    mock.enqueue(execCommandCall(`echo ran > ${allowedFile}; echo printed`, { sandbox_permissions: 'require_escalated', justification: 'need it' }), { kind: 'text', text: 'ran it' });
    let mark = log.mark();
    const t = performance.now();
    await engine.send({ localId: 'm1', text: 'run it' });
    const ask = await log.waitFor('permission_request', mark);
    expect(ask).toMatchObject({ toolName: 'shell', requestId: expect.stringMatching(/^g1-/) });
    expect((ask.input as { command: string }).command).toContain('echo ran >');
    const call = log.of('tool_call', mark)[0]!;
    expect(call).toMatchObject({ callId: ask.callId, toolName: 'shell' });
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    const tc = await log.waitFor('turn_complete', mark);
    const allowMs = Math.round(performance.now() - t);
    expect(tc.status).toBe('completed');
    expect(readFileSync(allowedFile, 'utf8')).toBe('ran\n');
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: ask.callId, status: 'completed', isError: false, output: expect.objectContaining({ exitCode: 0 }) })]);
    expect(((log.of('tool_result', mark)[0]!.output as { output: string }).output)).toContain('printed');

    const deniedFile = join(h.workDir, 'denied.txt');
    mock.enqueue(execCommandCall(`echo ran > ${deniedFile}`, { sandbox_permissions: 'require_escalated', justification: 'need it' }), { kind: 'text', text: 'ok, not run' });
    mark = log.mark();
    await engine.send({ localId: 'm2', text: 'run another' });
    const ask2 = await log.waitFor('permission_request', mark);
    expect(ask2.requestId).not.toBe(ask.requestId);
    await engine.answerPermission(ask2.requestId, { behavior: 'deny', message: 'not this one', interrupt: false });
    const tc2 = await log.waitFor('turn_complete', mark);
    expect(tc2.status).toBe('completed');
    expect(existsSync(deniedFile)).toBe(false);
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: ask2.callId, status: 'denied', isError: true })]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toEqual({ type: 'text', text: 'ok, not run' });
    // Each call reported once (item/started + approval + item/completed collapse to one call/result).
    expect(log.of('tool_call').map((c) => c.callId)).toEqual([ask.callId, ask2.callId]);
    await engine.stop();
    bench.record('shell-allow-deny', traffic, { decisions: [{ behavior: 'allow' }, { behavior: 'deny', message: 'not this one', interrupt: false }] });
    console.log(`[codex app-server] shell turn with approval ${allowMs} ms`);
  });

  it('asks for a patch outside the writable roots (read-only sandbox) and applies it when allowed', async () => {
    const { engine, log, traffic } = launch(1, { sandbox: 'read-only' });
    await log.waitFor('ready');
    const target = join(h.workDir, 'patched.txt');
    mock.enqueue(applyPatchCall(`*** Begin Patch\n*** Add File: ${target}\n+hello from patch\n*** End Patch`), { kind: 'text', text: 'patched' });
    const mark = log.mark();
    await engine.send({ localId: 'm1', text: 'patch it' });
    const ask = await log.waitFor('permission_request', mark);
    expect(ask).toMatchObject({ toolName: 'apply_patch', input: { changes: [expect.objectContaining({ path: target })] } });
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    const tc = await log.waitFor('turn_complete', mark);
    expect(tc.status).toBe('completed');
    expect(readFileSync(target, 'utf8')).toBe('hello from patch\n');
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: ask.callId, status: 'completed' })]);
    await engine.stop();
    bench.record('patch-allow', traffic, { decisions: [{ behavior: 'allow' }] });
  });

  it('interrupts a turn mid-stream (turn/interrupt) and takes the next turn', async () => {
    const { engine, log, traffic } = launch(1);
    await log.waitFor('ready');
    mock.enqueue({ kind: 'stall', partialText: 'partial answer' });
    let mark = log.mark();
    const t = performance.now();
    await engine.send({ localId: 'm1', text: 'slow please' });
    await log.waitFor('text_delta', mark);
    await engine.abort();
    const tc = await log.waitFor('turn_complete', mark);
    const abortMs = Math.round(performance.now() - t);
    expect(tc).toMatchObject({ status: 'cancelled', stopReason: 'interrupted' });
    expect(log.of('error', mark)).toEqual([]);

    mark = log.mark();
    await engine.send({ localId: 'm2', text: 'after the interrupt' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    expect(log.of('message', mark).at(-1)?.blocks[0]).toEqual({ type: 'text', text: 'Echo: after the interrupt' });
    await engine.stop();
    bench.record('interrupt', traffic, { abortAfter: 'text_delta' });
    console.log(`[codex app-server] send→cancelled ${abortMs} ms`);
  });

  it('an abort right after send (turn/start answered, turn not started yet) interrupts that turn, not the next', async () => {
    const { engine, log } = launch(1, { interruptTimeoutMs: 5_000 });
    await log.waitFor('ready');
    // The interrupt may land before the model is asked: then the next turn must not get the stall.
    mock.enqueue((req) => (lastUserText(req.body) === 'slow please' ? { kind: 'stall', partialText: 'partial answer' } : { kind: 'text', text: `Echo: ${lastUserText(req.body)}` }));
    let mark = log.mark();
    await engine.send({ localId: 'm1', text: 'slow please' });
    await engine.abort(); // app-server answers turn/start before the turn is active
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'cancelled', stopReason: 'interrupted' });
    expect(engine.skippedInput.filter((s) => /interrupt/.test(s.reason))).toEqual([]);

    // The interrupted turn is over on the server too: the next message is a turn of its own.
    mark = log.mark();
    await engine.send({ localId: 'm2', text: 'after the early abort' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    expect(log.of('message', mark).map((m) => [m.role, m.blocks[0]])).toEqual([
      ['user', { type: 'text', text: 'after the early abort' }],
      ['assistant', { type: 'text', text: 'Echo: after the early abort' }],
    ]);
    await engine.stop();
  });

  it('resumes the thread in a new app-server after the old one was killed (thread/resume)', async () => {
    const first = launch(1);
    await first.log.waitFor('ready');
    let mark = first.log.mark();
    await first.engine.send({ localId: 'm1', text: 'remember the word pineapple' });
    await first.log.waitFor('turn_complete', mark);
    const token = first.log.of('session_identified')[0]!.resumeToken;
    const transcript = first.log.of('session_identified')[0]!.transcriptPath;
    process.kill(-first.engine.pid!, 'SIGKILL');
    const exited = await first.log.waitFor('exited');
    expect(exited.signal).toBe('SIGKILL');
    expect(first.log.of('error').at(-1)).toMatchObject({ kind: 'fatal' });
    // The rollout the real Codex wrote is where checkResume finds it (a host adopting the session,
    // issue 22); a host whose Codex keeps its files elsewhere has none.
    expect(await codexEngine().checkResume!({ resumeToken: token, workDir: h.workDir, engineOptions: { env: h.env } })).toEqual({ ok: true });
    expect(await codexEngine().checkResume!({ resumeToken: token, workDir: h.workDir, engineOptions: {}, env: { HOME: join(root, 'elsewhere') } })).toMatchObject({ ok: false });

    const second = launch(2, {}, token);
    await second.log.waitFor('ready');
    const resumeReadyMs = Math.round(performance.now() - second.started);
    expect(second.log.of('session_identified')[0]).toMatchObject({ resumeToken: token, transcriptPath: transcript });
    mark = second.log.mark();
    await second.engine.send({ localId: 'm2', text: 'what was the word?' });
    const tc = await second.log.waitFor('turn_complete', mark);
    expect(tc).toMatchObject({ status: 'completed', usage: { inputTokens: 100 } });
    // The model saw the earlier turn: the resumed thread carries its history.
    expect(JSON.stringify(mock.responsesRequests().at(-1)!.body.input)).toContain('remember the word pineapple');
    expect(second.log.events.every((e) => e.gen === 2)).toBe(true);
    const rollout = readFileSync(transcript!, 'utf8');
    expect(rollout).toContain('what was the word?');
    await second.engine.stop();
    bench.record('resume-after-kill', second.traffic, { resumeToken: token });
    console.log(`[codex app-server] resume: spawn→ready ${resumeReadyMs} ms`);
  });

  it('reports the thread for resuming only once its rollout exists: none before the first turn, and a thread killed in its first turn resumes', async () => {
    // app-server writes the rollout when the first turn starts; thread/resume of a thread without
    // one fails ("no rollout found"), so a token reported at thread/start could never be resumed.
    const idle = launch(1);
    await idle.log.waitFor('ready');
    await idle.engine.stop();
    expect(idle.log.of('session_identified')).toEqual([]);

    const first = launch(2);
    await first.log.waitFor('ready');
    // Killed before or while the model is asked: the stall is for that request only.
    mock.enqueue((req) => (lastUserText(req.body) === 'the first prompt' ? { kind: 'stall', partialText: 'partial answer' } : { kind: 'text', text: `Echo: ${lastUserText(req.body)}` }));
    await first.engine.send({ localId: 'm1', text: 'the first prompt' });
    const identified = await first.log.waitFor('session_identified');
    expect(identified.resumeToken).toBe(first.engine.threadId);
    process.kill(-first.engine.pid!, 'SIGKILL'); // at once: the turn may not even have recorded its prompt
    await first.log.waitFor('exited');

    const second = launch(3, {}, identified.resumeToken);
    await Promise.race([second.log.waitFor('ready'), second.log.waitFor('exited')]);
    expect(second.log.of('error')).toEqual([]);
    expect(second.log.of('session_identified')).toEqual([expect.objectContaining({ resumeToken: identified.resumeToken, transcriptPath: identified.transcriptPath })]);
    const mark = second.log.mark();
    await second.engine.send({ localId: 'm2', text: 'and the second' });
    expect(await second.log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    await second.engine.stop();
  });

  it('stop() during a running sandboxed command leaves no process behind (codex, bwrap, the command)', () =>
    stopDuringCommand(bench, launch(1, { approvalPolicy: 'never' }), 'codex app-server'));

  it('codex dying by itself during an unsandboxed command leaves nothing behind (the command is reaped)', () =>
    codexDiesDuringCommand(bench, launch(1, { approvalPolicy: 'never', sandbox: 'danger-full-access' })));

  it('fails cleanly with a typed start error when the binary is missing', async () => {
    const { engine, log, startPromise } = launch(1, { bin: join(root, 'no-such-codex') });
    await expect(startPromise).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND', details: { agent: 'codex', looked: [`bin option: ${join(root, 'no-such-codex')} (no such executable file)`] } });
    expect(log.events.map((e) => e.type)).toEqual(['error', 'exited']);
    await engine.stop();
  });
});
