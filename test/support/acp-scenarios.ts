/**
 * The real-agent scenario suite shared by the three ACP agents (gemini-cli, claude-code-acp,
 * codex-acp): one engine process runs text, thinking, tool allowed, tool rejected, cancel
 * mid-stream, cancel while a permission is pending, and a turn after all that. Each agent file
 * supplies an {@link AgentUnderTest} (its mock and how to script it) and the quirks it expects.
 *
 * The traffic of the run (both directions, timestamps) and the events the engine emitted are
 * recorded in one fixture per agent (test/fixtures/acp/<agent>.jsonl, written when missing or with
 * UPDATE_ACP_FIXTURES=1), replayed without the binary by test/unit/acp-replay.test.ts.
 *
 * With `quirks.kit` the same run also makes the turns and assertions of the conformance kit's
 * text_turn, tool_turn, failure and abort checks, and (after the stop) its resume check on a second
 * engine: each kit check starts its own agent, and an agent start is most of a real-agent file's
 * time (opencode: 12-17 s of CPU each).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { AcpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import { isAseError } from '../../src/errors.js';
import { ERROR_KINDS, type AgentEvent } from '../../src/events/agent-event.js';
import type { PermissionDecision } from '../../src/events/engine-input.js';
import { eventOrderingViolations } from '../../src/testing.js';
import { EventLog } from './acp-hermetic.js';
import { waitNoProcessesUnder } from './processes.js';
import { toTrafficEntry, type TrafficEntry } from './acp-traffic.js';
import { realEngineContext as realContext } from './engine-context.js';

/** Real timers and clock for engines driven directly (no SessionActor). */
export { realContext };

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ACP_FIXTURE_DIR = join(repoRoot, 'test', 'fixtures', 'acp');

/** How a test scripts the agent's model through its mock. */
export interface ScriptedModel {
  text(text: string): void;
  thinking(thinking: string, text: string): void;
  /** The model asks to run `command` in the shell (after the tool result the mock's default answer follows). */
  shell(command: string): void;
  /** A text streamed slowly (for cancelling mid-stream). */
  slow(text: string): void;
}

export interface AgentSetup {
  work: string;
  options: AcpEngineOptions;
  model: ScriptedModel;
  close(): Promise<void>;
}

export interface AgentQuirks {
  /** Rejecting a tool ends the turn `cancelled` (codex) instead of failing the tool and going on. */
  rejectEndsTurn?: boolean;
  /** The agent streams reasoning as `agent_thought_chunk`. */
  thinking: boolean;
  /**
   * Also assert, on this one engine, everything the conformance kit's `start`, `permission_allow`,
   * `permission_deny` and `stop` checks assert (no turn event before `ready`, the session
   * identified once, each turn's usage, each permission request reported once, the event-ordering
   * rules over the whole run, a second `stop` harmless, `exited` once, `send` after stop refused
   * with ENGINE_NOT_RUNNING), so a file can skip those checks: each costs a fresh agent start, and
   * opencode's alone is 12-17 s of CPU.
   */
  contract?: boolean;
  /** Also make the kit's text_turn, tool_turn, failure, abort and resume checks on this run (see the file's opening comment). */
  kit?: KitTurns;
}

/**
 * How the agent's model is scripted for the conformance kit's turns made on the scenario's engine
 * (src/testing/conformance.ts: the same turns, prompts and assertions as its checks).
 */
export interface KitTurns {
  /** The agent reports token usage: a text turn must then report some tokens (the kit's `reportsUsage`). */
  reportsUsage: boolean;
  /** The next turn runs a tool the agent runs without asking, then answers `then` (the kit's tool_turn; skipped without it). */
  quietTool?(then: string): void;
  /** The next turn's model request fails in a way the agent gives up on (the kit's failure; skipped without it). */
  failure?(): void;
  /** The next turn stalls until aborted; `stalled` resolves once its model request arrived (the kit's abort; skipped without it). */
  stall?(): { stalled: Promise<void> };
}


/** Fixture text of a recorded run: paths of this machine replaced by placeholders. */
export function fixtureText(entries: readonly unknown[], vars: Record<string, string>): string {
  const pairs = Object.entries(vars).sort((a, b) => b[1].length - a[1].length);
  return entries
    .map((entry) => {
      let line = JSON.stringify(entry);
      for (const [name, value] of pairs) line = line.split(value).join(`{{${name}}}`);
      return line;
    })
    .join('\n')
    .concat('\n');
}

