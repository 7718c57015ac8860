/**
 * ClaudeEngine failure paths against a tiny scripted stand-in for the CLI (a node script speaking
 * just enough stream-json): start failures, EOF without a result, an over-long line, unsupported
 * control requests, stop. The happy paths run against the real CLI in test/real-cli.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, ClaudeEngine } from '../../src/engines/claude/index.js';
import type { EngineContext } from '../../src/engines/core/engine.js';
import { ACTIVITY_INTERVAL_MS, type AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/engine-context.js';

const SCRIPT = String.raw`
const mode = process.env.FAKE_MODE ?? 'ok';
// The engine's version probe runs it with --version in its own cwd: only a real start notes its argv.
if (!process.argv.includes('--version')) require('node:fs').writeFileSync('argv.json', JSON.stringify(process.argv.slice(2)));
let buf = '';
const out = (m) => process.stdout.write(JSON.stringify(m) + '\n');
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
    require('node:fs').appendFileSync('stdin.jsonl', line + '\n');
    const m = JSON.parse(line);
    if (m.type === 'control_request' && m.request.subtype === 'initialize') {
      if (mode === 'no-init') { process.stderr.write('cannot initialize\n'); process.exit(2); }
      out({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: {} } });
    } else if (m.type === 'control_request' && (m.request.subtype === 'set_permission_mode' || m.request.subtype === 'set_model')) {
      if (mode === 'silent-control') return;
      if (mode === 'slow-control' && !m.slow) {
        // Answers 300 ms later (like the CLI probing a new model first), and notes when it did.
        setTimeout(() => {
          require('node:fs').appendFileSync('stdin.jsonl', JSON.stringify({ answered: m.request.subtype }) + '\n');
          process.stdin.emit('data', JSON.stringify({ ...m, slow: true }) + '\n');
        }, 300);
        continue; // the lines after it are read now
      }
      if (m.request.subtype === 'set_model' && m.request.model === 'refused-model') {
        out({ type: 'control_response', response: { subtype: 'error', request_id: m.request_id, error: 'model refused-model not found' } });
      } else if (m.request.subtype === 'set_permission_mode' && m.request.mode === 'nonsense') {
        out({ type: 'control_response', response: { subtype: 'error', request_id: m.request_id, error: 'Invalid permission mode: nonsense' } });
      } else if (m.request.subtype === 'set_permission_mode') {
        out({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: { mode: m.request.mode } } });
        out({ type: 'system', subtype: 'status', status: null, permissionMode: m.request.mode });
      } else {
        out({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: { model: m.request.model ?? 'default-model' } } });
      }
    } else if (m.type === 'control_response') {
      out({ type: 'echo', got: m });
    } else if (m.type === 'user') {
      out({ type: 'system', subtype: 'init', session_id: 'sess-1', cwd: process.cwd() });
      out({ type: 'control_request', request_id: 'hook-1', request: { subtype: 'hook_callback', callback_id: 'x' } });
      if (mode === 'crash') { process.stderr.write('boom: something broke\n'); setTimeout(() => process.exit(3), 50); return; }
      if (mode === 'crash-with-child') {
        // Like a Bash tool command: its own session (setsid), still running when the CLI dies.
        const child = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
        require('node:fs').writeFileSync('child.pid', String(child.pid));
        setTimeout(() => process.exit(3), 600);
        return;
      }
      if (mode === 'long') { process.stdout.write('x'.repeat(5000) + '\n'); return; }
      if (mode === 'keepalive') for (let i = 0; i < 12; i++) out({ type: 'keep_alive' });
      if (mode === 'silent-tool') {
        // The real CLI prints nothing while a tool runs.
        out({ type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'make' } }] } });
        setTimeout(() => {
          out({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'built', is_error: false }] } });
          setTimeout(() => out({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', total_cost_usd: 0.1, usage: {} }), 1500);
        }, 2500);
        return;
      }
      out({ type: 'totally_new', x: 1 });
      process.stdout.write('not json at all\n');
      out({ type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', terminal_reason: 'completed', total_cost_usd: 0.5, usage: { input_tokens: 1, output_tokens: 1 } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
`;

const context: EngineContext = realEngineContext();

function waitFor(events: AgentEvent[], pred: (e: AgentEvent) => boolean, ms = 10_000): Promise<AgentEvent> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const poll = () => {
      const hit = events.find(pred);
      if (hit) return resolve(hit);
      if (Date.now() > deadline) return reject(new Error(`timed out; events: ${events.map((e) => e.type).join(',')}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

describe('ClaudeEngine (scripted CLI stand-in)', () => {
  let dir: string;
  let bin: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ase-claude-unit-'));
    bin = join(dir, 'fake-claude');
    writeFileSync(bin, `#!${process.execPath}\n${SCRIPT}`);
    chmodSync(bin, 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function engine(mode: string, extra: { maxLineBytes?: number } = {}) {
    const e = new ClaudeEngine({ ...context, bin }, { env: { FAKE_MODE: mode }, shutdown: { stdinGraceMs: 500, termGraceMs: 500, killWaitMs: 500 }, ...extra });
    const events: AgentEvent[] = [];
    e.onEvent((ev) => events.push(ev));
    return { e, events };
  }

  it('declares its capabilities', () => {
    const f = claudeEngine();
    expect(f.name).toBe('claude');
    expect(f.capabilities).toMatchObject({ streamingInput: true, permissions: true, interrupt: true, resume: true, cost: true, localMode: true, transcriptTail: false, setModel: true, setPermissionMode: true });
  });

  it('runs a turn: ready, session_identified, skips junk, answers unsupported control requests, stops', async () => {
    const { e, events } = engine('ok');
    await e.start({ gen: 3, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'hi' });
    const done = await waitFor(events, (ev) => ev.type === 'turn_complete');
    expect(done).toMatchObject({ status: 'completed', usage: { costUsd: 0.5 } });
    expect(events.map((ev) => ev.type)).toEqual(['ready', 'session_identified', 'turn_complete']);
    expect(events.every((ev) => ev.gen === 3)).toBe(true);
    // The stand-in echoes our answer to its hook_callback as an (unknown, skipped) `echo` line.
    const deadline = Date.now() + 5000;
    while (!e.skipped.some((s) => (s.raw as { type?: string }).type === 'echo') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const echo = e.skipped.find((s) => (s.raw as { type?: string }).type === 'echo')!.raw as { got: unknown };
    expect(echo.got).toEqual({ type: 'control_response', response: { subtype: 'error', request_id: 'hook-1', error: 'Unsupported control request subtype: hook_callback' } });
    expect(e.skipped.map((s) => s.reason)).toEqual(
      expect.arrayContaining([expect.stringContaining('totally_new'), expect.stringContaining('not JSON'), expect.stringContaining('echo')]),
    );
    await e.stop();
    expect(events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
    await e.stop(); // idempotent
    await expect(e.send({ localId: 'l2', text: 'late' })).rejects.toMatchObject({ code: 'ENGINE_NOT_RUNNING' });
  });

  it('keep-alive lines reach the session as throttled `activity` (the stall watchdog counts them)', async () => {
    // A clock that moves 300 ms per reading makes the throttling deterministic.
    let fakeNow = 1_000_000;
    const e = new ClaudeEngine({ ...context, now: () => (fakeNow += 300), bin }, { env: { FAKE_MODE: 'keepalive' }, shutdown: { stdinGraceMs: 500, termGraceMs: 500, killWaitMs: 500 } });
    const events: AgentEvent[] = [];
    e.onEvent((ev) => events.push(ev));
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'turn_complete');
    const types = events.map((ev) => ev.type);
    const activity = events.filter((ev) => ev.type === 'activity');
    // 12 keep-alives over ~7 s of this clock: a few signs of life, never two within a second.
    expect(activity.length).toBeGreaterThanOrEqual(2);
    expect(activity.length).toBeLessThan(12);
    for (let i = 1; i < activity.length; i++) expect(activity[i]!.at - activity[i - 1]!.at).toBeGreaterThanOrEqual(ACTIVITY_INTERVAL_MS);
    expect(types.indexOf('activity')).toBeGreaterThan(types.indexOf('session_identified'));
    expect(types.lastIndexOf('activity')).toBeLessThan(types.indexOf('turn_complete'));
    await e.stop();
  });

  it('a silently running tool is reported as `activity` about once a second, and only while it runs', async () => {
    const { e, events } = engine('silent-tool');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'build it' });
    await waitFor(events, (ev) => ev.type === 'turn_complete');
    const types = events.map((ev) => ev.type);
    const call = types.indexOf('tool_call');
    const result = types.indexOf('tool_result');
    const during = events.slice(call, result).filter((ev) => ev.type === 'activity');
    // 2.5 s of silence: 2 heartbeats (at 1 s and 2 s), never two within ACTIVITY_INTERVAL_MS.
    expect(during.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < during.length; i++) expect(during[i]!.at - during[i - 1]!.at).toBeGreaterThanOrEqual(ACTIVITY_INTERVAL_MS);
    // 1.5 s of silence after the tool finished (the model's turn): no heartbeat.
    expect(types.slice(result).includes('activity')).toBe(false);
    await e.stop();
  });

  it('setPermissionMode / setModel send control requests and return the typed result', async () => {
    const { e, events } = engine('ok');
    await expect(e.setPermissionMode('plan')).rejects.toMatchObject({ code: 'ENGINE_NOT_RUNNING' });
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await expect(e.setModel('x')).rejects.toMatchObject({ code: 'ENGINE_NOT_RUNNING' }); // not ready yet
    await waitFor(events, (ev) => ev.type === 'ready');
    await expect(e.setPermissionMode('acceptEdits')).resolves.toEqual({ mode: 'acceptEdits' });
    await expect(e.setModel('claude-sonnet-4-5')).resolves.toEqual({ model: 'claude-sonnet-4-5' });
    await expect(e.setModel(null)).resolves.toEqual({ model: 'default-model' });
    await expect(e.setPermissionMode('nonsense' as never)).rejects.toMatchObject({ name: 'AgentError', code: 'AGENT_ERROR', request: 'set_permission_mode', message: expect.stringContaining('Invalid permission mode') });
    // the engine still works after a refused request
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'turn_complete');
    expect(events.some((ev) => ev.type === 'error')).toBe(false);
    await e.stop();
    await expect(e.setPermissionMode('default')).rejects.toMatchObject({ code: 'ENGINE_NOT_RUNNING' });
  });

  it('configure: the settings of the start spec win over engineOptions on the command line', async () => {
    const { e, events } = engine('ok');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: { model: 'sonnet', permissionMode: 'default' }, model: 'opus', permissionMode: 'plan' });
    await waitFor(events, (ev) => ev.type === 'ready');
    const argv = JSON.parse(readFileSync(join(dir, 'argv.json'), 'utf8')) as string[];
    expect(argv[argv.indexOf('--model') + 1]).toBe('opus');
    expect(argv[argv.indexOf('--permission-mode') + 1]).toBe('plan');
    expect(argv.filter((a) => a === '--model')).toHaveLength(1);
    await e.stop();
  });

  it('configure: before ready the change waits and goes out right after initialize, before ready; after, at once; null goes back to engineOptions', async () => {
    const { e, events } = engine('ok');
    const sent = () =>
      readFileSync(join(dir, 'stdin.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; request?: { subtype: string; model?: unknown; mode?: unknown } })
        .filter((m) => m.type === 'control_request')
        .map((m) => ({ subtype: m.request!.subtype, ...(m.request!.model !== undefined && { model: m.request!.model }), ...(m.request!.mode !== undefined && { mode: m.request!.mode }) }));
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: { model: 'sonnet', permissionMode: 'acceptEdits' } });
    await e.configure({ model: 'haiku' });
    await e.configure({ permissionMode: 'plan' });
    expect(events.some((ev) => ev.type === 'ready')).toBe(false);
    await waitFor(events, (ev) => ev.type === 'ready');
    expect(sent()).toEqual([{ subtype: 'initialize' }, { subtype: 'set_permission_mode', mode: 'plan' }, { subtype: 'set_model', model: 'haiku' }]);

    await e.configure({ model: null });
    await e.configure({ permissionMode: null });
    expect(sent().slice(3)).toEqual([{ subtype: 'set_model', model: 'sonnet' }, { subtype: 'set_permission_mode', mode: 'acceptEdits' }]);
    // A mode the CLI does not have is refused before anything is sent.
    await expect(e.configure({ permissionMode: 'yolo' })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('acceptEdits') });
    expect(() => e.validateSettings({ permissionMode: 'yolo' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => claudeEngine().validateSettings!({ permissionMode: 'yolo' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => claudeEngine().validateSettings!({ permissionMode: 'bypassPermissions', model: 'anything' })).not.toThrow();
    expect(sent()).toHaveLength(5);
    // The CLI's refusal rejects configure (the session reports it); the engine goes on.
    await expect(e.configure({ model: 'refused-model' })).rejects.toMatchObject({ code: 'AGENT_ERROR' });
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'turn_complete');
    await e.stop();
    await expect(e.configure({ model: 'x' })).rejects.toMatchObject({ code: 'ENGINE_NOT_RUNNING' });
  });

  it('configure: a message sent after a change waits for the CLI to answer it, so it runs with the change', async () => {
    const { e, events } = engine('slow-control');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    const changing = e.configure({ model: 'haiku' });
    const sending = e.send({ localId: 'l1', text: 'hi' });
    await Promise.all([changing, sending]);
    await waitFor(events, (ev) => ev.type === 'turn_complete');
    const lines = readFileSync(join(dir, 'stdin.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type?: string; answered?: string; slow?: boolean });
    const order = lines.filter((l) => !l.slow).map((l) => l.answered ?? l.type);
    expect(order.indexOf('set_model')).toBeGreaterThan(-1);
    expect(order.indexOf('user')).toBeGreaterThan(order.indexOf('set_model'));
    await e.stop();
  });

  it('configure: a change the CLI refuses before ready is an error event, and the engine still becomes ready', async () => {
    const { e, events } = engine('ok');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await e.configure({ model: 'refused-model' });
    await waitFor(events, (ev) => ev.type === 'ready');
    const error = events.find((ev) => ev.type === 'error');
    expect(error).toMatchObject({ kind: 'protocol', retryable: true, message: expect.stringContaining('refused-model') });
    expect(events.findIndex((ev) => ev.type === 'error')).toBeLessThan(events.findIndex((ev) => ev.type === 'ready'));
    await e.stop();
  });

  it('setPermissionMode / setModel time out when the CLI never answers', async () => {
    const { e, events } = engine('silent-control');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await expect(e.setPermissionMode('plan', { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT', details: { request: 'set_permission_mode' } });
    await expect(e.setModel('m', { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT', details: { request: 'set_model' } });
    await e.stop();
  });

  it('reports EOF without a result as a fatal error with the stderr tail, then exited', async () => {
    const { e, events } = engine('crash');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'exited');
    const error = events.find((ev) => ev.type === 'error');
    expect(error).toMatchObject({ kind: 'fatal', retryable: false });
    expect((error as { message: string }).message).toContain('boom: something broke');
    expect(events.at(-1)).toMatchObject({ type: 'exited', code: 3 });
  });

  it('a crashed CLI leaves nothing behind: its setsid children are gone by the time `exited` is reported', async () => {
    const { e, events } = engine('crash-with-child');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'exited');
    const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    // A killed orphan may linger as a zombie of pid 1 (this VM's init reaps late): that is dead.
    const alive = (pid: number) => {
      try {
        return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    try {
      expect(alive(child)).toBe(false);
      expect(events.at(-1)).toMatchObject({ type: 'exited', code: 3 });
    } finally {
      if (alive(child)) process.kill(child, 'SIGKILL');
    }
  });

  it('treats an over-long line as a protocol error: failed turn, then stop', async () => {
    const { e, events } = engine('long', { maxLineBytes: 1000 });
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'ready');
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(events, (ev) => ev.type === 'exited');
    expect(events.map((ev) => ev.type)).toEqual(['ready', 'session_identified', 'error', 'turn_complete', 'exited']);
    expect(events[2]).toMatchObject({ kind: 'protocol' });
    expect(events[3]).toMatchObject({ status: 'failed' });
    // The engine stopped the CLI itself, but because of the protocol error: that is the reason.
    expect(events[4]).toMatchObject({ type: 'exited', reason: 'protocol error' });
  });

  it('reports an initialize failure', async () => {
    const { e, events } = engine('no-init');
    await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    await waitFor(events, (ev) => ev.type === 'exited');
    expect(events.some((ev) => ev.type === 'ready')).toBe(false);
    expect(events.find((ev) => ev.type === 'error')).toMatchObject({ kind: 'fatal' });
  });

  it('stop() during start() still stops the spawned process and reports exited', async () => {
    const { e, events } = engine('ok');
    const started = e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} });
    const stopped = e.stop();
    await started;
    await stopped;
    expect(events.map((ev) => ev.type)).toEqual(['exited']);
    const pid = e.pid!;
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('fails to start with AGENT_NOT_FOUND for a bin that names nothing, saying where it looked', async () => {
    const missing = join(dir, 'does-not-exist');
    const e = new ClaudeEngine({ ...context, bin: missing });
    const events: AgentEvent[] = [];
    e.onEvent((ev) => events.push(ev));
    const error = await e.start({ gen: 1, mode: 'remote', workDir: dir, options: {} }).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'AGENT_NOT_FOUND', details: { agent: 'claude', looked: [`bin option: ${missing} (no such executable file)`] } });
    expect(events.map((ev) => ev.type)).toEqual(['error', 'exited']);
    expect(events[0]).toMatchObject({ kind: 'fatal', message: expect.stringContaining(missing) });
  });

  it('refuses unknown and malformed engineOptions before spawning anything', async () => {
    const e = new ClaudeEngine({ ...context, bin });
    const events: AgentEvent[] = [];
    e.onEvent((ev) => events.push(ev));
    const error = await e.start({ gen: 1, mode: 'remote', workDir: dir, options: { modle: 'opus', env: { A: 1 } } }).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
    const message = (error as Error).message;
    expect(message).toContain('unknown option "modle"');
    expect(message).toContain('known: addDirs, allowedTools, appendSystemPrompt');
    expect(message).toContain('env.A: must be a string, got number');
    expect(events.map((ev) => ev.type)).toEqual(['error', 'exited']);
    expect(e.pid).toBeUndefined();
  });
});
