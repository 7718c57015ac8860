/**
 * The system under test for model-based and property tests: the real SessionActor inside the real
 * effect runtime, with a manual fake engine per generation (events are injected *through* the
 * engine, so they take the runtime's real path), a SimulatedClock, a store whose writes the test
 * completes, and an invariant checker over everything the runtime did.
 */
import { expect } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../src/actors/session.js';
import type { SessionConfig, SessionMachineInput } from '../../src/actors/session-context.js';
import { keyOfDefinition } from '../../src/actors/transitions.js';
import { SimulatedClock } from '../../src/effects/clock.js';
import type { Effect } from '../../src/events/effect.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { SessionRuntime } from '../../src/effects/session-runtime.js';
import type { Lease, SaveResult, SessionStore } from '../../src/effects/store/session-store.js';
import { FakeEngine } from '../../src/engines/fake/index.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import type { AgentEventBody } from '../../src/events/agent-event.js';
import type { SessionInput } from '../../src/events/session-input.js';
import type { PersistedSession, VersionedSession } from '../../src/events/session-state.js';
import type { UserMessage } from '../../src/events/engine-input.js';
import { AseError } from '../../src/errors.js';
import { effectLogViolations, sessionStateViolations } from '../../src/testing/invariants.js';

/** Small, pairwise-distinct durations so two timers rarely fall due at the same instant. */
export const MODEL_CONFIG: Partial<SessionConfig> = {
  // Stall before the permission deadline, so a stall check can find a request still open.
  permissionTimeoutMs: 6_100,
  stallTimeoutMs: 4_300,
  interruptGraceMs: 1_100,
  stopTimeoutMs: 1_300,
  restartBaseMs: 1_700,
  restartMaxMs: 3_400,
  maxRestarts: 1,
  thinkingClearMs: 2_300,
  persistDebounceMs: 130,
  maxPersistRetries: 1,
  hibernateAfterMs: 2_900,
};

export const START_TIME = 1_000_000;

/** A store whose writes wait until the test settles them: ok, conflict (another writer), or failure. */
export class ManualStore implements SessionStore {
  readonly pending: { sessionId: string; state: PersistedSession; expectedVersion: number; settle: (r: SaveResult | Error) => void }[] = [];
  saved: VersionedSession | undefined;

  load(): Promise<VersionedSession | undefined> {
    return Promise.resolve(undefined);
  }

