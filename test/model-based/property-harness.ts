/**
 * Helpers for the property tests (session.property.test.ts): readable traces of what a run did,
 * state invariants shared by both properties, and a second system under test, `ScriptedSut`, where
 * scripted fake engines (not the test) produce the agent events and only the client and the
 * clock are driven by the generated actions.
 */
import fc from 'fast-check';
import os from 'node:os';
import { expect } from 'vitest';
import type { SessionConfig, SessionMachineInput } from '../../src/actors/session-context.js';
import { SimulatedClock } from '../../src/effects/clock.js';
import type { Effect } from '../../src/events/effect.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { SessionRuntime } from '../../src/effects/session-runtime.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';
import { FakeEngine, FakeScriptSchema, type FakeScript, type FakeStep, type FakeTurn } from '../../src/engines/fake/index.js';
import type { EngineFactory, EngineStartSpec } from '../../src/engines/core/engine.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import { AseError } from '../../src/errors.js';
import type { AgentEvent, AgentEventBody, TurnUsage } from '../../src/events/agent-event.js';
import type { ControlMode, SessionInput } from '../../src/events/session-input.js';
import type { SessionUsage } from '../../src/events/session-state.js';
import { flush, MODEL_CONFIG, START_TIME } from './harness.js';

// ---------------------------------------------------------------- traces

const SALIENT = ['gen', 'id', 'localId', 'requestId', 'to', 'decision', 'code', 'signal', 'status', 'kind', 'active', 'reason'];

/** `type(key=value, ...)` with the fields that matter for following a run. */
export function describeEvent(event: { type: string } & Record<string, unknown>): string {
  const parts = SALIENT.filter((k) => event[k] !== undefined).map((k) => `${k}=${String(event[k])}`);
  return `${event.type}${parts.length ? `(${parts.join(', ')})` : ''}`;
}

export function describeEffect(effect: Effect): string {
  switch (effect.type) {
    case 'engine.start':
      return `engine.start(gen=${effect.gen}, mode=${effect.mode})`;
    case 'engine.send':
      return `engine.send(gen=${effect.gen}, localId=${effect.message.localId})`;
    case 'engine.answer_permission':
      return `engine.answer_permission(gen=${effect.gen}, requestId=${effect.requestId}, ${effect.decision.behavior})`;
    case 'engine.stop':
    case 'engine.abort':
      return `${effect.type}(gen=${effect.gen})`;
    case 'engine.check_delivery':
      return `engine.check_delivery(gen=${effect.gen}, localId=${effect.message.localId})`;
    case 'engine.configure':
      return `engine.configure(gen=${effect.gen}, ${JSON.stringify(effect.settings)})`;
    case 'client.error':
      return `client.error(${effect.code})`;
    case 'ephemeral.emit':
      return effect.kind === 'status' ? `status(${effect.phase}, ${effect.mode}, gen=${effect.gen})` : `ephemeral.${effect.kind}`;
    case 'transcript.emit':
      return `transcript.${effect.entry.type}(gen=${effect.entry.gen})`;
    case 'timer.set':
      return `timer.set(${effect.id} @+${effect.deadline - START_TIME})`;
    case 'timer.cancel':
      return `timer.cancel(${effect.id})`;
    case 'state.persist':
      return `state.persist(v${effect.expectedVersion}, ${effect.state.phase})`;
  }
}

