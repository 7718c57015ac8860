/**
 * `engineConformance(factory, options)`: the AgentEngine contract (src/engines/core/engine.ts) as
 * plain async checks, run against anyone's engine. Each check starts a fresh engine from the
 * factory, drives it through one scenario, and always ends by stopping it and checking the event
 * ordering rules (event-order.ts) and that no process it spawned is left. No test runner is
 * imported: a check throws a `ConformanceFailure` or resolves with `passed`/`skipped`; the adapters
 * in runner-adapters.ts turn the checks into vitest or node:test cases.
 *
 * The agent is scripted through an `AgentDriver`: each hook prepares the agent's next turn (a mock
 * model's queue, or a stand-in agent that reads the prompt) and may return the prompt to send. A
 * check whose hook or capability is missing is skipped with the reason, never passed silently.
 */
import { readFileSync } from 'node:fs';
import { AseError, isAseError } from '../errors.js';
import type { AgentEvent } from '../events/agent-event.js';
import { ERROR_KINDS } from '../events/agent-event.js';
import { messageText } from '../events/message-text.js';
import type { AgentEngine, EngineContext, EngineFactory, EngineStartSpec } from '../engines/core/engine.js';
import type { ProcessObserver } from '../engines/transport/process-observer.js';
import { RealClock } from '../effects/clock.js';
import { EventLog, type EventOfType } from './event-log.js';
import { eventOrderingViolations } from './event-order.js';

export const CONFORMANCE_CHECKS = [
  'start',
  'text_turn',
  'tool_turn',
  'permission_allow',
  'permission_deny',
  'failure',
  'abort',
  'resume',
  'stop',
  'bad_output',
] as const;
export type ConformanceCheckName = (typeof CONFORMANCE_CHECKS)[number];

/** What a `badOutput` hook makes the agent print before its answer. */
export const BAD_OUTPUT_KINDS = ['garbage', 'huge', 'truncated'] as const;
export type BadOutputKind = (typeof BAD_OUTPUT_KINDS)[number];

/** The prompt a hook wants sent for its turn; nothing: the kit sends a plain one. */
export type DriverPrompt = string | undefined | void;
type Maybe<T> = T | Promise<T>;

/**
 * Scripts the agent (through its mock model, or directly for a stand-in agent). Every hook prepares
 * the next turn only; the kit then sends the returned prompt (or a default) and watches the engine.
 */
export interface AgentDriver {
  /** The next turn answers `answer` as text, with token usage. */
  text(answer: string): Maybe<DriverPrompt>;
  /** The next turn runs `command` as a tool the agent runs without asking, then answers `then`. */
  tool?(command: string, then: string): Maybe<DriverPrompt>;
  /** The next turn asks permission to run `command` (a `permission_request`), then answers `then`. */
  permission?(command: string, then: string): Maybe<DriverPrompt>;
  /** The next turn's model request fails (an HTTP 500 or the API's error event). */
  failure?(): Maybe<DriverPrompt>;
  /**
   * The next turn stalls until aborted. `stalled` resolves once it does (e.g. the mock saw the
   * request); without it the kit waits for the turn's first text, thinking or tool event.
   */
  stall?(): Maybe<{ prompt?: string; stalled?: Promise<void> }>;
  /** The agent prints bad output (a non-JSON line, a line of several MiB, a line cut short) before answering `then`. */
  badOutput?(kind: BadOutputKind, then: string): Maybe<DriverPrompt>;
}