/** What the host did to the engine (replayed at the same position). */
export type HostAction =
  | { type: 'send'; localId: string; text: string }
  | { type: 'abort' }
  | { type: 'answer'; requestId: string; decision: PermissionDecision }
  | { type: 'stop' };

/**
 * Fixture lines: the wire (TrafficEntry) and, interleaved in the order they happened, what the
 * engine reported to the host and what the host did.
 */
export type FixtureLine =
  | TrafficEntry
  | { t: number; dir: 'engine->host'; event: Omit<AgentEvent, 'gen' | 'at'> }
  | { t: number; dir: 'host->engine'; action: HostAction };

export interface ScenarioTimings {
  spawnToReadyMs: number;
  textTurnMs: number;
  thinkingTurnMs: number;
  toolAllowedMs: number;
  toolRejectedMs: number;
  cancelMidStreamMs: number;
  cancelAtPermissionMs: number;
  stopMs: number;
  /** With `quirks.kit`: the kit's turns on the scenario's engine, and the resume (a second agent start). */
  kitTurnsMs?: number;
  resumeMs?: number;
}

function since(events: readonly AgentEvent[], from: number): AgentEvent[] {
  return events.slice(from);
}

/**
 * Runs every scenario on one engine process and writes the fixture. Returns timings. The engine is
 * stopped whatever happens (a failed assertion must not leave the agent running).
 */
export async function runScenarioSuite(agent: string, root: string, setup: AgentSetup, quirks: AgentQuirks): Promise<ScenarioTimings> {
  const engines: AcpEngine[] = [];
  try {
    return await scenarios(agent, root, setup, quirks, (e) => engines.push(e));
  } finally {
    for (const engine of engines) await engine.stop();
  }
}

