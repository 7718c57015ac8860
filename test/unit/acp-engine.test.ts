/**
 * The acp engine against a scripted in-process agent (FakeAgentProcess through the `spawn`
 * option): the orderings and failure modes seen in the wild (reference "acp.md" §5), hand-made so
 * each one is pinned down on its own.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AcpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import { isAseError } from '../../src/errors.js';
import { FakeAgentProcess, fakeSpawner, handshake, permissionRequest, text, update } from '../support/acp-fake-agent.js';
import { EventLog } from '../support/acp-hermetic.js';
import { realContext } from '../support/acp-scenarios.js';
import type { SpawnSupervisedOptions } from '../../src/engines/transport/process-supervisor.js';
import { rejection } from '../support/async.js';
import { testRunEnv } from '../support/orphan-check.js';
import { findProcesses } from '../support/processes.js';

const SID = 'sess-1';

describe('acp engine (scripted agent)', () => {
  let root: string;
  let agent: FakeAgentProcess;
  let log: EventLog;
  let engine: AcpEngine;
  let spawned: SpawnSupervisedOptions[];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-acp-unit-'));
    agent = new FakeAgentProcess();
    log = new EventLog();
    spawned = [];
  });

  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  async function start(options: AcpEngineOptions = {}, resumeToken?: string): Promise<void> {
    engine = new AcpEngine(realContext(), { command: 'fake-agent', home: join(root, 'home'), spawn: fakeSpawner(agent, spawned), ...options });
    engine.onEvent(log.push);
    await engine.start({ gen: 3, mode: 'remote', workDir: root, options: {}, ...(resumeToken !== undefined && { resumeToken }) });
  }

  async function ready(options: AcpEngineOptions = {}): Promise<void> {
    await start(options);
    await handshake(agent, SID);
    await log.next('ready');
  }

  it('initialize comes first and advertises fs and terminal only when enabled', async () => {
    await start();
    const { initialize, sessionNew } = await handshake(agent);
    expect(initialize.params.clientCapabilities).toEqual({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
    expect(initialize.params.protocolVersion).toBe(1);
    expect(sessionNew.params).toEqual({ cwd: root, mcpServers: [] });
    expect(agent.received.map((m) => m.method)).toEqual(['initialize', 'session/new']);
    await log.next('ready');
    expect(log.events.map((e) => e.type)).toEqual(['session_identified', 'ready']);
    expect(log.events.every((e) => e.gen === 3)).toBe(true);

    const other = new FakeAgentProcess();
    const e2 = new AcpEngine(realContext(), { command: 'x', home: join(root, 'home2'), spawn: fakeSpawner(other), fs: { enabled: true }, terminal: { enabled: true } });
    await e2.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    const init = await other.nextMethod('initialize');
    expect(init.params.clientCapabilities).toEqual({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
    await e2.stop();
  });

  it('builds a scrubbed env with a private HOME; passEnv and env add to it; node presets put their Node first on PATH', async () => {
    process.env['ASE_ACP_TEST_SECRET'] = 'must-not-leak';
    process.env['ASE_ACP_TEST_PASSED'] = 'passed';
    try {
      await start({ passEnv: ['ASE_ACP_TEST_PASSED'], env: { EXTRA: '1' } });
      const env = spawned[0]!.env;
      expect(env['ASE_ACP_TEST_SECRET']).toBeUndefined();
      expect(env['ASE_ACP_TEST_PASSED']).toBe('passed');
      expect(env['EXTRA']).toBe('1');
      expect(env['HOME']).toBe(join(root, 'home'));
      expect(spawned[0]!.file).toBe('fake-agent');
      await engine.stop();

      const agent2 = new FakeAgentProcess();
      const preset = new AcpEngine(realContext(), { preset: 'gemini', env: { PATH: '/usr/bin:/bin' }, home: join(root, 'h3'), spawn: fakeSpawner(agent2, spawned) });
      await preset.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
      const run = spawned[1]!;
      expect(run.file).toBe(process.execPath);
      expect(run.args.at(-1)).toBe('--acp');
      expect(run.env['PATH']).toBe(`${dirname(process.execPath)}:/usr/bin:/bin`);
      expect(run.env['GEMINI_CLI_NO_RELAUNCH']).toBe('true');
      await preset.stop();
    } finally {
      delete process.env['ASE_ACP_TEST_SECRET'];
      delete process.env['ASE_ACP_TEST_PASSED'];
    }
  });

  it('the copilot preset runs the native binary with --acp, updates off, and passes only its own variables', async () => {
    const host = { COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1', GH_TOKEN: 'gh-token', OPENAI_API_KEY: 'sk-not-for-copilot', GITHUB_ACTIONS: 'true' };
    const before = Object.fromEntries(Object.keys(host).map((name) => [name, process.env[name]]));
    Object.assign(process.env, host);
    try {
      const copilot = new AcpEngine(realContext(), { preset: 'copilot', home: join(root, 'h-copilot'), spawn: fakeSpawner(new FakeAgentProcess(), spawned) });
      await copilot.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
      const run = spawned.at(-1)!;
      expect(run.file).toMatch(/@github\/copilot-linux(musl)?-(x64|arm64)\/copilot$/);
      expect(run.args).toEqual(['--acp']);
      expect(run.env).toMatchObject({ COPILOT_AUTO_UPDATE: 'false', COPILOT_PROVIDER_BASE_URL: host.COPILOT_PROVIDER_BASE_URL, GH_TOKEN: 'gh-token' });
      expect(run.env['OPENAI_API_KEY']).toBeUndefined();
      expect(run.env['GITHUB_ACTIONS']).toBeUndefined();
      await copilot.stop();
    } finally {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('the private HOME under the shared temp dir is refused when someone else could have planted files in it', async () => {
    const previous = process.env['TMPDIR'];
    process.env['TMPDIR'] = root;
    const uid = process.getuid!();
    const base = join(root, `ase-acp-${uid}`);
    const attempt = async (): Promise<unknown> => {
      const e = new AcpEngine(realContext(), { command: 'fake-agent', spawn: fakeSpawner(new FakeAgentProcess(), spawned) });
      const events = new EventLog();
      e.onEvent(events.push);
      const error = await rejection(e.start({ gen: 1, mode: 'remote', workDir: root, options: {} }));
      expect(events.events.map((x) => x.type)).toEqual(['error', 'exited']);
      return error;
    };
    try {
      mkdirSync(base, { mode: 0o777 });
      chmodSync(base, 0o777); // world-writable: anyone could have put a config file in it
      expect(String(await attempt())).toMatch(/not private/);
      rmSync(base, { recursive: true });
      mkdirSync(join(root, 'elsewhere'));
      symlinkSync(join(root, 'elsewhere'), base);
      expect(String(await attempt())).toMatch(/not private/);
      rmSync(base);
      if (uid === 0) {
        mkdirSync(join(base, 'custom'), { recursive: true, mode: 0o700 });
        chownSync(join(base, 'custom'), 65534, 65534); // owned by another user
        expect(String(await attempt())).toMatch(/not private/);
        rmSync(base, { recursive: true });
      }
      expect(spawned).toEqual([]);
      // Created fresh, it is ours and private.
      await start({ home: undefined });
      expect(spawned[0]!.env['HOME']).toBe(join(base, 'custom'));
      expect(statSync(base).mode & 0o777).toBe(0o700);
    } finally {
      if (previous === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = previous;
    }
  });

  it('queues prompts: never two session/prompt in flight', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'first' });
    await engine.send({ localId: 'b', text: 'second' });
    const first = await agent.nextMethod('session/prompt');
    expect(first.params.prompt).toEqual([{ type: 'text', text: 'first' }]);
    await new Promise((r) => setTimeout(r, 30));
    expect(agent.received.filter((m) => m.method === 'session/prompt')).toHaveLength(1);
    agent.send(text(SID, 'one'));
    agent.respond(first, { stopReason: 'end_turn' });
    const second = await agent.nextMethod('session/prompt');
    expect(second.params.prompt[0].text).toBe('second');
    agent.respond(second, { stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12, cachedReadTokens: 2 } });
    await log.next('turn_complete', 'second', 5_000, () => log.of('turn_complete').length === 2);
    expect(log.of('turn_complete').map((e) => e.usage)).toEqual([
      { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { inputTokens: 5, outputTokens: 7, cacheReadTokens: 2, cacheWriteTokens: 0 },
    ]);
  });

  it('a turn we cancelled ends cancelled even when the agent says end_turn; pending permissions are answered cancelled after session/cancel', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(0, SID, 'call-1'));
    const ask = await log.next('permission_request');
    expect(ask).toMatchObject({ requestId: 'acp-3-perm-1', callId: 'call-1', toolName: 'execute', input: { command: 'touch x' } });
    await engine.abort();
    const cancel = await agent.next();
    expect(cancel).toMatchObject({ method: 'session/cancel', params: { sessionId: SID } });
    const answer = await agent.next();
    expect(answer).toEqual({ jsonrpc: '2.0', id: 0, result: { outcome: { outcome: 'cancelled' } } });
    agent.respond(prompt, { stopReason: 'end_turn' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled', stopReason: 'end_turn' });
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: 'call-1', status: 'cancelled' })]);
    // A decision arriving afterwards (the session refuses with deny+interrupt) is a no-op.
    await engine.answerPermission(ask.requestId, { behavior: 'deny', interrupt: true });
    expect(agent.received.filter((m) => m.id === 0 && m.method === undefined)).toHaveLength(1);
  });

  it('decide() picks the option BY KIND and never allow_always unless named explicitly', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest('uuid-a', SID, 'c1'));
    let ask = await log.next('permission_request');
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 'uuid-a', result: { outcome: { outcome: 'selected', optionId: 'once' } } });

    agent.send(permissionRequest('uuid-b', SID, 'c2'));
    ask = await log.next('permission_request');
    await engine.answerPermission(ask.requestId, { behavior: 'deny', interrupt: false });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 'uuid-b', result: { outcome: { outcome: 'selected', optionId: 'no' } } });
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: 'c2', status: 'denied', isError: true })]);

    agent.send(permissionRequest('uuid-c', SID, 'c3'));
    ask = await log.next('permission_request');
    await engine.answerPermission(ask.requestId, { behavior: 'allow', updatedPermissions: [{ kind: 'allow_always' }] });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 'uuid-c', result: { outcome: { outcome: 'selected', optionId: 'always' } } });
    agent.respond(prompt, { stopReason: 'end_turn' });
    await log.next('turn_complete');
  });

  it('an allow the options cannot express cancels the turn (the agent is still answered) and rejects', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    const request = permissionRequest(7, SID, 'c1');
    request.params.options = [{ optionId: 'always', name: 'Always', kind: 'allow_always' }, { optionId: 'no', name: 'No', kind: 'reject_once' }];
    agent.send(request);
    const ask = await log.next('permission_request');
    const error = await rejection(engine.answerPermission(ask.requestId, { behavior: 'allow' }));
    expect(isAseError(error, 'INVALID_INPUT')).toBe(true);
    expect(await agent.next()).toMatchObject({ method: 'session/cancel' });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 7, result: { outcome: { outcome: 'cancelled' } } });
    agent.respond(prompt, { stopReason: 'cancelled' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled' });
  });

  it('an allow with a changed updatedInput is refused (ACP cannot change a tool input): the original never runs', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(4, SID, 'c1'));
    let ask = await log.next('permission_request');
    const error = await rejection(engine.answerPermission(ask.requestId, { behavior: 'allow', updatedInput: { command: 'ls -la' } }));
    expect(isAseError(error, 'INVALID_INPUT')).toBe(true);
    expect(await agent.next()).toMatchObject({ method: 'session/cancel' });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 4, result: { outcome: { outcome: 'cancelled' } } });
    agent.respond(prompt, { stopReason: 'cancelled' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled' });
    // The same input handed back unchanged is a plain allow.
    await engine.send({ localId: 'b', text: 'again' });
    const next = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(5, SID, 'c2'));
    ask = await log.next('permission_request', 'second ask', 5_000, (e) => e.callId === 'c2');
    await engine.answerPermission(ask.requestId, { behavior: 'allow', updatedInput: { command: 'touch x' } });
    expect(await agent.next((m) => m.id === 5)).toEqual({ jsonrpc: '2.0', id: 5, result: { outcome: { outcome: 'selected', optionId: 'once' } } });
    agent.respond(next, { stopReason: 'end_turn' });
    await log.next('turn_complete');
  });

  it('deny with interrupt (a timed-out prompt) cancels the turn', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(1, SID, 'c1'));
    const ask = await log.next('permission_request');
    await engine.answerPermission(ask.requestId, { behavior: 'deny', interrupt: true });
    expect(await agent.next()).toMatchObject({ method: 'session/cancel' });
    expect(await agent.next()).toEqual({ jsonrpc: '2.0', id: 1, result: { outcome: { outcome: 'cancelled' } } });
    agent.respond(prompt, { stopReason: 'cancelled' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled' });
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: 'c1', status: 'cancelled' })]);
  });

  it('a permission still open when its turn ends is answered cancelled after the grace period; so is a late one', async () => {
    await ready({ permissionGraceMs: 50 });
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(1, SID, 'c1'));
    await log.next('permission_request');
    agent.respond(prompt, { stopReason: 'end_turn' });
    await log.next('turn_complete');
    expect(engine.pendingPermissions()).toHaveLength(1);
    expect(await agent.next((m) => m.id === 1)).toEqual({ jsonrpc: '2.0', id: 1, result: { outcome: { outcome: 'cancelled' } } });
    expect(engine.pendingPermissions()).toEqual([]);
    // After the turn (claude-agent-acp desync): still reported, still answered.
    agent.send(permissionRequest(2, SID, 'c2'));
    expect(await log.next('permission_request')).toMatchObject({ callId: 'c2' });
    expect(await agent.next((m) => m.id === 2)).toEqual({ jsonrpc: '2.0', id: 2, result: { outcome: { outcome: 'cancelled' } } });
    expect(engine.lateMessages).toBe(1);
  });

  it('timeouts beyond what a timer can hold (about 24.8 days) mean that long, not 1 ms', async () => {
    await ready({ permissionGraceMs: 2 ** 31, cancelTimeoutMs: 2 ** 32, sessionTimeoutMs: 2 ** 40 });
    await engine.send({ localId: 'a', text: 'go' });
    let prompt = await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(1, SID, 'c1'));
    const ask = await log.next('permission_request');
    agent.respond(prompt, { stopReason: 'end_turn' });
    await log.next('turn_complete');
    await new Promise((r) => setTimeout(r, 100));
    expect(engine.pendingPermissions()).toEqual([ask.requestId]); // still open for its (long) grace period
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    await engine.send({ localId: 'b', text: 'again' });
    prompt = await agent.nextMethod('session/prompt');
    await engine.abort();
    await new Promise((r) => setTimeout(r, 100));
    expect(log.of('error')).toEqual([]); // the cancel did not time out at once
    agent.respond(prompt, { stopReason: 'cancelled' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled' });
    const mode = engine.setMode('plan');
    const request = await agent.nextMethod('session/set_mode');
    await new Promise((r) => setTimeout(r, 50));
    agent.respond(request, {});
    await mode;
  });

  it('tolerates permission-before-tool_call, updates for unknown ids, repeated tool_call and updates after the prompt response', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send(update(SID, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '' } }));
    agent.send(text(SID, 'Let me run it. '));
    agent.send(permissionRequest(0, SID, 'codex-1')); // codex: permission before its tool_call
    const ask = await log.next('permission_request');
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    agent.send(update(SID, { sessionUpdate: 'tool_call', toolCallId: 'codex-1', title: 'touch x', kind: 'execute', status: 'in_progress', rawInput: { command: 'touch x' } }));
    agent.send(update(SID, { sessionUpdate: 'tool_call', toolCallId: 'codex-1', title: 'touch x', kind: 'execute', status: 'in_progress', rawInput: { command: 'touch x' } }));
    agent.send(update(SID, { sessionUpdate: 'tool_call_update', toolCallId: 'codex-1', status: 'completed', rawOutput: { exit: 0 } }));
    agent.send(update(SID, { sessionUpdate: 'tool_call_update', toolCallId: 'gemini-9', status: 'completed', title: 'read', kind: 'read' })); // never seen before
    agent.send(update(SID, { sessionUpdate: 'tool_call_update', toolCallId: 'codex-1', status: 'failed' })); // a second result: absorbed
    agent.send(update(SID, { sessionUpdate: 'brand_new_variant', whatever: 1 }));
    agent.respond(prompt, { stopReason: 'end_turn' });
    agent.send(text(SID, 'late words')); // after the response: attached to the last turn
    await log.next('text_delta', 'late delta', 5_000, (e) => e.text === 'late words');
    const types = log.events.map((e) => (e.type === 'tool_call' || e.type === 'tool_result' ? `${e.type}:${e.callId}` : e.type));
    expect(types).toEqual([
      'session_identified',
      'ready',
      'text_delta',
      'message',
      'tool_call:codex-1',
      'permission_request',
      'tool_result:codex-1',
      'tool_call:gemini-9',
      'tool_result:gemini-9',
      'turn_complete',
      'text_delta',
    ]);
    expect(log.of('tool_result').find((e) => e.callId === 'codex-1')).toMatchObject({ status: 'completed', output: { rawOutput: { exit: 0 } } });
    expect(engine.skipped).toEqual([expect.objectContaining({ reason: 'unknown session/update "brand_new_variant"' })]);
    expect(engine.lateMessages).toBe(1);
    expect(log.of('error')).toEqual([]);
    // Updates are read in the wire tap; none of them is "unhandled" (nor kept there).
    expect(engine.unhandled).toEqual([]);
  });

  it('late text after turn_complete becomes its own message: before the next turn starts, or at exit', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    let prompt = await agent.nextMethod('session/prompt');
    agent.send(text(SID, 'first'));
    agent.respond(prompt, { stopReason: 'end_turn' });
    agent.send(text(SID, 'late words'));
    await log.next('text_delta', 'late delta', 5_000, (e) => e.text === 'late words');
    await engine.send({ localId: 'b', text: 'again' });
    prompt = await agent.nextMethod('session/prompt');
    agent.send(text(SID, 'second'));
    agent.respond(prompt, { stopReason: 'end_turn' });
    await log.next('turn_complete', 'second turn', 5_000, () => log.of('turn_complete').length === 2);
    agent.send(update(SID, { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }));
    agent.send(text(SID, 'last words'));
    agent.send(update(SID, { sessionUpdate: 'tool_call', toolCallId: 'late-1', title: 'ls', kind: 'execute', status: 'in_progress' }));
    await log.next('tool_call', 'late tool call');
    await engine.stop();
    // Nothing can finish it after the exit: it ends cancelled, once.
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: 'late-1', status: 'cancelled' })]);
    const texts = (e: { blocks: { type: string; text?: string }[] }): string => e.blocks.map((b) => b.text ?? '').join('|');
    expect(log.of('message').map(texts)).toEqual(['first', 'late words', 'second', 'hmm|last words']);
    // The late message is reported before the next turn's prompt is answered, not inside it.
    const order = log.events.map((e) => (e.type === 'message' ? `message:${texts(e)}` : e.type)).filter((t) => t.startsWith('message') || t === 'turn_complete');
    expect(order).toEqual(['message:first', 'turn_complete', 'message:late words', 'message:second', 'turn_complete', 'message:hmm|last words']);
    expect(new Set(log.of('message').map((e) => e.id)).size).toBe(4);
    expect(log.of('thinking').at(-1)).toMatchObject({ active: false });
  });

  it('keeps only the newest skipped and unhandled inputs: a chatty agent cannot grow them for the whole session', async () => {
    await ready();
    for (let i = 0; i < 520; i++) {
      agent.send(update(SID, { sessionUpdate: 'brand_new_variant', i }));
      agent.send({ jsonrpc: '2.0', method: '_vendor/status', params: { i } });
    }
    agent.send(text(SID, 'marker'));
    await log.next('text_delta', 'marker', 10_000, (e) => e.text === 'marker');
    await new Promise((r) => setTimeout(r, 50)); // the SDK dispatches the fallbacks asynchronously
    expect(engine.skipped).toHaveLength(500);
    expect(engine.skipped.at(-1)).toMatchObject({ raw: { i: 519 } });
    expect(engine.unhandled).toHaveLength(500);
    expect(engine.unhandled.at(-1)).toMatchObject({ reason: 'unhandled notification _vendor/status', raw: { i: 519 } });
  });

  it('a malformed permission request is answered with an error, never left hanging', async () => {
    await ready();
    agent.send({ jsonrpc: '2.0', id: 9, method: 'session/request_permission', params: { sessionId: SID, options: [] } });
    const answer = await agent.next((m) => m.id === 9);
    expect(answer.error.code).toBe(-32602);
    agent.send({ jsonrpc: '2.0', id: 10, method: 'vendor/unknown_request', params: {} });
    expect((await agent.next((m) => m.id === 10)).error.code).toBe(-32601);
    agent.send({ jsonrpc: '2.0', id: 11, method: 'fs/read_text_file', params: { sessionId: SID, path: join(root, 'x') } });
    expect((await agent.next((m) => m.id === 11)).error.code).toBe(-32601); // fs not enabled
  });

  it('fs requests for another session are refused', async () => {
    await ready({ fs: { enabled: true } });
    agent.send({ jsonrpc: '2.0', id: 4, method: 'fs/read_text_file', params: { sessionId: 'someone-else', path: join(root, 'x') } });
    expect((await agent.next((m) => m.id === 4)).error).toMatchObject({ code: -32602 });
    agent.send({ jsonrpc: '2.0', id: 5, method: 'fs/write_text_file', params: { sessionId: SID, path: join(root, 'ok.txt'), content: 'hi' } });
    expect(await agent.next((m) => m.id === 5)).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
  });

  it('a prompt error fails the turn with a classified error; the next turn works', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    agent.send({ jsonrpc: '2.0', id: prompt.id, error: { code: -32603, message: 'Internal error', data: { message: 'stream disconnected: 429 Too Many Requests' } } });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'failed' });
    expect(log.of('error')).toEqual([expect.objectContaining({ kind: 'rate_limited', retryable: true })]);
    expect(log.of('error')[0]!.message).toContain('-32603');
    await engine.send({ localId: 'b', text: 'again' });
    const next = await agent.nextMethod('session/prompt');
    agent.respond(next, { stopReason: 'end_turn' });
    expect(await log.next('turn_complete')).toMatchObject({ status: 'completed' });
  });

  it('the agent exiting mid-turn: error with the exit status, failed turn, open permission resolved, exited', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    await agent.nextMethod('session/prompt');
    agent.send(permissionRequest(0, SID, 'c1'));
    await log.next('permission_request');
    agent.exit({ code: 3, signal: null });
    const exited = await log.next('exited');
    expect(exited).toMatchObject({ code: 3, signal: null, reason: 'process exited' });
    expect(log.events.slice(-4).map((e) => e.type)).toEqual(['tool_result', 'error', 'turn_complete', 'exited']);
    expect(log.of('error')[0]).toMatchObject({ kind: 'fatal', retryable: false });
    expect(log.of('error')[0]!.message).toContain('code 3');
    expect(log.of('turn_complete')).toEqual([expect.objectContaining({ status: 'failed' })]);
    expect(engine.pendingPermissions()).toEqual([]);
    await expect(engine.send({ localId: 'b', text: 'x' })).rejects.toThrow(/not running/);
  });

  it('an agent that dies on its own leaves nothing behind: its setsid children are gone by the time exited is reported', async () => {
    // A real process standing in for the agent: it starts a child in its own session (as tool
    // commands do), then dies without being asked.
    const script = `require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }); setTimeout(() => process.exit(3), 600);`;
    engine = new AcpEngine(realContext(), { command: process.execPath, args: ['-e', script], home: join(root, 'home'), env: { ...testRunEnv(), ASE_ACP_CRASH_MARK: root } });
    engine.onEvent(log.push);
    await engine.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    const exited = await log.next('exited');
    expect(exited).toMatchObject({ code: 3 });
    const left = findProcesses((proc) => proc.environ().split('\0').includes(`ASE_ACP_CRASH_MARK=${root}`) && !/\) [ZX] /.test(proc.stat()));
    try {
      expect(left).toEqual([]);
    } finally {
      for (const pid of left) process.kill(pid, 'SIGKILL');
    }
  });

  it('a cancel the agent never completes: the turn ends cancelled after cancelTimeoutMs and the agent is stopped', async () => {
    await ready({ cancelTimeoutMs: 50 });
    await engine.send({ localId: 'a', text: 'go' });
    await agent.nextMethod('session/prompt');
    await engine.abort();
    expect(await log.next('turn_complete')).toMatchObject({ status: 'cancelled' });
    expect(log.of('error')).toEqual([expect.objectContaining({ kind: 'protocol', retryable: true })]);
    expect(await log.next('exited')).toMatchObject({ reason: 'cancel timed out' });
  });

  it('stop() mid-turn cancels the turn first, then stops the process', async () => {
    await ready();
    await engine.send({ localId: 'a', text: 'go' });
    const prompt = await agent.nextMethod('session/prompt');
    const stopping = engine.stop();
    expect(await agent.next()).toMatchObject({ method: 'session/cancel' });
    agent.respond(prompt, { stopReason: 'cancelled' });
    await stopping;
    expect(log.events.slice(-2)).toEqual([expect.objectContaining({ type: 'turn_complete', status: 'cancelled' }), expect.objectContaining({ type: 'exited', reason: 'stopped' })]);
    expect(log.of('error')).toEqual([]);
  });

  it('an initialize error is reported (with the JSON-RPC code) and the agent stopped', async () => {
    await start();
    const init = await agent.nextMethod('initialize');
    agent.send({ jsonrpc: '2.0', id: init.id, error: { code: -32000, message: 'Authentication required' } });
    const exited = await log.next('exited');
    expect(exited.reason).toBe('start-up failed');
    expect(log.of('error')).toEqual([expect.objectContaining({ kind: 'auth', retryable: false })]);
    expect(log.of('error')[0]!.message).toContain('-32000');
    expect(log.of('ready')).toEqual([]);
  });

  it('session/load: replayed updates go to history, not to the live stream; loading needs loadSession', async () => {
    await start({}, 'old-session');
    const init = await agent.nextMethod('initialize');
    agent.respond(init, { protocolVersion: 1, agentCapabilities: { loadSession: true } });
    const load = await agent.nextMethod('session/load');
    expect(load.params).toEqual({ sessionId: 'old-session', cwd: root, mcpServers: [] });
    agent.send(update('old-session', { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'remember pineapple' } }));
    agent.send(text('old-session', 'I will.'));
    agent.send(update('old-session', { sessionUpdate: 'tool_call', toolCallId: 'old-1', title: 'ls', kind: 'execute', status: 'completed' }));
    agent.respond(load, {});
    agent.send(update('old-session', { sessionUpdate: 'available_commands_update', availableCommands: [] }));
    await log.next('ready');
    // The live commands update (after the load response) reaches the session; the replayed history does not.
    expect(log.events.map((e) => e.type)).toEqual(['available_commands', 'session_identified', 'ready']);
    expect(log.of('session_identified')[0]!.resumeToken).toBe('old-session');
    expect(engine.history.map((e) => e.type)).toEqual(['message', 'message', 'tool_call', 'tool_result']);
    expect(engine.history[0]).toMatchObject({ type: 'message', role: 'user', blocks: [{ type: 'text', text: 'remember pineapple' }] });
    expect(engine.history[1]).toMatchObject({ type: 'message', role: 'assistant', blocks: [{ type: 'text', text: 'I will.' }] });
    expect(engine.info.availableCommands).toEqual([]);
  });

  it('session/load failing (or unsupported) falls back to session/new with a protocol error event', async () => {
    await start({}, 'gone-session');
    const init = await agent.nextMethod('initialize');
    agent.respond(init, { protocolVersion: 1, agentCapabilities: {} });
    const sessionNew = await agent.nextMethod('session/new');
    agent.respond(sessionNew, { sessionId: 'fresh' });
    await log.next('ready');
    expect(log.of('error')).toEqual([expect.objectContaining({ kind: 'protocol', retryable: true })]);
    expect(log.of('session_identified')[0]!.resumeToken).toBe('fresh');
  });

  it('answers sends before ready after the handshake, and rejects calls after stop', async () => {
    await start();
    await engine.send({ localId: 'early', text: 'queued before ready' });
    await handshake(agent, SID);
    const prompt = await agent.nextMethod('session/prompt');
    expect(prompt.params.prompt[0].text).toBe('queued before ready');
    agent.respond(prompt, { stopReason: 'end_turn' });
    await log.next('turn_complete');
    await engine.stop();
    await expect(engine.abort()).rejects.toThrow(/not running/);
    expect(log.events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
  });

  it('an fs or terminal root that does not exist is a start failure reported as error + exited', async () => {
    for (const options of [{ fs: { enabled: true, extraRoots: [join(root, 'missing')] } }, { terminal: { enabled: true, extraRoots: [join(root, 'missing')] } }]) {
      const e = new AcpEngine(realContext(), { command: 'x', home: join(root, 'home'), spawn: fakeSpawner(new FakeAgentProcess(), spawned), ...options });
      const events = new EventLog();
      e.onEvent(events.push);
      const error = await rejection(e.start({ gen: 1, mode: 'remote', workDir: root, options: {} }));
      expect(isAseError(error, 'INVALID_OPTIONS')).toBe(true);
      expect(events.events.map((x) => x.type)).toEqual(['error', 'exited']);
    }
    expect(spawned).toEqual([]);
  });

  it('options from spec.options win over the factory and are validated', async () => {
    engine = new AcpEngine(realContext(), { command: 'x', spawn: fakeSpawner(agent, spawned) });
    engine.onEvent(log.push);
    await expect(engine.start({ gen: 1, mode: 'remote', workDir: root, options: { fs: { enabled: 'yes' } } })).rejects.toThrow(/fs.enabled/);
    expect(log.events.map((e) => e.type)).toEqual(['error', 'exited']);
  });
});