export interface ConformanceOptions {
  /** Shown in check titles; default the factory's name. */
  name?: string;
  /** The work directory each engine starts in. */
  workDir: string | (() => string);
  /** The engine's `spec.options` (what `createSession({ engineOptions })` would pass). */
  engineOptions?: Record<string, unknown> | (() => Record<string, unknown>);
  /** Overrides parts of the EngineContext the kit builds (real clock, a process observer). */
  context?: Partial<EngineContext> | (() => Partial<EngineContext>);
  /** Scripts the agent; a function is called once per check (so it can see per-test mocks). */
  driver: AgentDriver | (() => AgentDriver);
  /** pids the engine left behind (besides those the kit tracks through `EngineContext.processes`), checked after each stop. */
  leftovers?(): Maybe<readonly number[]>;
  /** How long one turn may take. Default 60 s (real CLIs on a loaded machine). */
  turnTimeoutMs?: number;
  /** Checks not to run (reported as skipped with "skipped by options"). */
  skip?: readonly ConformanceCheckName[];
  /** The generation engines start with. Default 1. */
  gen?: number;
  /**
   * Whether the agent reports token usage. Default true: a text turn must then report some tokens.
   * False for an agent whose protocol carries none (the engine then honestly reports zeros).
   */
  reportsUsage?: boolean;
}

export type CheckOutcome = { status: 'passed'; detail?: string } | { status: 'skipped'; reason: string };

export interface ConformanceCheck {
  readonly name: ConformanceCheckName;
  /** A sentence saying what the check proves. */
  readonly title: string;
  /** Runs the check: resolves passed or skipped, throws a ConformanceFailure. */
  run(): Promise<CheckOutcome>;
}

export interface ConformanceReport {
  name: string;
  results: ({ check: ConformanceCheckName } & (CheckOutcome | { status: 'failed'; error: Error }))[];
  passed: number;
  skipped: number;
  failed: number;
}

export interface ConformanceSuite {
  readonly name: string;
  readonly checks: readonly ConformanceCheck[];
  /** Runs every check in order (no runner needed) and reports each outcome. */
  run(): Promise<ConformanceReport>;
}

/**
 * A broken rule of the engine contract: an `AseError` with code `ENGINE_ERROR` (the engine under
 * test misbehaved), `details.check` naming the check, so `isAseError` catches it like any other.
 */
export class ConformanceFailure extends AseError<{ check: ConformanceCheckName }> {
  override readonly name: string = 'ConformanceFailure';
  constructor(
    readonly check: ConformanceCheckName,
    message: string,
  ) {
    super('ENGINE_ERROR', `${check}: ${message}`, { details: { check } });
  }
}

const TITLES: Record<ConformanceCheckName, string> = {
  start: 'start → ready → identified: `ready` first, the agent session id reported once',
  text_turn: 'two text turns: the answer, one `turn_complete {completed}` each, per-turn usage',
  tool_turn: 'a tool turn: one `tool_call` then one `tool_result` per call',
  permission_allow: 'a permission request answered allow: the tool runs, the turn completes',
  permission_deny: 'a permission request answered deny: the tool does not complete, the turn ends',
  failure: 'a model failure: `error` of a known kind, `turn_complete {failed}`, then the engine still works',
  abort: 'abort mid-turn: `turn_complete {cancelled}`, then the next turn completes',
  resume: 'resume by token: a new engine continues the same agent session (no fork)',
  stop: 'stop: `exited` last and once, idempotent, `send` refused, no process left',
  bad_output: 'bad agent output (garbage, a huge line, a truncated line) is skipped; the turn completes',
};

/** The checks of the AgentEngine contract for `factory`'s engines, driven by `options.driver`. */
export function engineConformance(factory: EngineFactory, options: ConformanceOptions): ConformanceSuite {
  const name = options.name ?? factory.name;
  const checks = CONFORMANCE_CHECKS.map((check): ConformanceCheck => ({
    name: check,
    title: TITLES[check],
    run: () => (options.skip?.includes(check) ? Promise.resolve({ status: 'skipped', reason: 'skipped by options' }) : SCENARIOS[check](new Bench(factory, options, check))),
  }));
  return {
    name,
    checks,
    async run() {
      const results: ConformanceReport['results'] = [];
      for (const check of checks) {
        try {
          results.push({ check: check.name, ...(await check.run()) });
        } catch (error) {
          results.push({ check: check.name, status: 'failed', error: error instanceof Error ? error : new Error(String(error)) });
        }
      }
      const count = (s: string) => results.filter((r) => r.status === s).length;
      return { name, results, passed: count('passed'), skipped: count('skipped'), failed: count('failed') };
    },
  };
}

