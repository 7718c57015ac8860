/**
 * `modelBasedHarness(engineFactory, options)`: the SessionActor model walk run over anyone's engine.
 * The real statechart and the real effect runtime drive the user's engine (real processes, real
 * time); the walk picks client inputs (sends of every kind the driver can script, abort, permission
 * answers, clients coming and going, waiting for a timer, and finally stop), preferring at each step
 * an input the statechart predicts takes a transition not yet taken (seeded, so a run repeats).
 * After every step the session must settle (idle, a permission open, a stalled turn under way, or
 * ended), and the invariants hold: the effect log's (invariants.ts), the state's, and the engine's
 * event ordering. The report gives the transitions of the SessionActor taken over all transitions.
 */
import { createActor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import { sessionMachine, type SessionEvent } from '../actors/session.js';
import type { SessionConfig } from '../actors/session-context.js';
import { keyOfDefinition, listTransitions } from '../actors/transitions.js';
import type { AgentEvent } from '../events/agent-event.js';
import type { Effect } from '../events/effect.js';
import type { SessionInput } from '../events/session-input.js';
import { isAseError } from '../errors.js';
import type { EngineFactory } from '../engines/core/engine.js';
import { EngineRegistry } from '../engines/core/registry.js';
import { RealClock } from '../effects/clock.js';
import { MemoryJournal } from '../effects/journal/memory-journal.js';
import { SessionRuntime } from '../effects/session-runtime.js';
import { MemoryStore } from '../effects/store/memory-store.js';
import type { AgentDriver, CheckOutcome } from './conformance.js';
import { eventOrderingViolations } from './event-order.js';
import { effectLogViolations, sessionStateViolations } from './invariants.js';

type Snapshot = SnapshotFrom<typeof sessionMachine>;

export interface ModelHarnessOptions {
  /** Shown in the report and the test name; default the factory's name. */
  name?: string;
  workDir: string | (() => string);
  engineOptions?: Record<string, unknown> | (() => Record<string, unknown>);
  /** Scripts the agent, as for `engineConformance`; the walk uses every hook it has. */
  driver: AgentDriver | (() => AgentDriver);
  /** Client inputs before the final stop. Default 30. */
  steps?: number;
  /** Seeds the choice among equally good inputs. Default 1. */
  seed?: number;
  /** How long the session may take to settle after one input. Default 60 s. */
  settleTimeoutMs?: number;
  /** Session timings (short ones let the walk reach timer transitions: hibernation, thinking). Defaults: see DEFAULT_WALK_CONFIG. */
  config?: Partial<SessionConfig>;
  /** The walk may wait for an armed timer due within this many ms. Default 3 000. */
  maxTimerWaitMs?: number;
  /** Fails the run when coverage is below this fraction (0..1). Default 0: report only. */
  minCoverage?: number;
}

export interface HarnessReport {
  name: string;
  /** The inputs the walk made, in order (the last is `stop`). */
  inputs: string[];
  transitions: {
    taken: number;
    total: number;
    /** taken / total. */
    coverage: number;
    /** Keys (`<state>:<event>#<n>`) of the transitions taken. */
    takenKeys: string[];
    /** Keys never taken: for an engine of real processes, mostly crash, persistence and local-mode paths. */
    missing: string[];
  };
  /** Invariant checks run (one set after every step). */
  checks: number;
}

export interface ModelHarness {
  readonly name: string;
  /** One case (`walk`) for the runner adapters. */
  readonly checks: readonly { name: string; title: string; run(): Promise<CheckOutcome> }[];
  /** Runs the walk; rejects with an Error naming the broken invariant and the inputs so far. */
  run(): Promise<HarnessReport>;
}

/** Timings that let a walk of a few dozen steps reach timers (the statechart's defaults are minutes). */
export const DEFAULT_WALK_CONFIG: Partial<SessionConfig> = {
  hibernateAfterMs: 1_500,
  thinkingClearMs: 800,
  persistDebounceMs: 20,
};

type Action =
  | { kind: 'send'; how: 'text' | 'tool' | 'permission' | 'failure' | 'stall' }
  | { kind: 'abort' | 'allow' | 'deny' | 'client_online' | 'client_offline' | 'wait_timer' | 'stop' };

const label = (a: Action) => (a.kind === 'send' ? `send(${a.how})` : a.kind);

/** A small seeded generator (mulberry32): the same seed, the same walk choices. */
function random(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export function modelBasedHarness(factory: EngineFactory, options: ModelHarnessOptions): ModelHarness {
  const name = options.name ?? factory.name;
  const run = () => walk(factory, options, name);
  return {
    name: `${name} (model-based harness)`,
    checks: [
      {
        name: 'walk',
        title: 'the SessionActor model walk over this engine: invariants after every step, transition coverage',
        run: async () => {
          const report = await run();
          return { status: 'passed', detail: `${report.transitions.taken}/${report.transitions.total} transitions in ${report.inputs.length} inputs` };
        },
      },
    ],
    run,
  };
}

async function walk(factory: EngineFactory, options: ModelHarnessOptions, name: string): Promise<HarnessReport> {
  const driver = typeof options.driver === 'function' ? options.driver() : options.driver;
  const all = listTransitions(sessionMachine);
  const taken = new Set<string>();
  const effects: Effect[] = [];
  const accepted: string[] = [];
  const inputs: string[] = [];
  /** Agent events per generation, for the ordering rules. */
  const byGen = new Map<number, AgentEvent[]>();
  const stallIds = new Set<string>();
  /** Stall turns that have shown their first output (the walk moves on once a stall is under way). */
  const stallsBegun = new Set<string>();
  let checks = 0;
  const settleMs = options.settleTimeoutMs ?? 60_000;
  const maxTimerWaitMs = options.maxTimerWaitMs ?? 3_000;
  const rand = random(options.seed ?? 1);
  const clock = new RealClock();
  const registry = new EngineRegistry().register(factory);
  const workDir = typeof options.workDir === 'function' ? options.workDir() : options.workDir;
  const engineOptions = typeof options.engineOptions === 'function' ? options.engineOptions() : (options.engineOptions ?? {});
  const runtime = new SessionRuntime({
    input: { sessionId: `harness-${name}`, agent: factory.name, workDir, mode: 'remote', now: clock.now(), options: engineOptions, config: { ...DEFAULT_WALK_CONFIG, ...options.config } },
    registry,
    clock,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    inspect: (event: InspectionEvent) => {
      if (event.type !== '@xstate.microstep') return;
      for (const def of (event as unknown as { _transitions: Parameters<typeof keyOfDefinition>[0][] })._transitions) taken.add(keyOfDefinition(def));
    },
  });
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const w of [...wakers]) w();
  };
  runtime.observe({
    effect: (e) => {
      effects.push(e);
      queueMicrotask(wake);
    },
    agentEvent: (e) => {
      const list = byGen.get(e.gen) ?? [];
      list.push(e);
      byGen.set(e.gen, list);
      const turn = runtime.actor.getSnapshot().context.turn;
      if (turn && stallIds.has(turn.localId) && (e.type === 'text_delta' || e.type === 'message' || e.type === 'thinking' || e.type === 'tool_call')) stallsBegun.add(turn.localId);
      queueMicrotask(wake);
    },
  });
  const subscription = runtime.actor.subscribe(() => queueMicrotask(wake));
  const fail = (what: string, problems: string[]): never => {
    throw new Error(`model-based harness (${name}): ${what} after inputs [${inputs.join(', ')}]:\n  ${problems.join('\n  ')}`);
  };

  const until = (done: () => boolean, what: string, ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`model-based harness (${name}): timed out after ${ms} ms waiting for ${what} after inputs [${inputs.join(', ')}]; state ${JSON.stringify(runtime.actor.getSnapshot().value)}`));
      }, ms);
      const poll = setInterval(check, 50); // timers and process exits change state without an effect
      const cleanup = () => {
        clearTimeout(timer);
        clearInterval(poll);
        wakers.delete(check);
      };
      wakers.add(check);
      check();
    });

  const settled = (): boolean => {
    if (runtime.isDone) return true;
    const snapshot = runtime.actor.getSnapshot();
    const ctx = snapshot.context;
    if (Object.keys(ctx.requests).length > 0) return true;
    if (ctx.turn && stallIds.has(ctx.turn.localId)) return stallsBegun.has(ctx.turn.localId);
    return ctx.turn === null && ctx.queue.length === 0 && (ctx.phase === 'idle' || ctx.phase === 'hibernated' || ctx.phase === 'failed' || ctx.phase === 'stopped') && !snapshot.matches({ hibernated: 'stopping' });
  };

  const checkInvariants = (): void => {
    checks += 1;
    const ctx = runtime.actor.getSnapshot().context;
    const problems = [
      ...effectLogViolations(effects, accepted, ctx.queue.map((q) => q.localId)),
      ...sessionStateViolations({ armedTimers: runtime.armedTimers(), contextTimers: Object.keys(ctx.timers), openRequests: Object.keys(ctx.requests), completedRequests: Object.keys(ctx.completed), done: runtime.isDone }),
    ];
    for (const [gen, events] of byGen) {
      // A generation's turn ends are checked once it has exited (its last turn may still run).
      problems.push(...eventOrderingViolations(events, { gen }).map((p) => `gen ${gen}: ${p}`));
    }
    if (problems.length > 0) fail('invariants broken', problems);
  };

  const candidates = (): Action[] => {
    const ctx = runtime.actor.getSnapshot().context;
    const out: Action[] = [];
    if (ctx.queue.length < 2) {
      out.push({ kind: 'send', how: 'text' });
      if (driver.tool) out.push({ kind: 'send', how: 'tool' });
      if (driver.permission && factory.capabilities.permissions) out.push({ kind: 'send', how: 'permission' });
      if (driver.failure) out.push({ kind: 'send', how: 'failure' });
      if (driver.stall) out.push({ kind: 'send', how: 'stall' });
    }
    out.push({ kind: 'abort' }, { kind: 'client_online' }, { kind: 'client_offline' });
    if (Object.keys(ctx.requests).length > 0) out.push({ kind: 'allow' }, { kind: 'deny' });
    const next = Math.min(...Object.values(ctx.timers));
    if (Number.isFinite(next) && next - clock.now() <= maxTimerWaitMs) out.push({ kind: 'wait_timer' });
    return out;
  };

  /** The SessionEvent an action dispatches (for the statechart's prediction), if any. */
  const eventOf = (a: Action, localId: string): SessionEvent | undefined => {
    const ctx = runtime.actor.getSnapshot().context;
    const at = ctx.now;
    const open = Object.keys(ctx.requests)[0];
    switch (a.kind) {
      case 'send':
        return { type: 'send', text: 'x', localId, at };
      case 'allow':
      case 'deny':
        return open === undefined ? undefined : { type: 'decide', requestId: open, decision: a.kind, at };
      case 'wait_timer':
        return undefined;
      default:
        return { type: a.kind, at } as SessionEvent;
    }
  };

  /** How many transitions not taken yet `event` would take from the current snapshot (the pure statechart, nothing performed). */
  const novelty = (event: SessionEvent | undefined): number => {
    if (!event) return 0.5;
    const keys: string[] = [];
    try {
      const actor = createActor(sessionMachine, {
        snapshot: runtime.actor.getSnapshot() as Snapshot,
        input: undefined as never,
        inspect: (ev) => {
          if (ev.type !== '@xstate.microstep') return;
          for (const def of (ev as unknown as { _transitions: Parameters<typeof keyOfDefinition>[0][] })._transitions) keys.push(keyOfDefinition(def));
        },
      });
      actor.start();
      actor.send(event);
      actor.stop();
    } catch {
      return 0;
    }
    return keys.filter((k) => !taken.has(k)).length;
  };

  let sends = 0;
  const uses = new Map<string, number>();
  const perform = async (a: Action): Promise<void> => {
    inputs.push(label(a));
    const ctx = runtime.actor.getSnapshot().context;
    let input: SessionInput | undefined;
    switch (a.kind) {
      case 'send': {
        const localId = `walk-${++sends}`;
        let text: string | undefined;
        if (a.how === 'text') text = (await driver.text(`Walk answer ${sends}.`)) ?? `Please answer: Walk answer ${sends}.`;
        else if (a.how === 'tool') text = (await driver.tool!('echo walk', `Walk tool ${sends}.`)) ?? 'Run `echo walk`.';
        else if (a.how === 'permission') text = (await driver.permission!('touch walk.txt', `Walk permission ${sends}.`)) ?? 'Create walk.txt.';
        else if (a.how === 'failure') text = (await driver.failure!()) ?? 'This turn fails.';
        else {
          const stall = await driver.stall!();
          text = stall.prompt ?? 'Take your time.';
          stallIds.add(localId);
        }
        input = { type: 'send', text, localId };
        break;
      }
      case 'allow':
      case 'deny': {
        const requestId = Object.keys(ctx.requests)[0]!;
        input = a.kind === 'allow' ? { type: 'decide', requestId, decision: 'allow' } : { type: 'decide', requestId, decision: 'deny', message: 'the walk says no' };
        break;
      }
      case 'wait_timer': {
        const before = JSON.stringify(Object.keys(ctx.timers).sort());
        const due = Math.min(...Object.values(ctx.timers));
        await until(() => clock.now() > due + 20 || JSON.stringify(Object.keys(runtime.actor.getSnapshot().context.timers).sort()) !== before, 'a timer to fire', maxTimerWaitMs + settleMs);
        return;
      }
      default:
        input = { type: a.kind } as SessionInput;
    }
    try {
      const out = runtime.dispatch(input);
      if (input.type === 'send' && !out.some((e) => e.type === 'client.error')) accepted.push(input.localId);
    } catch (error) {
      if (!isAseError(error)) throw error;
      // Refused inputs (a full queue, a stopping session) are part of the walk.
    }
  };

  try {
    runtime.start();
    await until(settled, 'the session to start', settleMs);
    checkInvariants();
    const steps = options.steps ?? 30;
    for (let step = 0; step < steps && !runtime.isDone; step++) {
      // New transitions first; then inputs used least so far (the engine's reactions are where the rest hides); then chance.
      const scored = candidates().map((a) => ({ a, score: novelty(eventOf(a, `walk-${sends + 1}`)) + 1 / (1 + (uses.get(label(a)) ?? 0)) + rand() * 0.3 }));
      scored.sort((x, y) => y.score - x.score);
      uses.set(label(scored[0]!.a), (uses.get(label(scored[0]!.a)) ?? 0) + 1);
      await perform(scored[0]!.a);
      await until(settled, `the session to settle after ${inputs.at(-1)}`, settleMs);
      checkInvariants();
    }
    inputs.push('stop');
    runtime.dispatch({ type: 'stop' });
    await runtime.done;
    await until(() => runtime.liveEngineGens().length === 0, 'every engine to exit', settleMs);
    checkInvariants();
    for (const [gen, events] of byGen) {
      const problems = eventOrderingViolations(events, { gen });
      if (events.at(-1)?.type !== 'exited') problems.push(`gen ${gen} did not end with exited`);
      if (problems.length > 0) fail(`engine gen ${gen}`, problems);
    }
  } finally {
    subscription.unsubscribe();
    if (!runtime.isDone) {
      try {
        runtime.dispatch({ type: 'stop' });
        await Promise.race([runtime.done, new Promise((r) => setTimeout(r, settleMs))]);
      } catch {
        // already failing
      }
    }
  }

  const takenKeys = all.map((t) => t.key).filter((k) => taken.has(k));
  const report: HarnessReport = {
    name,
    inputs,
    transitions: { taken: takenKeys.length, total: all.length, coverage: takenKeys.length / all.length, takenKeys, missing: all.map((t) => t.key).filter((k) => !taken.has(k)) },
    checks,
  };
  if (options.minCoverage !== undefined && report.transitions.coverage < options.minCoverage) {
    fail('coverage too low', [`${report.transitions.taken}/${report.transitions.total} transitions, below ${options.minCoverage}`]);
  }
  return report;
}
