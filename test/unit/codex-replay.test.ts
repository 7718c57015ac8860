/**
 * Binary-free replay of every recorded Codex fixture (test/fixtures/codex/{app-server,mcp}-*.jsonl,
 * recorded by the real-binary tests) through the real engine classes: the engine must write exactly
 * the recorded client messages, and its AgentEvents must satisfy the scenario's expectations and
 * the engine contract (one gen, one tool_call/tool_result per call, unique message ids, per-turn
 * usage, `exited` last).
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionDecision } from '../../src/events/engine-input.js';
import { CodexAppServerEngine, CodexMcpEngine, type CodexEngineOptions, type NdjsonLauncher } from '../../src/engines/codex/index.js';
import { EventLog, loadFixture, realEngineContext, type TrafficFixture } from '../support/codex-engine-kit.js';
import { replay, turnTextOf } from '../support/codex-replay.js';

interface Expectation {
  /** Assistant text messages (each reported once). */
  answers: number;
  turns: ('completed' | 'failed' | 'cancelled')[];
  toolResults: string[];
  permissions: string[];
  usage?: { inputTokens: number; cacheReadTokens: number }[];
  stopReasons?: (string | undefined)[];
  /** Sub-agents: the tool names called inside a sub-agent's scope, with the name of the call that scopes them. */
  scoped?: { name: string; parent: string }[];
}

const EXPECTED: Record<string, Expectation> = {
  'app-server-text-two-turns': { answers: 2, turns: ['completed', 'completed'], toolResults: [], permissions: [], usage: [{ inputTokens: 100, cacheReadTokens: 20 }, { inputTokens: 100, cacheReadTokens: 0 }] },
  'app-server-shell-allow-deny': { answers: 2, turns: ['completed', 'completed'], toolResults: ['completed', 'denied'], permissions: ['shell', 'shell'], usage: [{ inputTokens: 200, cacheReadTokens: 0 }, { inputTokens: 200, cacheReadTokens: 0 }] },
  'app-server-patch-allow': { answers: 1, turns: ['completed'], toolResults: ['completed'], permissions: ['apply_patch'] },
  'app-server-interrupt': { answers: 1, turns: ['cancelled', 'completed'], toolResults: [], permissions: [], stopReasons: ['interrupted', 'completed'] },
  'app-server-subagent-spawn': {
    answers: 2,
    turns: ['completed'],
    toolResults: ['completed', 'completed', 'completed'],
    permissions: ['shell'],
    scoped: [{ name: 'shell', parent: 'spawn_agent' }],
  },
  'app-server-resume-after-kill': { answers: 1, turns: ['completed'], toolResults: [], permissions: [] },
  'mcp-text-two-turns': { answers: 2, turns: ['completed', 'completed'], toolResults: [], permissions: [], usage: [{ inputTokens: 100, cacheReadTokens: 20 }, { inputTokens: 100, cacheReadTokens: 0 }] },
  'mcp-shell-allow-deny-abort': { answers: 3, turns: ['completed', 'completed', 'cancelled', 'completed'], toolResults: ['completed', 'denied', 'cancelled'], permissions: ['shell', 'shell', 'shell'] },
  'mcp-patch-allow': { answers: 1, turns: ['completed'], toolResults: ['completed'], permissions: ['apply_patch'] },
  'mcp-interrupt': { answers: 2, turns: ['cancelled', 'completed', 'completed'], toolResults: [], permissions: [], stopReasons: ['interrupted', 'task_complete', 'task_complete'] },
  'mcp-session-not-found': { answers: 0, turns: ['failed'], toolResults: [], permissions: [], stopReasons: ['session_not_found'] },
};