/** Runs `body`; if it throws, rethrows with `trace()` appended, so the shrunk counterexample reads as a story. */
export async function explained(trace: () => string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n${trace()}`, { cause: error });
  }
}

export function numbered(lines: readonly string[], max = 120): string {
  const shown = lines.length > max ? lines.slice(-max) : lines;
  const skipped = lines.length - shown.length;
  return [
    ...(skipped > 0 ? [`  ... ${skipped} earlier lines`] : []),
    ...shown.map((l, i) => `  ${String(i + 1 + skipped).padStart(3)}. ${l}`),
  ].join('\n');
}

// ---------------------------------------------------------------- invariants

/**
 * State invariants of the actor and its runtime, checked after every step of both properties
 * (on top of `checkEffectLog`):
 * - the runtime's armed timers mirror the context's, and `thinking` is on exactly while its timer runs;
 * - a live generation (the machine waits on it) has an engine in the runtime;
 * - open requests and the current turn belong to the live generation, which was not told to stop;
 * - no request is both open and completed;
 * - `remote.running` has a turn; `remote.idle` has neither a turn nor a queued message (nothing waits forever).
 */
export function checkStateInvariants(runtime: SessionRuntime): void {
  const snapshot = runtime.actor.getSnapshot();
  const ctx = snapshot.context;
  for (const id of Object.keys(ctx.requests)) expect(ctx.completed[id], `request ${id} both open and completed`).toBeUndefined();
  if (runtime.isDone) {
    expect(Object.keys(ctx.requests), 'open requests at the end').toEqual([]);
    return;
  }
  expect(new Set(runtime.armedTimers()), 'runtime timers mirror the context').toEqual(new Set(Object.keys(ctx.timers)));
  expect(ctx.thinking, '`thinking` is on exactly while its timer is armed').toBe('thinking' in ctx.timers);
  if (ctx.liveGen !== null) expect(runtime.engine(ctx.liveGen), `live gen ${ctx.liveGen} has no engine in the runtime`).toBeDefined();
  for (const [id, open] of Object.entries(ctx.requests)) {
    expect(open.gen, `open request ${id} belongs to the live generation`).toBe(ctx.liveGen);
    expect(ctx.stopSentFor, `open request ${id} of a generation told to stop`).not.toBe(open.gen);
  }
  if (ctx.turn) expect(ctx.turn.gen, 'the turn belongs to the live generation').toBe(ctx.liveGen);
  if (snapshot.matches({ remote: 'running' })) expect(ctx.turn, 'remote.running without a turn').not.toBeNull();
  if (snapshot.matches({ remote: 'idle' })) {
    expect(ctx.turn, 'remote.idle with a turn').toBeNull();
    expect(ctx.queue.map((q) => q.localId), 'remote.idle with queued messages (they would wait forever)').toEqual([]);
  }
}

/** Each accepted send went to an engine exactly once, or is still queued (and not both). */
export function checkSendsAccountedFor(effects: readonly Effect[], accepted: readonly string[], queued: readonly string[]): void {
  for (const id of accepted) {
    const deliveries = effects.filter((e) => e.type === 'engine.send' && e.message.localId === id).length;
    expect(deliveries + (queued.includes(id) ? 1 : 0), `accepted send ${id}: delivered ${deliveries}x, queued: ${queued.includes(id)}`).toBe(1);
  }
}

// ---------------------------------------------------------------- scripted engines

const FAST = fc.integer({ min: 1, max: 400 });
const afterMs = fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: FAST, weight: 4 }, { arbitrary: fc.integer({ min: 400, max: 5_000 }), weight: 1 });

const usageArb: fc.Arbitrary<Partial<TurnUsage>> = fc.record(
  {
    inputTokens: fc.nat({ max: 500 }),
    outputTokens: fc.nat({ max: 500 }),
    cacheReadTokens: fc.nat({ max: 50 }),
    cacheWriteTokens: fc.nat({ max: 50 }),
    costUsd: fc.nat({ max: 1_000 }).map((n) => n / 10_000),
  },
  { requiredKeys: [] },
);

const EMITS: AgentEventBody[] = [
  { type: 'thinking', active: true },
  { type: 'thinking', active: false },
  { type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } },
  { type: 'error', kind: 'transient', message: 'overloaded', retryable: true },
  { type: 'error', kind: 'auth', message: 'bad key', retryable: false },
  { type: 'warning', code: 'untested_version', message: 'Claude Code 9.9.9 is not the tested 2.1.330' },
  { type: 'plan', entries: [{ content: 'read the tests', status: 'in_progress' }] },
  { type: 'agent_mode', modeId: 'plan' },
  { type: 'available_commands', commands: [{ name: 'init' }] },
  { type: 'context_usage', usedTokens: 1_200, windowTokens: 200_000 },
];

const textStep: fc.Arbitrary<FakeStep> = fc.record({ afterMs, text: fc.string({ maxLength: 6 }) });
const emitStep: fc.Arbitrary<FakeStep> = fc.record({ afterMs, emit: fc.constantFrom(...EMITS) });
const completeStep: fc.Arbitrary<FakeStep> = fc.record({
  afterMs,
  complete: fc.record({ status: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const), usage: usageArb }, { requiredKeys: [] }),
});
const crashStep: fc.Arbitrary<FakeStep> = fc.record({
  afterMs,
  crash: fc.oneof(fc.constant({ code: 1 }), fc.constant({ code: 0 }), fc.constant({ code: 137, signal: 'SIGKILL' })),
});
const stallStep: fc.Arbitrary<FakeStep> = fc.record({ afterMs, stall: fc.constant(true as const) });
const branch = fc.array(fc.oneof(textStep, emitStep, completeStep, crashStep), { maxLength: 2 });
const askStep: fc.Arbitrary<FakeStep> = fc
  .record({ afterMs, onAllow: fc.option(branch, { nil: undefined }), onDeny: fc.option(branch, { nil: undefined }) })
  .map(({ afterMs: ms, onAllow, onDeny }) => ({
    afterMs: ms,
    ask: { toolName: 'Bash', input: { command: 'rm -rf build' } },
    ...(onAllow && { onAllow }),
    ...(onDeny && { onDeny }),
  }));

// A turn ends at its first complete/crash/stall (or completes after its last step), so those are
// rarer than the steps that make a turn interesting.
export const stepArb: fc.Arbitrary<FakeStep> = fc.oneof(
  { arbitrary: textStep, weight: 4 },
  { arbitrary: askStep, weight: 6 },
  { arbitrary: emitStep, weight: 2 },
  { arbitrary: completeStep, weight: 1 },
  { arbitrary: crashStep, weight: 1 },
  { arbitrary: stallStep, weight: 1 },
);
export const turnArb: fc.Arbitrary<FakeTurn> = fc.array(stepArb, { maxLength: 5 });

const rarely = (weight = 1, of = 5) => fc.oneof({ arbitrary: fc.constant(false), weight: of - weight }, { arbitrary: fc.constant(true), weight });

/** One generation's agent: how fast it starts and stops, whether it obeys, and what its turns do. */
export const scriptArb: fc.Arbitrary<FakeScript> = fc
  .record({
    startDelayMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 })),
    stopDelayMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_500 })),
    ignoreAbort: rarely(),
    ignoreStop: rarely(),
    killAfterMs: fc.integer({ min: 0, max: 2_000 }),
    failStart: rarely(1, 12),
    turns: fc.array(turnArb, { maxLength: 3 }),
  })
  .map((s) => ({
    startDelayMs: s.startDelayMs,
    stopDelayMs: s.stopDelayMs,
    ...(s.ignoreAbort && { ignoreAbort: true }),
    ...(s.ignoreStop && { ignoreStop: true, killAfterMs: s.killAfterMs }),
    ...(s.failStart && { failStart: { code: 1, message: 'cannot start (scripted)' } }),
    ...(s.turns.length > 0 && { turns: s.turns }),
  }));

export type ClientAction =
  | { type: 'send'; repeat?: number }
  | { type: 'abort' }
  | { type: 'switch_mode'; to: ControlMode }
  | { type: 'decide'; target: 'first_open' | 'unknown'; decision: 'allow' | 'deny' }
  | { type: 'online'; online: boolean }
  | { type: 'set_model'; model: string | null }
  | { type: 'set_permission_mode'; mode: string | null }
  | { type: 'advance'; ms: number };

export const actionArb: fc.Arbitrary<ClientAction> = fc.oneof(
  // Mostly short steps (a decision can land while its request is open), sometimes past every deadline.
  { arbitrary: fc.integer({ min: 0, max: 200 }).map((ms) => ({ type: 'advance' as const, ms })), weight: 3 },
  { arbitrary: fc.integer({ min: 200, max: 2_000 }).map((ms) => ({ type: 'advance' as const, ms })), weight: 4 },
  { arbitrary: fc.integer({ min: 2_000, max: 7_000 }).map((ms) => ({ type: 'advance' as const, ms })), weight: 1 },
  { arbitrary: fc.constant({ type: 'send' as const }), weight: 4 },
  { arbitrary: fc.nat({ max: 20 }).map((repeat) => ({ type: 'send' as const, repeat })), weight: 1 },
  {
    arbitrary: fc.record({
      type: fc.constant('decide' as const),
      target: fc.constantFrom('first_open' as const, 'first_open' as const, 'unknown' as const),
      decision: fc.constantFrom('allow' as const, 'deny' as const),
    }),
    weight: 3,
  },
  { arbitrary: fc.constant({ type: 'abort' as const }), weight: 1 },
  { arbitrary: fc.constantFrom('local' as const, 'remote' as const).map((to) => ({ type: 'switch_mode' as const, to })), weight: 1 },
  { arbitrary: fc.boolean().map((online) => ({ type: 'online' as const, online })), weight: 1 },
  { arbitrary: fc.constantFrom('model-a', 'model-b', null).map((model) => ({ type: 'set_model' as const, model })), weight: 1 },
  { arbitrary: fc.constantFrom('plan', 'acceptEdits', null).map((mode) => ({ type: 'set_permission_mode' as const, mode })), weight: 1 },
);

export function describeAction(a: ClientAction): string {
  switch (a.type) {
    case 'send':
      return a.repeat === undefined ? 'client: send (fresh id)' : `client: send (repeat id #${a.repeat})`;
    case 'abort':
      return 'client: abort';
    case 'switch_mode':
      return `client: switch_mode ${a.to}`;
    case 'decide':
      return `client: decide ${a.decision} on ${a.target === 'first_open' ? 'the first open request' : 'an unknown id'}`;
    case 'online':
      return `client: ${a.online ? 'online' : 'offline'}`;
    case 'set_model':
      return `client: set_model ${String(a.model)}`;
    case 'set_permission_mode':
      return `client: set_permission_mode ${String(a.mode)}`;
    case 'advance':
      return `clock: +${a.ms}ms`;
  }
}

