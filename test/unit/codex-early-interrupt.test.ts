/**
 * An interrupt asked for before the turn is active on the server is held until the turn starts:
 * app-server answers `turn/start` before the turn is active and refuses a `turn/interrupt` until
 * `turn/started` ("no active turn to interrupt", after which it runs the turn anyway); mcp-server
 * ignores a `notifications/cancelled` that arrives before the call's `task_started` (and runs the
 * call to the end). Seen on the real binaries (test/real-cli/codex-*-engine.test.ts, "an abort
 * right after send"); here the order is pinned down with in-memory servers. Also: an approval
 * app-server withdraws itself (`serverRequest/resolved` before any answer) is reported as
 * `permission_cancelled`.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodexAppServerEngine, CodexMcpEngine } from '../../src/engines/codex/index.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { IN_MEMORY_THREAD as THREAD, inMemoryCodexServer } from '../support/codex-in-memory-server.js';

const TURN = 'turn-1';

async function until(what: string, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !pred(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

let binDir: string;
beforeAll(() => {
  binDir = mkdtempSync(join(tmpdir(), 'ase-codex-early-'));
  writeFileSync(join(binDir, 'codex'), '#!/bin/sh\necho "codex-cli 0.153.4"\n');
  chmodSync(join(binDir, 'codex'), 0o755);
});
afterAll(() => rmSync(binDir, { recursive: true, force: true }));

describe('an interrupt before the turn is active', () => {
  it('app-server: turn/interrupt waits for turn/started; the interrupted turn ends cancelled', async () => {
    const server = inMemoryCodexServer({
      answer: (m, push) => {
        if (m.method === 'turn/start') push({ id: m.id, result: { turn: { id: TURN, status: 'inProgress', items: [], error: null } } });
        if (m.method === 'turn/interrupt') {
          push({ id: m.id, result: {} });
          push({ method: 'turn/completed', params: { threadId: THREAD, turn: { id: TURN, status: 'interrupted', items: [], error: null } } });
        }
      },
    });
    const engine = new CodexAppServerEngine(realEngineContext(), { launcher: server.launcher, bin: '/never-run', env: {} });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 1, mode: 'remote', workDir: '/tmp', options: {} });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.send({ localId: 'm1', text: 'hi' });
    await engine.abort(); // resolves once turn/start answered: the turn is not active yet
    await new Promise((r) => setTimeout(r, 20));
    expect(server.methods()).not.toContain('turn/interrupt');
    expect(events.filter((e) => e.type === 'turn_complete')).toEqual([]);

    server.push({ method: 'turn/started', params: { threadId: THREAD, turn: { id: TURN, status: 'inProgress', items: [], error: null } } });
    await until('turn_complete', () => events.some((e) => e.type === 'turn_complete'));
    expect(server.written.filter((m) => m.method === 'turn/interrupt')).toEqual([expect.objectContaining({ params: { threadId: THREAD, turnId: TURN } })]);
    expect(events.filter((e) => e.type === 'turn_complete')).toEqual([expect.objectContaining({ status: 'cancelled', stopReason: 'interrupted' })]);
    expect(engine.skippedInput.filter((s) => /interrupt/.test(s.reason))).toEqual([]);
    await engine.stop();
  });

  it('mcp-server: notifications/cancelled waits for task_started; turn_aborted ends the turn', async () => {
    const event = (msg: Record<string, unknown>) => ({ jsonrpc: '2.0', method: 'codex/event', params: { _meta: { requestId: 3, threadId: THREAD }, id: TURN, msg } });
    const server = inMemoryCodexServer({
      protocol: 'mcp-server',
      answer: (m, push) => {
        if (m.method === 'tools/call') push(event({ type: 'session_configured', session_id: THREAD, thread_id: THREAD, model: 'm', rollout_path: null }));
        if (m.method === 'notifications/cancelled') push(event({ type: 'turn_aborted', turn_id: TURN, reason: 'interrupted' }));
      },
    });
    const engine = new CodexMcpEngine(realEngineContext(), { launcher: server.launcher, bin: join(binDir, 'codex'), env: { PATH: '/usr/bin:/bin' } });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 1, mode: 'remote', workDir: '/tmp', options: {} });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.send({ localId: 'm1', text: 'hi' });
    await until('session_identified', () => events.some((e) => e.type === 'session_identified'));
    await engine.abort();
    await new Promise((r) => setTimeout(r, 20));
    expect(server.methods()).not.toContain('notifications/cancelled');

    server.push(event({ type: 'task_started', turn_id: TURN }));
    await until('turn_complete', () => events.some((e) => e.type === 'turn_complete'));
    expect(server.written.filter((m) => m.method === 'notifications/cancelled')).toEqual([expect.objectContaining({ params: expect.objectContaining({ requestId: 3 }) })]);
    expect(events.filter((e) => e.type === 'turn_complete')).toEqual([expect.objectContaining({ status: 'cancelled', stopReason: 'interrupted' })]);
    await engine.stop();
  });

  it('mcp-server: an abort before "Session not found" ends the turn instead of starting the fallback thread', async () => {
    const server = inMemoryCodexServer({ protocol: 'mcp-server' });
    const engine = new CodexMcpEngine(realEngineContext(), { launcher: server.launcher, bin: join(binDir, 'codex'), env: { PATH: '/usr/bin:/bin' }, onSessionNotFound: 'new-thread' });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 1, mode: 'remote', workDir: '/tmp', options: {}, resumeToken: 'old-thread' });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.send({ localId: 'm1', text: 'hi' });
    await until('codex-reply', () => server.methods().includes('tools/call'));
    await engine.abort();
    const text = 'Session not found for thread_id: old-thread';
    server.push({ jsonrpc: '2.0', id: 3, result: { isError: true, content: [{ type: 'text', text }], structuredContent: { threadId: 'old-thread', content: text } } });
    await until('turn_complete', () => events.some((e) => e.type === 'turn_complete'));
    expect(events.filter((e) => e.type === 'turn_complete')).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    await new Promise((r) => setTimeout(r, 20));
    expect(server.methods().filter((m) => m === 'tools/call')).toHaveLength(1); // no fresh thread for an aborted turn
    await engine.stop();
  });
});

describe('an approval Codex withdraws itself', () => {
  it('app-server: serverRequest/resolved for an unanswered approval reports permission_cancelled; a late answer sends nothing', async () => {
    const server = inMemoryCodexServer({
      answer: (m, push) => {
        if (m.method === 'turn/start') {
          push({ id: m.id, result: { turn: { id: TURN, status: 'inProgress', items: [], error: null } } });
          push({ method: 'turn/started', params: { threadId: THREAD, turn: { id: TURN, status: 'inProgress', items: [], error: null } } });
          push({ id: 0, method: 'item/commandExecution/requestApproval', params: { threadId: THREAD, turnId: TURN, itemId: 'call_1', command: 'echo hi', cwd: '/tmp' } });
        }
      },
    });
    const engine = new CodexAppServerEngine(realEngineContext(), { launcher: server.launcher, bin: '/never-run', env: {} });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 2, mode: 'remote', workDir: '/tmp', options: {} });
    await until('ready', () => events.some((e) => e.type === 'ready'));
    await engine.send({ localId: 'm1', text: 'hi' });
    await until('permission_request', () => events.some((e) => e.type === 'permission_request'));
    server.push({ method: 'serverRequest/resolved', params: { threadId: THREAD, requestId: 0 } });
    expect(events.filter((e) => e.type === 'permission_cancelled')).toEqual([expect.objectContaining({ requestId: 'g2-0' })]);
    const written = server.written.length;
    await engine.answerPermission('g2-0', { behavior: 'allow' });
    await new Promise((r) => setTimeout(r, 10));
    expect(server.written.slice(written)).toEqual([]);
    await engine.stop();
  });
});