async function scenarios(agent: string, root: string, setup: AgentSetup, quirks: AgentQuirks, created: (engine: AcpEngine) => unknown): Promise<ScenarioTimings> {
  const lines: FixtureLine[] = [];
  let t0 = performance.now();
  const stamp = () => Math.round((performance.now() - t0) * 1000) / 1000;
  const log = new EventLog();
  const engine = new AcpEngine(realContext(), { ...setup.options, onTraffic: (record) => lines.push(toTrafficEntry(record, stamp())) });
  created(engine);
  engine.onEvent((event) => {
    const { gen: _g, at: _a, ...body } = event;
    // The fixture's exit marker: the replay ends its fake agent with the recorded status.
    if (event.type === 'exited') lines.push({ t: stamp(), dir: 'agent->client', exit: { code: event.code, signal: event.signal } });
    lines.push({ t: stamp(), dir: 'engine->host', event: body });
    log.push(event);
  });
  // Every host call goes through here, so the fixture knows when the host acted.
  const act = (action: HostAction): void => void lines.push({ t: stamp(), dir: 'host->engine', action });
  const host = {
    send: (localId: string, text: string) => {
      act({ type: 'send', localId, text });
      return engine.send({ localId, text });
    },
    abort: () => {
      act({ type: 'abort' });
      return engine.abort();
    },
    answer: (requestId: string, decision: PermissionDecision) => {
      act({ type: 'answer', requestId, decision });
      return engine.answerPermission(requestId, decision);
    },
    stop: () => {
      act({ type: 'stop' });
      return engine.stop();
    },
  };
  const timings: Partial<ScenarioTimings> = {};
  const { work, model } = setup;
  let t = performance.now();
  const ms = () => Math.round(performance.now() - t);
  // Generous: opencode takes 30-80 s to come up on a loaded 2-core machine (its start-up is CPU-bound).
  const ready = log.next('ready', 'ready', 180_000);
  t0 = performance.now(); // fixture times count from the spawn
  await engine.start({ gen: 1, mode: 'remote', workDir: work, options: {} });
  await ready;
  timings.spawnToReadyMs = ms();
  expect(log.of('session_identified')).toHaveLength(1);
  if (quirks.contract) {
    expect(log.of('exited')).toEqual([]);
    const beforeReady = log.events.slice(0, log.events.findIndex((e) => e.type === 'ready'));
    expect(beforeReady.filter((e) => e.type === 'turn_complete' || e.type === 'permission_request')).toEqual([]);
  }
  let send = 0;
  const turn = async (text: string) => {
    const from = log.events.length;
    const done = log.next('turn_complete', `turn "${text}"`);
    await host.send(`l${++send}`, text);
    const end = await done;
    // The kit's per-turn usage rule: every count a number, none negative.
    if (quirks.contract) for (const [key, n] of Object.entries(end.usage)) expect(n, `usage.${key}`).toBeGreaterThanOrEqual(0);
    return { end, events: since(log.events, from) };
  };
  /** The kit's rule: a permission request is reported once. */
  const reportedOnce = (requestId: string) => {
    if (quirks.contract) expect(log.of('permission_request').filter((e) => e.requestId === requestId)).toHaveLength(1);
  };
  const textOf = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');

  // 1. text
  t = performance.now();
  model.text('Hello from the mock agent.');
  let r = await turn('say hello');
  timings.textTurnMs = ms();
  expect(r.end).toMatchObject({ status: 'completed' });
  expect(textOf(r.events)).toBe('Hello from the mock agent.');
  expect(r.events.filter((e) => e.type === 'message').at(-1)).toMatchObject({ role: 'assistant', blocks: [{ type: 'text', text: 'Hello from the mock agent.' }] });
  if (quirks.kit) {
    // The kit's text_turn: a like second turn; usage per turn (the first reports tokens), not cumulative.
    const first = r.end.usage;
    if (quirks.kit.reportsUsage) expect(first.inputTokens + first.outputTokens, `the turn reports no tokens: ${JSON.stringify(first)}`).toBeGreaterThan(0);
    model.text('Conformance answer two.');
    const again = await turn('Please answer: Conformance answer two.');
    const second = again.end.usage;
    expect(again.end).toMatchObject({ status: 'completed' });
    expect(textOf(again.events)).toBe('Conformance answer two.');
    const size = (u: typeof first) => u.inputTokens + u.cacheReadTokens + u.outputTokens;
    expect(size(second), `the second turn's usage ${JSON.stringify(second)} looks cumulative (first ${JSON.stringify(first)})`).toBeLessThan(size(first) * 1.5 + 50);
  }

  // 2. thinking
  t = performance.now();
  model.thinking('Considering the options carefully', 'Thought it through.');
  r = await turn('think first');
  timings.thinkingTurnMs = ms();
  expect(r.end).toMatchObject({ status: 'completed' });
  expect(textOf(r.events)).toBe('Thought it through.');
  if (quirks.thinking) {
    expect(r.events.filter((e) => e.type === 'thinking').map((e) => (e as { active: boolean }).active)).toEqual([true, false]);
    const blocks = r.events.filter((e) => e.type === 'message').flatMap((e) => (e as { blocks: { type: string }[] }).blocks);
    expect(blocks.some((b) => b.type === 'thinking')).toBe(true);
  }

  // 3. tool call, permission allowed
  t = performance.now();
  model.shell('touch allowed.txt && echo created');
  let from = log.events.length;
  let asked = log.next('permission_request', 'permission (allow)');
  let done = log.next('turn_complete', 'tool turn (allow)');
  await host.send(`l${++send}`, 'create allowed.txt');
  let ask = await asked;
  expect(ask.suggestions).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'allow_once' }), expect.objectContaining({ kind: 'reject_once' })]));
  await host.answer(ask.requestId, { behavior: 'allow' });
  let end = await done;
  timings.toolAllowedMs = ms();
  expect(end).toMatchObject({ status: 'completed' });
  expect(existsSync(join(work, 'allowed.txt'))).toBe(true);
  let events = since(log.events, from);
  expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ callId: ask.callId });
  expect(events.filter((e) => e.type === 'tool_result' && e.callId === ask.callId)).toEqual([expect.objectContaining({ status: 'completed', isError: false })]);
  expect(events.findIndex((e) => e.type === 'tool_call')).toBeLessThan(events.findIndex((e) => e.type === 'tool_result'));
  reportedOnce(ask.requestId);

  // 4. tool call, permission rejected
  t = performance.now();
  model.shell('touch rejected.txt && echo created');
  from = log.events.length;
  asked = log.next('permission_request', 'permission (reject)');
  done = log.next('turn_complete', 'tool turn (reject)');
  await host.send(`l${++send}`, 'create rejected.txt');
  ask = await asked;
  await host.answer(ask.requestId, { behavior: 'deny', interrupt: false });
  end = await done;
  timings.toolRejectedMs = ms();
  expect(end).toMatchObject({ status: quirks.rejectEndsTurn ? 'cancelled' : 'completed' });
  expect(existsSync(join(work, 'rejected.txt'))).toBe(false);
  events = since(log.events, from);
  expect(events.filter((e) => e.type === 'tool_result' && e.callId === ask.callId)).toEqual([expect.objectContaining({ status: 'denied', isError: true })]);
  reportedOnce(ask.requestId);

  // 5. cancel mid-stream
  t = performance.now();
  const slowText = 'This answer streams slowly and will be cancelled long before it is complete.';
  model.slow(slowText);
  from = log.events.length;
  const firstDelta = log.next('text_delta', 'first slow delta');
  done = log.next('turn_complete', 'cancelled turn');
  await host.send(`l${++send}`, 'stream slowly');
  await firstDelta;
  await host.abort();
  end = await done;
  timings.cancelMidStreamMs = ms();
  expect(end).toMatchObject({ status: 'cancelled' });
  const partial = textOf(since(log.events, from));
  expect(partial.length).toBeGreaterThan(0);
  expect(partial).not.toBe(slowText);

  // 6. cancel while a permission is pending
  t = performance.now();
  model.shell('touch pending.txt && echo created');
  asked = log.next('permission_request', 'permission (cancel)');
  done = log.next('turn_complete', 'turn cancelled at the permission');
  await host.send(`l${++send}`, 'create pending.txt');
  ask = await asked;
  expect(engine.pendingPermissions()).toEqual([ask.requestId]);
  await host.abort();
  expect(engine.pendingPermissions()).toEqual([]);
  end = await done;
  timings.cancelAtPermissionMs = ms();
  expect(end).toMatchObject({ status: 'cancelled' });
  expect(existsSync(join(work, 'pending.txt'))).toBe(false);
  const answered = lines.filter((l) => l.dir === 'client->agent' && JSON.stringify((l as TrafficEntry).msg ?? {}).includes('"outcome":{"outcome":"cancelled"}'));
  expect(answered.length).toBeGreaterThanOrEqual(1);

  // 7. the agent still works after both cancels
  model.text('Still here.');
  r = await turn('are you still there?');
  expect(r.end).toMatchObject({ status: 'completed' });
  expect(textOf(r.events)).toBe('Still here.');

  // 8. the conformance kit's tool_turn, failure and abort checks, on this engine (quirks.kit)
  const failureErrors = new Set<AgentEvent>();
  if (quirks.kit) {
    const kit = quirks.kit;
    t = performance.now();
    const kitText = async (answer: string) => {
      model.text(answer);
      const { end, events } = await turn(`Please answer: ${answer}`);
      expect(end, `the text turn "${answer}"`).toMatchObject({ status: 'completed' });
      expect(textOf(events)).toContain(answer);
    };
    if (kit.quietTool) {
      // tool_turn: one tool_call, then exactly one tool_result per call.
      kit.quietTool('Tool turn done.');
      const { end, events } = await turn('Run `echo conformance`.');
      expect(end).toMatchObject({ status: 'completed' });
      const calls = events.filter((e) => e.type === 'tool_call');
      expect(calls.length, 'tool_call events in the tool turn').toBeGreaterThan(0);
      for (const call of calls) expect(events.filter((e) => e.type === 'tool_result' && e.callId === call.callId), `tool_result for ${call.callId}`).toHaveLength(1);
      expect(textOf(events)).toContain('Tool turn done.');
    }
    if (kit.failure) {
      // failure: an `error` of a known kind, the turn failed, then the engine still works.
      kit.failure();
      const { end, events } = await turn('This turn fails.');
      expect(end).toMatchObject({ status: 'failed' });
      const errors = events.filter((e) => e.type === 'error');
      expect(errors.length, 'error events before the failed turn end').toBeGreaterThan(0);
      expect(ERROR_KINDS).toContain(errors[0]!.kind);
      for (const e of errors) failureErrors.add(e);
      await kitText('After the failure.');
    }
    if (kit.stall) {
      // abort: a turn stalled before its first token is aborted (cancelled), then the next turn completes.
      const { stalled } = kit.stall();
      from = log.events.length;
      done = log.next('turn_complete', 'the stalled turn');
      await host.send(`l${++send}`, 'Take your time.');
      await stalled;
      await host.abort();
      end = await done;
      expect(end).toMatchObject({ status: 'cancelled' });
      await kitText('After abort.');
    }
    timings.kitTurnsMs = ms();
  }

  t = performance.now();
  await host.stop();
  timings.stopMs = ms();
  expect(log.events.at(-1)?.type).toBe('exited');
  if (quirks.contract) {
    // The kit's stop check: a second stop is harmless, `exited` came once, a late send is refused.
    await engine.stop();
    expect(log.of('exited')).toHaveLength(1);
    const late = await (async () => engine.send({ localId: 'late', text: 'too late' }))().then(
      () => 'accepted',
      (error: unknown) => (isAseError(error) ? error.code : String(error)),
    );
    expect(late).toBe('ENGINE_NOT_RUNNING');
    // The kit's ordering rules over the whole run: 7 turns (the cancelled ones included).
    expect(eventOrderingViolations(log.events, { gen: 1, turns: send })).toEqual([]);
    expect(log.of('session_identified')).toHaveLength(1);
  }
  // No error but those of the kit's failure turn.
  expect(log.of('error').filter((e) => !failureErrors.has(e))).toEqual([]);
  expect(engine.invalidEvents).toEqual([]);
  expect(await waitNoProcessesUnder(root)).toEqual([]);
  // Every permission request got exactly one answer.
  const requests = lines.filter((l) => l.dir === 'agent->client' && (l as TrafficEntry & { msg: { method?: string } }).msg?.method === 'session/request_permission');
  for (const request of requests) {
    const id = (request as { msg: { id: unknown } }).msg.id;
    const answers = lines.filter((l) => l.dir === 'client->agent' && (l as { msg?: { id?: unknown; method?: string } }).msg?.id === id && (l as { msg: { method?: string } }).msg.method === undefined && 'result' in ((l as { msg: object }).msg));
    expect(answers.length, `answers to permission request ${String(id)}`).toBe(1);
  }

  // Re-recorded on demand only (UPDATE_ACP_FIXTURES=1) or when missing: ids and timings differ per run.
  const fixture = join(ACP_FIXTURE_DIR, `${agent}.jsonl`);
  if (process.env['UPDATE_ACP_FIXTURES'] === '1' || !existsSync(fixture)) {
    mkdirSync(ACP_FIXTURE_DIR, { recursive: true });
    writeFileSync(fixture, fixtureText(lines, { WORK: work, ROOT: root }));
  }
  if (quirks.kit) {
    t = performance.now();
    await resumed(root, setup, log.of('session_identified')[0]?.resumeToken, created);
    timings.resumeMs = ms();
  }
  return timings as ScenarioTimings;
}