/** A FakeEngine that remembers whether the runtime started it (one that never started has no process to stop). */
export class TrackedFakeEngine extends FakeEngine {
  started = false;

  override start(spec: EngineStartSpec): Promise<void> {
    this.started = true;
    return super.start(spec);
  }
}

/** Bounds for the clock-driving loops: far above what any generated run needs. */
const MAX_TIMER_FIRINGS = 2_000;

/**
 * The real runtime with the real FakeEngine playing generated scripts (engine N plays
 * `scripts[N % scripts.length]`), a SimulatedClock, a MemoryStore and a MemoryJournal.
 */
export class ScriptedSut {
  readonly clock = new SimulatedClock(START_TIME);
  readonly store = new MemoryStore();
  readonly journal = new MemoryJournal();
  readonly engines: TrackedFakeEngine[] = [];
  readonly effects: Effect[] = [];
  /** AgentEvents the runtime passed on as the live generation's. */
  readonly liveEvents: AgentEvent[] = [];
  readonly failures: AseError[] = [];
  readonly accepted: string[] = [];
  readonly refusals: AseError[] = [];
  /** The last accepted `set_model` / `set_permission_mode` (null: none, or reset). */
  chosen: { model: string | null; permissionMode: string | null } = { model: null, permissionMode: null };
  /** Engine starts that did not carry the choice in force when they were emitted. */
  readonly startsWithoutChoice: string[] = [];
  /** Everything that happened, for the failure message. */
  readonly log: string[] = [];
  readonly runtime: SessionRuntime;
  readonly sessionId = 'prop';
  #usedIds: string[] = [];
  #nextId = 1;
  #finished = false;
  timerFirings = 0;