/** The engine options the recording ran with, read back from its first thread/tools call. */
function optionsOf(fixture: TrafficFixture): CodexEngineOptions {
  for (const { dir, msg } of fixture.entries) {
    if (dir !== 'out') continue;
    const m = msg as { method?: string; params?: Record<string, any> };
    if (m.method === 'thread/start' || m.method === 'thread/resume') {
      const p = m.params ?? {};
      return { ...(p['approvalPolicy'] && { approvalPolicy: p['approvalPolicy'] }), ...(p['sandbox'] && { sandbox: p['sandbox'] }), ...(p['model'] && { model: p['model'] }) };
    }
    if (m.method === 'tools/call' && m.params?.['name'] === 'codex') {
      const a = m.params['arguments'] ?? {};
      return { ...(a['approval-policy'] && { approvalPolicy: a['approval-policy'] }), ...(a['sandbox'] && { sandbox: a['sandbox'] }) };
    }
    if (m.method === 'tools/call' && m.params?.['name'] === 'codex-reply') return { approvalPolicy: 'on-request' };
  }
  return {};
}

let fakeBinDir: string;
/** A stand-in for `codex --version` (the MCP engine checks it before spawning). */
let fakeVersionBin: string;

beforeAll(() => {
  fakeBinDir = mkdtempSync(join(tmpdir(), 'ase-codex-replay-'));
  fakeVersionBin = join(fakeBinDir, 'codex');
  writeFileSync(fakeVersionBin, '#!/bin/sh\necho "codex-cli 0.153.4"\n');
  chmodSync(fakeVersionBin, 0o755);
});

afterAll(() => rmSync(fakeBinDir, { recursive: true, force: true }));

/**
 * app-server reports a new thread once its rollout file holds a line, and Codex writes it when the
 * first turn starts: the replay points `thread.path` into a temp dir and writes the file when the
 * engine sends its first `turn/start`, as the server would.
 */
function withRollout(launcher: NdjsonLauncher): NdjsonLauncher {
  return async (spec) => {
    let live: string | undefined;
    const transport = await launcher({
      ...spec,
      onMessage: (value) => {
        const thread = (value as { result?: { thread?: { path?: unknown } } }).result?.thread;
        if (typeof thread?.path === 'string') {
          live = join(fakeBinDir, basename(thread.path));
          thread.path = live;
        }
        spec.onMessage(value);
      },
    });
    return {
      ...transport,
      pid: transport.pid,
      write: (value) => {
        if (live && (value as { method?: string }).method === 'turn/start' && !existsSync(live)) writeFileSync(live, '{"type":"session_meta","payload":{}}\n');
        return transport.write(value);
      },
      stop: () => transport.stop(),
      stderrTail: () => transport.stderrTail(),
    };
  };
}