  save(sessionId: string, state: PersistedSession, expectedVersion: number): Promise<SaveResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({
        sessionId,
        state,
        expectedVersion,
        settle: (r) => (r instanceof Error ? reject(r) : resolve(r)),
      });
    });
  }

  settle(outcome: 'ok' | 'conflict' | 'fail'): boolean {
    const next = this.pending.shift();
    if (!next) return false;
    if (outcome === 'ok') {
      this.saved = { version: next.expectedVersion + 1, state: next.state };
      next.settle({ ok: true, version: next.expectedVersion + 1 });
    } else if (outcome === 'conflict') {
      next.settle({ ok: false, version: next.expectedVersion + 1 });
    } else {
      next.settle(new AseError('STORE_IO', 'disk full (simulated)'));
    }
    return true;
  }

  list(): Promise<string[]> {
    return Promise.resolve([]);
  }

  delete(): Promise<void> {
    return Promise.resolve();
  }

  // The model runs one host: leases are granted and never contested (the conformance suite tests them).
  acquire(sessionId: string): Promise<Lease> {
    return Promise.resolve({ sessionId, fence: 1, owner: { host: 'model', pid: 1 }, expiresAt: Number.MAX_SAFE_INTEGER, ttlMs: 1 });
  }

  renew(lease: Lease): Promise<Lease> {
    return Promise.resolve(lease);
  }

  release(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A manual fake engine that can also be asked whether it received a message: the answer waits
 * until the test gives it (the model's `delivery_checked` event), like the store's writes.
 */
export class CheckableFakeEngine extends FakeEngine {
  readonly pendingChecks: ((received: boolean | undefined) => void)[] = [];

  wasReceived(_message: UserMessage): Promise<boolean | undefined> {
    return new Promise((resolve) => this.pendingChecks.push(resolve));
  }
}

/** Lets promise chains (engine start, store results) run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

export class Sut {
  readonly clock = new SimulatedClock(START_TIME);
  readonly store = new ManualStore();
  readonly journal = new MemoryJournal();
  readonly #created: CheckableFakeEngine[] = [];
  readonly effects: Effect[] = [];
  readonly runtime: SessionRuntime;
  /** Transition keys taken (from xstate's microstep inspection). */
  readonly taken: Set<string>;
  /** Local ids of sends the session accepted. */
  readonly accepted: string[] = [];
  readonly refusals: AseError[] = [];
  /** The last accepted `set_model` / `set_permission_mode` (null: none, or reset). */
  chosen: { model: string | null; permissionMode: string | null };
  /** Engine starts that did not carry the choice in force when they were emitted. */
  readonly startsWithoutChoice: string[] = [];

  constructor(input: SessionMachineInput, taken: Set<string> = new Set()) {
    this.chosen = { model: input.restored?.state.model ?? null, permissionMode: input.restored?.state.permissionMode ?? null };
    this.taken = taken;
    const created = this.#created;
    const factory: EngineFactory = {
      name: 'fake',
      capabilities: FakeEngine.capabilities,
      // The runtime creates one engine per `engine.start` effect, in order.
      create: (context) => {
        const engine = new CheckableFakeEngine(context, { manual: true });
        created.push(engine);
        return engine;
      },
    };
    const registry = new EngineRegistry();
    registry.register(factory);
    this.runtime = new SessionRuntime({
      input,
      registry,
      clock: this.clock,
      store: this.store,
      journal: this.journal,
      inspect: (event: InspectionEvent) => {
        if (event.type === '@xstate.microstep') {
          for (const def of (event as unknown as { _transitions: Parameters<typeof keyOfDefinition>[0][] })._transitions) {
            this.taken.add(keyOfDefinition(def));
          }
        }
      },
    });
    this.runtime.observe({
      effect: (e) => {
        this.effects.push(e);
        // Settings change only through inputs, which never start an engine: the choice in force is `chosen`.
        if (e.type === 'engine.start' && ((e.model ?? null) !== this.chosen.model || (e.permissionMode ?? null) !== this.chosen.permissionMode)) {
          this.startsWithoutChoice.push(`gen ${e.gen} started with ${JSON.stringify({ model: e.model, permissionMode: e.permissionMode })}, chosen ${JSON.stringify(this.chosen)}`);
        }
      },
    });
    this.runtime.start();
  }

  /** The fake engine the runtime created for `gen` (engines are created in generation order). */
  engineFor(gen: number): CheckableFakeEngine | undefined {
    const starts = this.effects.filter((e) => e.type === 'engine.start');
    const index = starts.findIndex((e) => e.type === 'engine.start' && e.gen === gen);
    return index >= 0 ? this.#created[index] : undefined;
  }

  get context() {
    return this.runtime.actor.getSnapshot().context;
  }

  /** Applies one machine event the way it would really arrive. */
  async apply(event: SessionEvent): Promise<void> {
    const before = this.runtime.actor.getSnapshot();
    const effectsBefore = this.effects.length;
    await this.#apply(event);
    // Waking from hibernation (or leaving it for local mode) resumes the agent's own session.
    if (before.matches('hibernated') && before.context.resumeToken !== undefined) {
      for (const e of this.effects.slice(effectsBefore)) {
        if (e.type === 'engine.start') expect(e.resumeToken, `gen ${e.gen} started after hibernation without the resume token`).toBe(before.context.resumeToken);
      }
    }
  }

  async #apply(event: SessionEvent): Promise<void> {
    switch (event.type) {
      case 'send':
      case 'abort':
      case 'switch_mode':
      case 'decide':
      case 'set_model':
      case 'set_permission_mode':
      case 'client_online':
      case 'client_offline':
      case 'record_verification':
      case 'stop': {
        const { at: _at, ...input } = event;
        try {
          const effects = this.runtime.dispatch(input as SessionInput);
          const refused = effects.some((e) => e.type === 'client.error' && e.localId !== undefined && input.type === 'send');
          if (input.type === 'send' && !refused) this.accepted.push(input.localId);
          // A settings change is accepted unless the statechart refused it (a stopping session).
          const settingRefused = effects.some((e) => e.type === 'client.error');
          if (input.type === 'set_model' && !settingRefused) this.chosen = { ...this.chosen, model: input.model };
          if (input.type === 'set_permission_mode' && !settingRefused) this.chosen = { ...this.chosen, permissionMode: input.mode };
        } catch (error) {
          if (!(error instanceof AseError)) throw error;
          this.refusals.push(error);
        }
        break;
      }
      case 'timer_fired': {
        const armed = this.runtime.armedTimers();
        expect(armed, `timer ${event.id} should be armed in the runtime`).toContain(event.id);
        this.clock.runNext();
        break;
      }
      case 'persist_ok':
        expect(this.store.settle('ok')).toBe(true);
        break;
      case 'persist_conflict':
        expect(this.store.settle('conflict')).toBe(true);
        break;
      case 'persist_failed':
        expect(this.store.settle('fail')).toBe(true);
        break;
      case 'delivery_checked': {
        // The engine's answer to the runtime's question, if one is pending; otherwise a stray report.
        const answer = this.runtime.engine(event.gen) ? this.engineFor(event.gen)?.pendingChecks.shift() : undefined;
        if (answer) answer(event.received ?? undefined);
        else this.runtime.deliver(event);
        break;
      }
      case 'agent_output': {
        // Output that arrives in one go: injected without a pause, so the runtime batches it.
        const engine = this.runtime.engine(event.gen) ? this.engineFor(event.gen) : undefined;
        if (engine) {
          for (const { gen: _gen, at: _at, ...body } of event.events) engine.inject(body as AgentEventBody);
        } else this.runtime.deliver({ ...event, at: this.clock.now() });
        break;
      }
      default: {
        const { gen, at: _at, ...body } = event;
        const engine = this.runtime.engine(gen) ? this.engineFor(gen) : undefined;
        if (engine) engine.inject(body as AgentEventBody);
        else this.runtime.deliver({ ...event, at: this.clock.now() } as SessionEvent);
      }
    }
    await flush();
  }

  /** Feeds a stale-generation event and asserts it changed nothing and caused nothing. */
  async assertStaleIgnored(): Promise<void> {
    if (this.runtime.isDone) return;
    const before = structuredClone(this.runtime.actor.getSnapshot().context);
    const beforeValue = this.runtime.actor.getSnapshot().value;
    const count = this.effects.length;
    const stale = [before.gen - 1, before.gen + 7].filter((g) => g >= 0 && g !== before.liveGen);
    for (const gen of stale) {
      for (const e of staleEvents(gen, this.clock.now())) this.runtime.deliver(e);
    }
    await flush();
    expect(this.effects.length, 'stale events must emit nothing').toBe(count);
    expect(this.runtime.actor.getSnapshot().context).toEqual(before);
    expect(this.runtime.actor.getSnapshot().value).toEqual(beforeValue);
  }

  checkInvariants(): void {
    checkEffectLog(this.effects, this.accepted, this.context.queue.map((q) => q.localId));
    const ctx = this.context;
    const view = { armedTimers: this.runtime.armedTimers(), contextTimers: Object.keys(ctx.timers), openRequests: Object.keys(ctx.requests), completedRequests: Object.keys(ctx.completed), done: this.runtime.isDone };
    expect(sessionStateViolations(view)).toEqual([]);
    this.checkHibernation();
    this.checkSettings();
  }

  /**
   * Hibernation: the timer runs only while the session is remote and idle; a hibernated session
   * has no turn, no open request and nothing queued unless a send arrived while its agent was still
   * stopping; asleep, it has no live generation at all (its agent is stopped or abandoned).
   */
  checkHibernation(): void {
    const snapshot = this.runtime.actor.getSnapshot();
    const ctx = snapshot.context;
    if ('hibernate' in ctx.timers) expect(snapshot.value, 'the hibernate timer is armed only while idle').toEqual({ remote: 'idle' });
    if (!snapshot.matches('hibernated')) return;
    expect(ctx.phase).toBe('hibernated');
    expect(ctx.turn, 'a hibernated session has no turn').toBeNull();
    expect(Object.keys(ctx.requests), 'a hibernated session has no open request').toEqual([]);
    if (snapshot.matches({ hibernated: 'asleep' })) {
      expect(ctx.liveGen, 'asleep: no live generation').toBeNull();
      expect(ctx.queue, 'asleep: nothing waits to be sent').toEqual([]);
      expect(ctx.mode).toBe('remote');
    }
  }

  /**
   * The runtime settings: the stored choice is the last accepted one; every engine start carried
   * the choice in force; every state write carries the choice of its moment (the newest one, once
   * nothing is left to write); and the live engine has it once the write recording it is stored.
   */
  checkSettings(): void {
    const ctx = this.context;
    expect({ model: ctx.model, permissionMode: ctx.permissionMode }, 'the stored choice is the last accepted one').toEqual(this.chosen);
    expect(this.startsWithoutChoice, 'engine starts without the choice in force').toEqual([]);
    const writes = this.effects.filter((e) => e.type === 'state.persist');
    const last = writes[writes.length - 1];
    if (last && !ctx.persist.dirty) {
      expect({ model: last.state.model ?? null, permissionMode: last.state.permissionMode ?? null }, 'the newest write carries the choice').toEqual(this.chosen);
    }
    const gen = ctx.liveGen;
    const engine = gen === null ? undefined : this.engineFor(gen);
    const settled = this.store.pending.length === 0 && !ctx.persist.inFlight && !ctx.persist.dirty;
    if (engine?.spec && !engine.exitedEmitted && ctx.stopSentFor !== gen && settled) {
      expect(engine.settings, `the live engine (gen ${gen}) runs with the choice`).toEqual(this.chosen);
    }
  }
}

function staleEvents(gen: number, at: number): SessionEvent[] {
  return [
    { type: 'ready', gen, at },
    { type: 'turn_complete', gen, at, status: 'completed', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    { type: 'permission_request', gen, at, requestId: `stale-${gen}`, toolName: 'Bash', input: {} },
    { type: 'exited', gen, at, code: 1, signal: null },
    { type: 'message', gen, at, role: 'assistant', id: `m-${gen}`, blocks: [] },
    { type: 'session_identified', gen, at, resumeToken: `stale-token-${gen}` },
  ];
}

/** The effect-log invariants (the kit's `effectLogViolations`, shared with `modelBasedHarness`), as an assertion. */
export function checkEffectLog(effects: readonly Effect[], accepted: readonly string[], queued: readonly string[]): void {
  expect(effectLogViolations(effects, accepted, queued)).toEqual([]);
}