/** Events only a live turn produces (a resumed session may replay its history before `ready`). */
const TURN_EVENTS = new Set<AgentEvent['type']>(['turn_complete', 'permission_request']);

/**
 * The conformance kit's resume check, its first engine being the scenario's (stopped by now): a new
 * engine resumes the session by its token, gets ready with no turn event before `ready`, answers a
 * turn, reports no other session (a fork), and stops cleanly.
 */
async function resumed(root: string, setup: AgentSetup, token: string | undefined, created: (engine: AcpEngine) => unknown): Promise<void> {
  expect(token, 'no session_identified: nothing to resume from').toBeDefined();
  const log = new EventLog();
  const engine = new AcpEngine(realContext(), setup.options);
  created(engine);
  engine.onEvent(log.push);
  await engine.start({ gen: 1, mode: 'remote', workDir: setup.work, options: {}, resumeToken: token! });
  // `ready`, or `exited` (then failed below with the events); as generous as the first start.
  const deadline = Date.now() + 180_000;
  while (!log.events.some((e) => e.type === 'ready' || e.type === 'exited')) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ready (resumed); got ${log.events.map((e) => e.type).join(',')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(log.of('exited'), 'the resumed engine exited instead of getting ready').toEqual([]);
  expect(log.events.slice(0, log.events.findIndex((e) => e.type === 'ready')).filter((e) => TURN_EVENTS.has(e.type))).toEqual([]);
  const from = log.events.length;
  const done = log.next('turn_complete', 'the resumed turn');
  setup.model.text('Resumed answer.');
  await engine.send({ localId: 'resumed-1', text: 'Please answer: Resumed answer.' });
  const end = await done;
  expect(end).toMatchObject({ status: 'completed' });
  for (const [key, n] of Object.entries(end.usage)) expect(n, `usage.${key}`).toBeGreaterThanOrEqual(0);
  expect(log.events.slice(from).flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')).toContain('Resumed answer.');
  expect(log.of('session_identified').filter((e) => e.resumeToken !== token), `resuming ${token} reported another session: a fork`).toEqual([]);
  await engine.stop();
  expect(eventOrderingViolations(log.events, { gen: 1, turns: 1 })).toEqual([]);
  expect(log.events.at(-1)?.type).toBe('exited');
  expect(log.of('exited')).toHaveLength(1);
  expect(engine.invalidEvents).toEqual([]);
  expect(await waitNoProcessesUnder(root)).toEqual([]);
}