  constructor(mode: ControlMode, scripts: readonly FakeScript[], config: Partial<SessionConfig> = {}) {
    for (const script of scripts) FakeScriptSchema.parse(script); // a generator bug fails here, not deep inside
    const engines = this.engines;
    const factory: EngineFactory = {
      name: 'fake',
      capabilities: FakeEngine.capabilities,
      create: (context) => {
        const engine = new TrackedFakeEngine(context, scripts[engines.length % scripts.length]!);
        engines.push(engine);
        return engine;
      },
    };
    const input: SessionMachineInput = {
      sessionId: this.sessionId,
      agent: 'fake',
      workDir: os.tmpdir(), // the scripted fake engine, like a real agent, needs an existing directory
      mode,
      now: START_TIME,
      config: { ...MODEL_CONFIG, ...config },
    };
    this.runtime = new SessionRuntime({
      input,
      registry: new EngineRegistry().register(factory),
      clock: this.clock,
      store: this.store,
      journal: this.journal,
    });
    this.runtime.observe({
      effect: (e) => {
        this.effects.push(e);
        // Settings change only through inputs, which never start an engine: the choice in force is `chosen`.
        if (e.type === 'engine.start' && ((e.model ?? null) !== this.chosen.model || (e.permissionMode ?? null) !== this.chosen.permissionMode)) {
          this.startsWithoutChoice.push(`gen ${e.gen} started with ${JSON.stringify({ model: e.model, permissionMode: e.permissionMode })}, chosen ${JSON.stringify(this.chosen)}`);
        }
        if (e.type.startsWith('engine.') || e.type === 'client.error' || (e.type === 'ephemeral.emit' && e.kind === 'status')) {
          this.log.push(`    → ${describeEffect(e)}`);
        }
      },
      agentEvent: (e) => {
        this.liveEvents.push(e);
        if (e.type !== 'text_delta') this.log.push(`    ← ${describeEvent(e)} @+${e.at - START_TIME}`);
      },
      failure: (error) => {
        this.failures.push(error);
        this.log.push(`    ! ${error.code}: ${error.message}`);
      },
    });
    void this.runtime.done.then(() => (this.#finished = true));
    this.runtime.start();
  }

  get context() {
    return this.runtime.actor.getSnapshot().context;
  }

  /** True once the runtime's `done` resolved: final state, every engine exited, all writes settled. */
  get finished(): boolean {
    return this.#finished;
  }

  dispatch(input: SessionInput): void {
    try {
      const effects = this.runtime.dispatch(input);
      const refused = effects.some((e) => e.type === 'client.error' && e.localId !== undefined);
      if (input.type === 'send' && !refused) this.accepted.push(input.localId);
      const settingRefused = effects.some((e) => e.type === 'client.error');
      if (input.type === 'set_model' && !settingRefused) this.chosen = { ...this.chosen, model: input.model };
      if (input.type === 'set_permission_mode' && !settingRefused) this.chosen = { ...this.chosen, permissionMode: input.mode };
    } catch (error) {
      if (!(error instanceof AseError)) throw error;
      this.refusals.push(error);
      this.log.push(`    ✗ ${error.code}`);
    }
  }

  async act(action: ClientAction): Promise<void> {
    this.log.push(`${describeAction(action)} @+${this.clock.now() - START_TIME}`);
    switch (action.type) {
      case 'send': {
        const reuse = action.repeat !== undefined && this.#usedIds.length > 0;
        const localId = reuse ? this.#usedIds[action.repeat! % this.#usedIds.length]! : `c${this.#nextId++}`;
        if (!reuse) this.#usedIds.push(localId);
        this.log.push(`    localId=${localId}`);
        this.dispatch({ type: 'send', text: `hello ${localId}`, localId });
        break;
      }
      case 'abort':
        this.dispatch({ type: 'abort' });
        break;
      case 'switch_mode':
        this.dispatch({ type: 'switch_mode', to: action.to });
        break;
      case 'decide': {
        const open = Object.keys(this.context.requests)[0];
        const requestId = action.target === 'first_open' && open !== undefined ? open : 'unknown-request';
        this.log.push(`    requestId=${requestId}`);
        this.dispatch({ type: 'decide', requestId, decision: action.decision, ...(action.decision === 'deny' && { message: 'no' }) });
        break;
      }
      case 'online':
        this.dispatch({ type: action.online ? 'client_online' : 'client_offline' });
        break;
      case 'set_model':
        this.dispatch({ type: 'set_model', model: action.model });
        break;
      case 'set_permission_mode':
        this.dispatch({ type: 'set_permission_mode', mode: action.mode });
        break;
      case 'advance':
        await this.advance(action.ms);
        break;
    }
    await flush();
  }

  /**
   * The runtime settings: the stored choice is the last accepted one and every engine start carried
   * the choice in force; at rest (nothing scheduled, every write stored) a running engine also runs
   * with it, whether it started with it or was configured since.
   */
  async checkSettings(atRest: boolean): Promise<void> {
    const ctx = this.context;
    expect({ model: ctx.model, permissionMode: ctx.permissionMode }, 'the stored choice is the last accepted one').toEqual(this.chosen);
    expect(this.startsWithoutChoice, 'engine starts without the choice in force').toEqual([]);
    if (!atRest || this.runtime.isDone) return;
    const gen = ctx.liveGen;
    const engine = gen === null ? undefined : this.engines.find((e) => e.spec?.gen === gen);
    if (engine?.spec && !engine.exitedEmitted && !engine.stopped) {
      expect(engine.settings, `the live engine (gen ${gen}) runs with the choice`).toEqual(this.chosen);
    }
    const saved = await this.store.load(this.sessionId);
    if (saved) expect({ model: saved.state.model ?? null, permissionMode: saved.state.permissionMode ?? null }, 'the stored state holds the choice').toEqual(this.chosen);
  }

  /** Moves time forward one timer at a time, letting promise chains (engine starts, writes) run in between. */
  async advance(ms: number): Promise<void> {
    const target = this.clock.now() + ms;
    for (;;) {
      const due = this.clock.nextDue();
      if (due === undefined || due > target) break;
      this.#fireNext();
      await flush();
    }
    this.clock.advanceTo(target);
  }

  /** No more client input: time passes until nothing is scheduled any more (the session came to rest). */
  async rest(): Promise<void> {
    this.log.push(`clock: until nothing is scheduled @+${this.clock.now() - START_TIME}`);
    while (this.clock.nextDue() !== undefined) {
      this.#fireNext();
      await flush();
    }
    this.log.push(`at rest @+${this.clock.now() - START_TIME}, state ${JSON.stringify(this.runtime.actor.getSnapshot().value)}`);
  }

  /** `stop`, then only time passes: the session must finish (and every engine exit) by itself. */
  async stopAndDrain(): Promise<void> {
    this.log.push(`client: stop @+${this.clock.now() - START_TIME}`);
    if (!this.runtime.isDone) this.dispatch({ type: 'stop' });
    await flush();
    while (!this.#finished) {
      if (this.clock.nextDue() === undefined) {
        await flush();
        if (this.#finished) break;
        throw new Error(`stuck after stop: not finished (actor ${this.runtime.isDone ? 'done' : 'active'}) and no timer armed`);
      }
      this.#fireNext();
      await flush();
    }
    this.log.push(`finished @+${this.clock.now() - START_TIME}`);
  }

  #fireNext(): void {
    if (++this.timerFirings > MAX_TIMER_FIRINGS) throw new Error(`more than ${MAX_TIMER_FIRINGS} timer firings: a timer loop?`);
    this.clock.runNext();
  }

  async transcript(): Promise<TranscriptEntry[]> {
    return this.journal.read(this.sessionId);
  }
}

/** Sums per-turn usage (as the session's `usage` does). */
export function sumUsage(usages: readonly TurnUsage[]): SessionUsage {
  return usages.reduce<SessionUsage>(
    (t, u) => ({
      inputTokens: t.inputTokens + u.inputTokens,
      outputTokens: t.outputTokens + u.outputTokens,
      cacheReadTokens: t.cacheReadTokens + u.cacheReadTokens,
      cacheWriteTokens: t.cacheWriteTokens + u.cacheWriteTokens,
      costUsd: t.costUsd + (u.costUsd ?? 0),
      turns: t.turns + 1,
    }),
    { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
  );
}