async function waitUntil(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.each(Object.keys(EXPECTED))('replay %s', (name) => {
  it('writes the recorded client messages and reports the expected events', async () => {
    const fixture = loadFixture(name);
    const expected = EXPECTED[name]!;
    const r = replay(fixture);
    const options: CodexEngineOptions = { ...optionsOf(fixture), launcher: withRollout(r.launcher), env: { PATH: '/usr/bin:/bin' } };
    const engine =
      fixture.header.engine === 'codex'
        ? new CodexAppServerEngine(realEngineContext(), { ...options, bin: join(fakeBinDir, 'never-run') })
        : new CodexMcpEngine(realEngineContext(), { ...options, bin: fakeVersionBin });
    const log = new EventLog(engine);
    const decisions = [...((fixture.header.decisions ?? []) as PermissionDecision[])];
    let aborted = false;
    let sentFor: unknown;
    const maybeSend = (): void => {
      setImmediate(() => {
        const next = r.nextExpected();
        const text = turnTextOf(next);
        if (text === undefined || next === sentFor) return;
        sentFor = next;
        void engine.send({ localId: `l${log.events.length}`, text });
      });
    };
    engine.onEvent((e) => {
      if (e.type === 'permission_request') {
        const decision = decisions.shift();
        if (decision) queueMicrotask(() => void engine.answerPermission(e.requestId, decision));
      }
      if (e.type === fixture.header.abortAfter && !aborted) {
        aborted = true;
        queueMicrotask(() => void engine.abort());
      }
      if (e.type === 'ready' || e.type === 'turn_complete') maybeSend();
    });

    await engine.start({ gen: 7, mode: 'remote', workDir: fixture.header.workDir, options: {}, ...(fixture.header.resumeToken && { resumeToken: fixture.header.resumeToken }) });
    await r.whenFinished();
    await waitUntil(() => log.of('turn_complete').length >= expected.turns.length, `${expected.turns.length} turn(s) to complete`);
    await engine.stop();

    expect(r.mismatches).toEqual([]);
    expect(decisions).toEqual([]);
    const ev = log.events;
    expect(ev.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
    expect(ev.every((e) => e.gen === 7)).toBe(true);
    expect(engine.invalidEvents).toEqual([]);
    expect(engine.skippedInput.filter((s) => /malformed|translation failed/.test(s.reason))).toEqual([]);

    const turns = log.of('turn_complete');
    expect(turns.map((t) => t.status)).toEqual(expected.turns);
    if (expected.stopReasons) expect(turns.map((t) => t.stopReason)).toEqual(expected.stopReasons);
    if (expected.usage) expect(turns.map((t) => ({ inputTokens: t.usage.inputTokens, cacheReadTokens: t.usage.cacheReadTokens }))).toEqual(expected.usage);
    expect(log.of('tool_result').map((t) => t.status)).toEqual(expected.toolResults);
    expect(log.of('permission_request').map((p) => p.toolName)).toEqual(expected.permissions);

    // Contract: one tool_call and at most one tool_result per call, the call first.
    const calls = log.of('tool_call').map((c) => c.callId);
    expect(new Set(calls).size).toBe(calls.length);
    for (const result of log.of('tool_result')) {
      expect(ev.findIndex((e) => e.type === 'tool_call' && e.callId === result.callId)).toBeLessThan(ev.indexOf(result));
    }
    expect(log.of('tool_result').length).toBe(new Set(log.of('tool_result').map((t) => t.callId)).size);
    // No message twice (the MCP stream repeats every item in several forms).
    const ids = log.of('message').map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Permission ids carry the generation.
    for (const p of log.of('permission_request')) expect(p.requestId).toMatch(/^g7-/);
    // A resumed session identifies itself with the same token.
    const identified = log.of('session_identified');
    if (fixture.header.resumeToken && expected.turns[0] !== 'failed') expect(identified[0]?.resumeToken).toBe(fixture.header.resumeToken);
    if (!fixture.header.resumeToken) expect(identified).toHaveLength(1);
    // Every turn says what the user asked and (unless it failed or was cut off) what the agent answered.
    expect(log.of('message').filter((m) => m.role === 'user' && m.parentCallId === undefined)).toHaveLength(expected.turns.filter((t) => t !== 'failed').length);
    // Sub-agent scope: each scoped call names a call reported before it; results and prompts share their call's scope.
    const byId = new Map(log.of('tool_call').map((c) => [c.callId, c]));
    const scoped = log.of('tool_call').filter((c) => c.parentCallId !== undefined);
    expect(scoped.map((c) => ({ name: c.toolName, parent: byId.get(c.parentCallId!)?.toolName }))).toEqual(expected.scoped ?? []);
    for (const result of log.of('tool_result')) expect(result.parentCallId, result.callId).toBe(byId.get(result.callId)?.parentCallId);
    for (const p of log.of('permission_request')) if (p.callId) expect(p.parentCallId, p.requestId).toBe(byId.get(p.callId)?.parentCallId);
    const answers = log.of('message').filter((m) => m.role === 'assistant' && m.blocks.some((b) => b.type === 'text'));
    expect(answers).toHaveLength(expected.answers);
    // Each streamed answer's deltas add up to its final text.
    for (const answer of answers) {
      const deltas = log.of('text_delta').filter((d) => d.messageId === answer.id);
      if (deltas.length > 0) expect(deltas.map((d) => d.text).join('')).toBe(answer.blocks.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    }
  });
});