/** Events only a live turn produces (a resumed session may replay its history before `ready`). */
const TURN_EVENTS = new Set<AgentEvent['type']>(['turn_complete', 'permission_request']);

/** One running engine of a check: its events, its turns, its processes. */
interface Run {
  engine: AgentEngine;
  log: EventLog;
  spec: EngineStartSpec;
  turns: number;
  /** pids spawned through the context's process observer. */
  pids: Set<number>;
  stopped: boolean;
}

/** What one check works with: fresh engines from the factory, the driver, the assertions. */
class Bench {
  readonly driver: AgentDriver;
  readonly turnMs: number;
  readonly runs: Run[] = [];

  constructor(
    readonly factory: EngineFactory,
    readonly options: ConformanceOptions,
    readonly check: ConformanceCheckName,
  ) {
    this.driver = typeof options.driver === 'function' ? options.driver() : options.driver;
    this.turnMs = options.turnTimeoutMs ?? 60_000;
  }

  fail(message: string): never {
    throw new ConformanceFailure(this.check, message);
  }

  expect(condition: unknown, message: string): void {
    if (!condition) this.fail(message);
  }

  skip(reason: string): CheckOutcome {
    return { status: 'skipped', reason };
  }

  /** Creates and starts an engine; waits for `ready`. */
  async start(resumeToken?: string): Promise<Run> {
    const pids = new Set<number>();
    const observer: ProcessObserver = { spawning: () => ({ env: {}, spawned: (info) => void pids.add(info.pid), descendants: () => undefined, reaped: () => undefined }) };
    const clock = new RealClock();
    const extra = typeof this.options.context === 'function' ? this.options.context() : (this.options.context ?? {});
    const context: EngineContext = {
      now: () => clock.now(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (handle) => clock.clearTimeout(handle),
      processes: observer,
      ...extra,
    };
    const engine = this.factory.create(context);
    const log = new EventLog(engine);
    const workDir = typeof this.options.workDir === 'function' ? this.options.workDir() : this.options.workDir;
    const engineOptions = typeof this.options.engineOptions === 'function' ? this.options.engineOptions() : (this.options.engineOptions ?? {});
    const spec: EngineStartSpec = { gen: this.options.gen ?? 1, mode: 'remote', workDir, options: engineOptions, ...(resumeToken !== undefined && { resumeToken }) };
    const run: Run = { engine, log, spec, turns: 0, pids, stopped: false };
    this.runs.push(run);
    await engine.start(spec);
    await log.waitUntil(() => log.events.find((e) => e.type === 'ready' || e.type === 'exited'), 'ready', this.turnMs);
    this.expect(log.of('exited').length === 0, `the engine exited instead of getting ready: ${describeEvents(log.events)}`);
    const early = log.events.slice(0, log.events.findIndex((e) => e.type === 'ready')).filter((e) => TURN_EVENTS.has(e.type));
    this.expect(early.length === 0, `turn events before \`ready\`: ${describeEvents(log.events)}`);
    return run;
  }

  /** Sends `prompt` and waits for the turn's `turn_complete`. */
  async turn(run: Run, prompt: DriverPrompt, fallback: string): Promise<{ end: EventOfType<'turn_complete'>; from: number }> {
    const from = run.log.mark();
    run.turns += 1;
    await run.engine.send({ localId: `conformance-${run.turns}`, text: typeof prompt === 'string' ? prompt : fallback });
    const end = await this.turnEnd(run, from);
    return { end, from };
  }

  turnEnd(run: Run, from: number): Promise<EventOfType<'turn_complete'>> {
    return run.log.waitUntil(() => {
      const end = run.log.of('turn_complete', from)[0];
      if (end) return end;
      if (run.log.of('exited', from).length > 0) this.fail(`the engine exited during the turn: ${describeEvents(run.log.events.slice(from))}`);
      return undefined;
    }, 'turn_complete', this.turnMs);
  }

  /** The turn's assistant text: its messages' text blocks, or its text deltas. */
  answerOf(run: Run, from: number): string {
    const messages = run.log.of('message', from).filter((m) => m.role === 'assistant' && m.parentCallId === undefined);
    const fromMessages = messages.map(messageText).join('');
    return fromMessages !== '' ? fromMessages : run.log.of('text_delta', from).map((d) => d.text).join('');
  }

  async textTurn(run: Run, answer: string): Promise<EventOfType<'turn_complete'>> {
    const { end, from } = await this.turn(run, await this.driver.text(answer), `Please answer: ${answer}`);
    this.expect(end.status === 'completed', `a text turn ended ${end.status}: ${describeEvents(run.log.events.slice(from))}`);
    this.expect(this.answerOf(run, from).includes(answer), `the answer ${JSON.stringify(answer)} is not in the turn's assistant text ${JSON.stringify(this.answerOf(run, from).slice(0, 200))}`);
    for (const [key, n] of Object.entries(end.usage)) this.expect(typeof n === 'number' && n >= 0, `usage.${key} is ${String(n)}`);
    return end;
  }

  /** Stops every engine of the check, then: ordering rules, `exited` once, no process left. */
  async finish(): Promise<void> {
    for (const run of this.runs) {
      if (!run.stopped) await run.engine.stop();
      run.stopped = true;
      const problems = eventOrderingViolations(run.log.events, { gen: run.spec.gen, turns: run.turns });
      this.expect(problems.length === 0, `event ordering: ${problems.join('; ')}`);
      this.expect(run.log.events.at(-1)?.type === 'exited', `the last event after stop is ${run.log.events.at(-1)?.type ?? 'nothing'}, not exited`);
      const alive = [...run.pids].filter(isAlive);
      this.expect(alive.length === 0, `processes the engine spawned are still running after stop: ${alive.join(', ')}`);
    }
    const left = (await this.options.leftovers?.()) ?? [];
    this.expect(left.length === 0, `processes left behind: ${left.join(', ')}`);
  }

  /** Runs `body`, then `finish()` (also when the body failed: no engine outlives its check). */
  async with(body: () => Promise<CheckOutcome>): Promise<CheckOutcome> {
    let outcome: CheckOutcome;
    try {
      outcome = await body();
    } catch (error) {
      await this.finish().catch(() => undefined);
      throw error;
    }
    await this.finish();
    return outcome;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by its parent) is gone for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return true;
  }
}

function describeEvents(events: readonly AgentEvent[]): string {
  return events.map((e) => (e.type === 'error' ? `error(${e.kind}: ${e.message.slice(0, 120)})` : e.type === 'turn_complete' ? `turn_complete(${e.status})` : e.type)).join(', ') || 'no events';
}

/** The codes a stopped engine refuses `send` with. */
/** What every engine answers a call after stop with (the session's own `SESSION_STOPPED` is the session layer's). */
const REFUSED_AFTER_STOP: readonly string[] = ['ENGINE_NOT_RUNNING'];

type Scenario = (bench: Bench) => Promise<CheckOutcome>;

const SCENARIOS: Record<ConformanceCheckName, Scenario> = {
  start: (b) =>
    b.with(async () => {
      const run = await b.start();
      await b.textTurn(run, 'Conformance start answer.');
      const identified = run.log.of('session_identified');
      if (b.factory.capabilities.resume) b.expect(identified.length === 1, `session_identified ${identified.length} times in the first turn (once expected)`);
      else b.expect(identified.length <= 1, `session_identified ${identified.length} times`);
      return { status: 'passed' };
    }),

  text_turn: (b) =>
    b.with(async () => {
      const run = await b.start();
      const first = await b.textTurn(run, 'Conformance answer one.');
      if (b.options.reportsUsage !== false) b.expect(first.usage.inputTokens + first.usage.outputTokens > 0, `the turn reports no tokens: ${JSON.stringify(first.usage)}`);
      const second = await b.textTurn(run, 'Conformance answer two.');
      // Per turn, not the session's running total: a same-sized turn reports a same-sized usage.
      const size = (u: typeof first.usage) => u.inputTokens + u.cacheReadTokens + u.outputTokens;
      b.expect(size(second.usage) < size(first.usage) * 1.5 + 50, `the second turn's usage ${JSON.stringify(second.usage)} looks cumulative (first ${JSON.stringify(first.usage)})`);
      b.expect(run.log.of('session_identified').length <= 1, 'the agent session was identified more than once on one engine');
      return { status: 'passed' };
    }),

  tool_turn: (b) => {
    const tool = b.driver.tool?.bind(b.driver);
    if (!tool) return Promise.resolve(b.skip('the driver has no `tool` hook'));
    return b.with(async () => {
      const run = await b.start();
      const { end, from } = await b.turn(run, await tool('echo conformance', 'Tool turn done.'), 'Run `echo conformance`.');
      b.expect(end.status === 'completed', `the tool turn ended ${end.status}`);
      const calls = run.log.of('tool_call', from);
      b.expect(calls.length > 0, `no tool_call in the tool turn: ${describeEvents(run.log.events.slice(from))}`);
      for (const call of calls) {
        const results = run.log.of('tool_result', from).filter((r) => r.callId === call.callId);
        b.expect(results.length === 1, `${results.length} tool_result for ${call.callId}`);
      }
      return { status: 'passed' };
    });
  },

  permission_allow: (b) => permissionScenario(b, 'allow'),
  permission_deny: (b) => permissionScenario(b, 'deny'),

  failure: (b) => {
    const failure = b.driver.failure?.bind(b.driver);
    if (!failure) return Promise.resolve(b.skip('the driver has no `failure` hook'));
    return b.with(async () => {
      const run = await b.start();
      const { end, from } = await b.turn(run, await failure(), 'This turn fails.');
      b.expect(end.status === 'failed', `a failed model request ended the turn ${end.status}`);
      const errors = run.log.of('error', from);
      b.expect(errors.length > 0, 'no `error` event before the failed turn end');
      b.expect((ERROR_KINDS as readonly string[]).includes(errors[0]!.kind), `unknown error kind ${errors[0]!.kind}`);
      await b.textTurn(run, 'After the failure.');
      return { status: 'passed' };
    });
  },

  abort: (b) => {
    const stall = b.driver.stall?.bind(b.driver);
    if (!stall) return Promise.resolve(b.skip('the driver has no `stall` hook'));
    return b.with(async () => {
      const run = await b.start();
      const { prompt, stalled } = await stall();
      const from = run.log.mark();
      run.turns += 1;
      await run.engine.send({ localId: 'conformance-stall', text: prompt ?? 'Take your time.' });
      if (stalled) await stalled;
      else await run.log.waitUntil(() => run.log.events.slice(from).find((e) => e.type === 'text_delta' || e.type === 'message' || e.type === 'thinking' || e.type === 'tool_call'), 'the stalled turn to begin', b.turnMs);
      await run.engine.abort();
      const end = await b.turnEnd(run, from);
      b.expect(end.status === 'cancelled', `an aborted turn ended ${end.status}`);
      await b.textTurn(run, 'After abort.');
      return { status: 'passed' };
    });
  },

  resume: (b) => {
    if (!b.factory.capabilities.resume) return Promise.resolve(b.skip('the engine does not claim `resume`'));
    return b.with(async () => {
      const first = await b.start();
      await b.textTurn(first, 'Remember this turn.');
      const token = first.log.of('session_identified')[0]?.resumeToken;
      b.expect(token !== undefined, 'no session_identified: nothing to resume from');
      await first.engine.stop();
      first.stopped = true;
      const second = await b.start(token);
      await b.textTurn(second, 'Resumed answer.');
      const forks = second.log.of('session_identified').filter((e) => e.resumeToken !== token);
      b.expect(forks.length === 0, `resuming ${token} reported another session ${forks[0]?.resumeToken}: a fork`);
      return { status: 'passed' };
    });
  },

  stop: (b) =>
    b.with(async () => {
      const run = await b.start();
      await b.textTurn(run, 'Before stop.');
      await run.engine.stop();
      await run.engine.stop(); // idempotent
      run.stopped = true;
      b.expect(run.log.of('exited').length === 1, `exited ${run.log.of('exited').length} times`);
      try {
        await run.engine.send({ localId: 'conformance-late', text: 'too late' });
        b.fail('send after stop was accepted');
      } catch (error) {
        if (error instanceof ConformanceFailure) throw error;
        b.expect(isAseError(error) && REFUSED_AFTER_STOP.includes(error.code), `send after stop failed with ${String(error)}, not an AseError ${REFUSED_AFTER_STOP.join(' or ')}`);
      }
      return { status: 'passed' };
    }),

  bad_output: (b) => {
    const bad = b.driver.badOutput?.bind(b.driver);
    if (!bad) return Promise.resolve(b.skip('the driver has no `badOutput` hook (a real CLI cannot be made to print garbage)'));
    return b.with(async () => {
      const run = await b.start();
      for (const kind of BAD_OUTPUT_KINDS) {
        const answer = `Answer after ${kind}.`;
        const { end, from } = await b.turn(run, await bad(kind, answer), `Print ${kind}, then answer.`);
        b.expect(end.status === 'completed', `after ${kind} output the turn ended ${end.status}: ${describeEvents(run.log.events.slice(from))}`);
        b.expect(b.answerOf(run, from).includes(answer), `after ${kind} output the answer is missing`);
      }
      await b.textTurn(run, 'Still fine.');
      return { status: 'passed' };
    });
  },
};

async function permissionScenario(b: Bench, behavior: 'allow' | 'deny'): Promise<CheckOutcome> {
  const permission = b.driver.permission?.bind(b.driver);
  if (!b.factory.capabilities.permissions) return b.skip('the engine does not claim `permissions`');
  if (!permission) return b.skip('the driver has no `permission` hook');
  return b.with(async () => {
    const run = await b.start();
    const then = behavior === 'allow' ? 'Allowed and done.' : 'Denied, so I stopped.';
    const from = run.log.mark();
    run.turns += 1;
    await run.engine.send({ localId: `conformance-${behavior}`, text: (await permission('touch conformance.txt', then)) ?? 'Create conformance.txt.' });
    const request = await run.log.waitUntil(() => {
      const found = run.log.of('permission_request', from)[0];
      if (!found && run.log.of('turn_complete', from).length > 0) b.fail(`the turn ended without a permission_request: ${describeEvents(run.log.events.slice(from))}`);
      return found;
    }, 'permission_request', b.turnMs);
    await run.engine.answerPermission(request.requestId, behavior === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: 'conformance says no', interrupt: false });
    const end = await b.turnEnd(run, from);
    b.expect(run.log.of('permission_request', from).filter((r) => r.requestId === request.requestId).length === 1, `permission_request ${request.requestId} reported twice`);
    const result = request.callId === undefined ? undefined : run.log.of('tool_result', from).find((r) => r.callId === request.callId);
    if (behavior === 'allow') {
      b.expect(end.status === 'completed', `an allowed tool turn ended ${end.status}`);
      if (result) b.expect(result.status === 'completed', `the allowed tool's result is ${result.status}`);
    } else {
      // Agents differ: some end the turn (cancelled), some tell the model and go on (completed).
      b.expect(end.status !== 'failed', 'a denied tool failed the turn');
      if (result) b.expect(result.status !== 'completed', 'the denied tool completed');
    }
    return { status: 'passed' };
  });
}
