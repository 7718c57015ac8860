/**
 * The effect runtime: runs a SessionActor and carries out the effects it emits. It is the only
 * place with I/O: engine instances (one per generation), timers on an injectable clock, the
 * session store, and the transcript journal. Everything it learns goes back into the actor as
 * events, so all decisions stay in the statechart.
 *
 * Durability rules it enforces on top of the effects' order (docs/architecture.md, "Ownership,
 * recovery and what each promise covers"):
 * - Write-ahead delivery: `engine.send` is performed, and the `user_message` entry appended, only
 *   once a state write recording that delivery is stored; so a restore never sends a message again
 *   that the agent may have, and the journal never shows a delivery the state does not.
 * - `durable()` resolves once a write holding every change made so far is stored (writes in flight
 *   are group-committed: one write carries everything accepted while the previous one ran).
 * - Ownership: with a lease, every write carries its fence, the lease is renewed while the session
 *   runs and released when it ends; a write or renewal refused with LEASE_LOST fences this runtime:
 *   it stops its engine, writes nothing more, and winds the statechart down.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { emitEffectsInBatches, isEffectBatch, sessionMachine, type EffectBatch, type SessionEvent } from '../actors/session.js';
import { addsNothingAfter, isBatchableOutput, type AgentOutputEvent } from '../actors/agent-output.js';
import type { SessionContext, SessionMachineInput } from '../actors/session-context.js';
import type { AgentEvent } from '../events/agent-event.js';
import { SessionInputSchema, type SessionInput } from '../events/session-input.js';
import type { EngineRegistry } from '../engines/core/registry.js';
import type { AgentEngine, TerminalHost } from '../engines/core/engine.js';
import type { HostToolbox } from '../engines/core/host-tools.js';
import type { ProcessObserver } from '../engines/transport/process-observer.js';
import { AseError, isAseError } from '../errors.js';
import type { Clock, TimerHandle } from './clock.js';
import { checkMessageSize, DEFAULT_MAX_MESSAGE_BYTES } from './input-limits.js';
import type { Effect, EffectOf } from '../events/effect.js';
import type { EngineSettings } from '../events/engine-input.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import { appendEntries, type TranscriptJournal } from './journal/transcript-journal.js';
import type { Lease, SessionStore } from './store/session-store.js';

/** How long after a renewal the runtime trusts its lease without asking the store (of the lease's ttl). */
const LEASE_TRUST = 0.8;

/** Inputs that change nothing another host could own: after a lost lease they are not refused with `LEASE_LOST`. */
const OWNER_FREE_INPUTS: ReadonlySet<SessionInput['type']> = new Set(['stop', 'client_online', 'client_offline']);

export interface RuntimeOptions {
  input: SessionMachineInput;
  registry: EngineRegistry;
  clock: Clock;
  store: SessionStore;
  journal: TranscriptJournal;
  /** Overrides the agent executable for every engine. */
  bin?: string;
  /** Told about every process an engine spawns (EngineContext.processes): the process registry. */
  processes?: ProcessObserver;
  /** Where a local-mode engine hands its terminal UI (EngineContext.terminal): the session's terminal. */
  terminal?: TerminalHost;
  /** The session's host tools (EngineContext.hostTools), handed to every engine generation. */
  hostTools?: HostToolbox;
  /** Largest `send` text in UTF-8 bytes; a larger one is refused with `INVALID_INPUT`. Default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  maxMessageBytes?: number;
  /** XState inspection hook (the model-based harness uses it for transition coverage). */
  inspect?: (event: InspectionEvent) => void;
  /**
   * The session's ownership lease (from `store.acquire`). Every write carries its fence; it is
   * renewed every `ttlMs / 3` on the clock and released when the session ends. Without it, writes
   * are compare-and-set only.
   */
  lease?: Lease;
}

/** What one client input did: its effects, and the write that stores the state right after it (-1: none needed). */
export interface AppliedInput {
  effects: Effect[];
  writeIndex: number;
}

/** A caller waiting for the state as of some moment to be stored. */
interface WriteWaiter {
  /** The first write index that holds what the caller waits for. */
  index: number;
  resolve(): void;
  reject(error: AseError): void;
}

/** Work held until a write is stored: an `engine.send`, or the journal append of its `user_message`. */
interface Hold {
  index: number;
  kind: 'engine' | 'journal';
  release(go: boolean): void;
}

/** A transcript entry waiting to be handed to the journal, and the write it waits for (a delivery's). */
interface PendingAppend {
  entry: TranscriptEntry;
  stored: Promise<boolean> | undefined;
}

/** Everything the runtime tells the outside world, in order. */
export interface RuntimeObserver {
  /** An effect the SessionActor emitted, before the runtime performs it. */
  effect?(effect: Effect): void;
  /** An AgentEvent of the live generation, as the engine reported it. */
  agentEvent?(event: AgentEvent): void;
  /** The runtime itself failed to do something (journal write, engine call); the session goes on. */
  failure?(error: AseError): void;
}

export class SessionRuntime {
  readonly actor: Actor<typeof sessionMachine>;
  readonly #opts: RuntimeOptions;
  readonly #engines = new Map<number, AgentEngine>();
  readonly #stopping = new Map<number, Promise<void>>();
  /** Generations told to stop (kept after `stop()` settled, unlike `#stopping`). */
  readonly #stopRequested = new Set<number>();
  /** Generations whose `engine.start()` has been called (it runs after older engines are gone). */
  readonly #started = new Set<number>();
  readonly #timers = new Map<string, TimerHandle>();
  readonly #observers = new Set<RuntimeObserver>();
  #persistChain: Promise<void> = Promise.resolve();
  /** The version the store holds after this runtime's last successful write (or the restored one). */
  #storedVersion: number;
  /** Settles once every transcript entry appended so far is durable (or failed and was reported). */
  #journalChain: Promise<void> = Promise.resolve();
  /** Settles once every transcript entry so far was handed to the journal (in order). */
  #journalIssue: Promise<void> = Promise.resolve();
  /** The journal appends the next state write must wait for (see #persist), if any. */
  #journalFirst: Promise<void> | undefined;
  /** Transcript entries not yet being issued, appended since the last batch started issuing (see #append). */
  #appendBatch: PendingAppend[] | undefined;
  #engineChain: Promise<void> = Promise.resolve();
  /** Effects emitted while a client input is being processed (to return its rejection). */
  #collecting: Effect[] | null = null;
  /** State writes issued so far (`state.persist` effects), in order; a write's index is its position. */
  #writesIssued = 0;
  /** Index of the newest write that was stored (-1: none yet). */
  #lastStored = -1;
  #waiters: WriteWaiter[] = [];
  #holds: Hold[] = [];
  /** Engine calls queue behind a held `engine.send` so they reach the engine in the order emitted. */
  #engineGate: Promise<void> | null = null;
  #lease: Lease | undefined;
  /** `performance.now()` until which the lease is trusted without asking the store. */
  #leaseTrustedUntil = 0;
  #renewing: Promise<void> | null = null;
  #renewTimer: TimerHandle | undefined;
  /** Another host took the lease: nothing is written and nothing goes to an engine any more. */
  #fenced = false;
  /** How deep in `actor.send` calls the runtime is (an input given inside one waits in `#deferred`). */
  #depth = 0;
  #draining = false;
  /** Set while an input is dispatched: the first snapshot after it (its own step) is captured. */
  #capture = false;
  #captured: { persist: SessionContext['persist']; issued: number } | undefined;
  #deferred: (() => void)[] = [];
  /** Agent output of the live engine not yet handed to the statechart (see #onEngineEvent). */
  #pendingOutput: PendingOutput | undefined;
  #done: Promise<void>;
  #resolveDone!: () => void;

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#storedVersion = opts.input.restored?.version ?? 0;
    this.#lease = opts.lease;
    if (opts.lease) this.#leaseTrustedUntil = performance.now() + opts.lease.ttlMs * LEASE_TRUST;
    this.actor = createActor(sessionMachine, { input: opts.input, ...(opts.inspect && { inspect: inspectEachEffect(inspectBatchCopies(opts.inspect)) }) });
    // Each step's effects come as one batch (one XState emit per step, not per effect), performed
    // in order as XState would have delivered them one by one.
    emitEffectsInBatches(this.actor);
    this.actor.on('*', (emitted) => {
      if (!isEffectBatch(emitted)) return this.#perform(emitted);
      const { effects } = emitted;
      const superseded = supersededTimerEffects(effects);
      for (let i = 0; i < effects.length; i++) {
        try {
          this.#perform(effects[i]!, superseded?.has(i) === true);
        } catch (error) {
          reportLater(error); // As XState reports a throwing listener, the next effects still go.
        }
      }
      // Performed: a dead XState record that still points at the batch must not keep its effects
      // (transcript entries, the output in them) alive (#flushOutput says why). Inspectors were
      // handed the effects one by one (inspectEachEffect), never this array.
      effects.length = 0;
    });
    this.#done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.actor.subscribe({
      next: (snapshot) => {
        if (!this.#capture) return;
        this.#capture = false;
        this.#captured = { persist: snapshot.context.persist, issued: this.#writesIssued };
      },
      complete: () => void this.#finish(),
    });
  }

  observe(observer: RuntimeObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  start(): void {
    this.#armRenewal();
    this.#depth += 1;
    try {
      this.actor.start();
    } finally {
      this.#depth -= 1;
      this.#drainDeferred();
    }
  }

  /** The lease this runtime holds (renewed as it runs), if any. */
  get lease(): Lease | undefined {
    return this.#lease;
  }

  /** True once another host took this session's lease. */
  get fenced(): boolean {
    return this.#fenced;
  }

  /**
   * Resolves once a state write holding every change made so far is stored: at once when nothing
   * is pending. Rejects with `PERSIST_FAILED` when that write is given up (or nothing is left to
   * write it), with `LEASE_LOST` when this runtime was fenced.
   */
  durable(): Promise<void> {
    return this.stored(this.#writeIndexOf(this.actor.getSnapshot().context.persist, this.#writesIssued));
  }

  /**
   * Resolves once write `writeIndex` (or a later one) is stored: what `AppliedInput.writeIndex`
   * names. Rejects like `durable()`.
   */
  stored(writeIndex: number): Promise<void> {
    if (this.#fenced) return Promise.reject(this.#leaseLostError());
    if (writeIndex <= this.#lastStored) return Promise.resolve();
    const { persist, timers } = this.actor.getSnapshot().context;
    if (writeIndex >= this.#writesIssued && !persist.inFlight && !('persist' in timers) && !this.isDone) {
      // A write was given up and nothing has asked for another yet.
      return Promise.reject(new AseError('PERSIST_FAILED', 'the session state could not be stored (an earlier write failed); a later change retries it'));
    }
    return new Promise((resolve, reject) => this.#waiters.push({ index: writeIndex, resolve, reject }));
  }

  /**
   * The write that holds what matters of the state whose persist flags are `persist`, when `issued`
   * writes were issued: an urgent change waiting for the write in flight goes in the next one; else
   * the write in flight holds it (a non-urgent change behind it, such as a phase, is not waited for);
   * else a pending debounced write; else nothing is pending.
   */
  #writeIndexOf(persist: SessionContext['persist'], issued: number): number {
    if (persist.dirty && persist.urgent) return issued;
    if (persist.inFlight) return issued - 1;
    if (persist.dirty) return issued;
    return -1;
  }

  /** Resolves when the session reached its final state, every engine exited and all writes settled. */
  get done(): Promise<void> {
    return this.#done;
  }

  get isDone(): boolean {
    return this.actor.getSnapshot().status !== 'active';
  }

  /**
   * Validates a client input, stamps it, and hands it to the SessionActor. Returns the effects it
   * caused (a `client.error` among them means it was refused and nothing was applied).
   */
  dispatch(input: SessionInput): Effect[] {
    return this.#applyNow(input).effects;
  }

  #applyNow(input: SessionInput): AppliedInput {
    if (input?.type === 'send' && typeof input.text === 'string') checkMessageSize(input.text, this.#opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    const parsed = SessionInputSchema.safeParse(input);
    if (!parsed.success) {
      throw new AseError('INVALID_INPUT', `invalid ${String((input as { type?: unknown })?.type ?? 'input')}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`);
    }
    // Fenced, the session winds down (or has), but it did not stop: another host owns it. Whether the
    // renewal timer or this input's own write found that out first, the input is refused the same way.
    if (this.#fenced && !OWNER_FREE_INPUTS.has(parsed.data.type)) throw this.#leaseLostError();
    if (this.isDone) throw new AseError('SESSION_STOPPED', 'the session has stopped');
    if (parsed.data.type === 'set_model') this.#checkSettings({ model: parsed.data.model });
    else if (parsed.data.type === 'set_permission_mode') this.#checkSettings({ permissionMode: parsed.data.mode });
    // Output still pending goes in first: its step is not this input's.
    this.#flushOutput();
    if (this.isDone) throw new AseError('SESSION_STOPPED', 'the session has stopped');
    // The state right after this input's own step (events it set off may follow in the same call).
    this.#captured = undefined;
    this.#capture = true;
    const effects = this.#collect(() => this.#send({ ...parsed.data, at: this.#opts.clock.now() } as SessionEvent));
    this.#capture = false;
    const captured = this.#captured as { persist: SessionContext['persist']; issued: number } | undefined;
    return { effects, writeIndex: captured ? this.#writeIndexOf(captured.persist, captured.issued) : -1 };
  }

  /**
   * A settings change is refused before it reaches the statechart (nothing changes) when the
   * engine cannot make it: `UNSUPPORTED` when its factory's capabilities say so, `INVALID_INPUT`
   * when the factory, or the live engine from what its agent offers, rejects the value.
   */
  #checkSettings(settings: EngineSettings): void {
    const agent = this.actor.getSnapshot().context.agent;
    const factory = this.#opts.registry.get(agent);
    const [capability, what] = settings.model !== undefined ? (['setModel', 'model'] as const) : (['setPermissionMode', 'permission mode'] as const);
    if (factory.capabilities[capability] !== true) {
      throw new AseError('UNSUPPORTED', `the ${agent} engine cannot change the ${what} of a running session; start a session with it in engineOptions instead`, {
        details: { agent, capability },
      });
    }
    const liveGen = this.actor.getSnapshot().context.liveGen;
    const live = liveGen === null ? undefined : this.#engines.get(liveGen);
    try {
      factory.validateSettings?.(settings);
      live?.validateSettings?.(settings);
    } catch (error) {
      throw isAseError(error) ? error : new AseError('INVALID_INPUT', message(error), { cause: error });
    }
  }

  /**
   * `dispatch` that also works from inside a notice listener: an input given while the statechart
   * is handling an event is applied right after that event (before anything else), and the promise
   * then resolves with exactly its effects (or rejects with `INVALID_INPUT` / `SESSION_STOPPED`).
   * Otherwise it is applied at once: it throws those synchronously, like `dispatch`.
   */
  apply(input: SessionInput): Promise<AppliedInput> {
    if (this.#depth === 0) return Promise.resolve(this.#applyNow(input));
    return new Promise((resolve, reject) => {
      this.#deferred.push(() => {
        try {
          resolve(this.#applyNow(input));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /** Sends an event straight to the actor (runtime reports; tests injecting stale events). */
  deliver(event: SessionEvent): Effect[] {
    this.#flushOutput(); // Not among this event's effects.
    if (this.isDone) return [];
    return this.#collect(() => this.#send(event));
  }

  engine(gen: number): AgentEngine | undefined {
    return this.#engines.get(gen);
  }

  /** Generations whose engine has not reported `exited` yet. */
  liveEngineGens(): number[] {
    return [...this.#engines.keys()];
  }

  /** Armed timers: id → true. For tests and diagnostics. */
  armedTimers(): string[] {
    return [...this.#timers.keys()];
  }

  /** Tears everything down without going through the statechart (process exit, host shutdown). */
  async dispose(): Promise<void> {
    if (this.actor.getSnapshot().status === 'active') this.actor.stop();
    for (const handle of this.#timers.values()) this.#opts.clock.clearTimeout(handle);
    this.#timers.clear();
    this.#stopRenewal();
    this.#releaseHolds(() => false);
    await Promise.allSettled([...this.#engines.values()].map((e) => e.stop()));
    this.#engines.clear();
    await this.#settle();
    this.#rejectWaiters(new AseError('SESSION_STOPPED', 'the session was disposed before its state was stored'));
    await this.#releaseLease();
    this.#resolveDone();
  }

  /** Every event goes to the actor through here, so inputs given meanwhile (from listeners) can wait their turn. */
  #send(event: SessionEvent): void {
    // Pending agent output goes first, so every event sees the output that came before it.
    if (this.#pendingOutput) this.#flushOutput();
    this.#depth += 1;
    try {
      this.actor.send(event);
    } finally {
      this.#depth -= 1;
      this.#drainDeferred();
    }
  }

  #drainDeferred(): void {
    if (this.#depth > 0 || this.#draining) return;
    this.#draining = true;
    try {
      for (let next = this.#deferred.shift(); next; next = this.#deferred.shift()) next();
    } finally {
      this.#draining = false;
    }
  }

  #collect(send: () => void): Effect[] {
    const outer = this.#collecting;
    const collected: Effect[] = [];
    this.#collecting = collected;
    try {
      send();
    } finally {
      this.#collecting = outer;
    }
    return collected;
  }

  #notify<K extends keyof RuntimeObserver>(kind: K, value: Parameters<NonNullable<RuntimeObserver[K]>>[0]): void {
    for (const o of this.#observers) {
      try {
        (o[kind] as ((v: typeof value) => void) | undefined)?.(value);
      } catch {
        // An observer's bug must not break the session.
      }
    }
  }

  #fail(code: AseError['code'], message: string, cause?: unknown): void {
    this.#notify('failure', new AseError(code, message, { cause }));
  }

  /**
   * Performs one effect (observers hear of it first). `superseded`: a timer effect that a later
   * effect of the same step sets or cancels again, so arming or clearing a real timer for it would
   * change nothing (the step turned the thinking indicator on and off many times).
   */
  #perform(effect: Effect, superseded = false): void {
    this.#collecting?.push(effect);
    this.#notify('effect', effect);
    if (superseded) return;
    switch (effect.type) {
      case 'engine.start':
        return this.#startEngine(effect);
      case 'engine.stop':
        return this.#stopEngine(effect.gen);
      case 'engine.send': {
        // Write-ahead: the next write issued records this delivery; the agent gets it once that is stored.
        const stored = this.#afterWrite(this.#writesIssued, 'engine');
        return this.#gated(effect.gen, 'send', (e) => e.send(effect.message), stored);
      }
      case 'engine.abort':
        return this.#gated(effect.gen, 'abort', (e) => e.abort());
      case 'engine.configure':
        return this.#configure(effect);
      case 'engine.answer_permission':
        return this.#gated(effect.gen, 'answerPermission', (e) => e.answerPermission(effect.requestId, effect.decision));
      case 'engine.check_delivery':
        return this.#checkDelivery(effect);
      case 'timer.set':
        return this.#setTimer(effect.id, effect.deadline);
      case 'timer.cancel':
        return this.#cancelTimer(effect.id);
      case 'state.persist':
        return this.#persist(effect, this.#writesIssued++);
      case 'transcript.emit':
        return this.#append(effect.entry);
      case 'client.error':
        // The statechart gave up writing: whoever waits for a write cannot be promised one.
        if (effect.code === 'PERSIST_FAILED') this.#rejectWaiters(new AseError('PERSIST_FAILED', effect.message));
        return;
      case 'ephemeral.emit':
        return; // Observers saw it above; nothing to perform.
    }
  }

  #startEngine(effect: EffectOf<'engine.start'>): void {
    if (this.#fenced) return; // Another host drives this session now.
    const { clock, registry, bin, processes, terminal, hostTools } = this.#opts;
    let engine: AgentEngine;
    try {
      engine = registry.get(effect.agent).create({
        now: () => clock.now(),
        setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
        clearTimeout: (h) => clock.clearTimeout(h),
        ...(bin !== undefined && { bin }),
        ...(processes && { processes }),
        ...(terminal && { terminal }),
        ...(hostTools && { hostTools }),
      });
    } catch (error) {
      this.#engineFailed(effect.gen, error, 'fatal', true);
      return;
    }
    this.#engines.set(effect.gen, engine);
    engine.onEvent((event) => this.#onEngineEvent(effect.gen, event));
    // At most one live generation: a new engine starts only once older ones are fully gone
    // (their stop ladders end in SIGKILL, so this wait is bounded).
    const previous = [...this.#stopping.values()];
    this.#engineChain = this.#engineChain
      .then(() => Promise.allSettled(previous))
      .then(() => {
        // Stopped while it waited its turn (see #stopEngine), or the session ended: never start it.
        if (this.isDone || this.#engines.get(effect.gen) !== engine) return;
        this.#started.add(effect.gen);
        return engine.start({
          gen: effect.gen,
          mode: effect.mode,
          workDir: effect.workDir,
          ...(effect.resumeToken !== undefined && { resumeToken: effect.resumeToken }),
          options: effect.options,
          ...(effect.model !== undefined && { model: effect.model }),
          ...(effect.permissionMode !== undefined && { permissionMode: effect.permissionMode }),
        });
      })
      .catch((error: unknown) => {
        // A start that failed without the engine reporting `exited` is ended here, so the
        // session never waits for a `ready` that cannot come.
        const silent = this.#engines.get(effect.gen) === engine;
        if (silent) {
          this.#engines.delete(effect.gen);
          void engine.stop().catch(() => undefined);
        }
        this.#engineFailed(effect.gen, error, 'fatal', silent);
      });
  }

  #stopEngine(gen: number): void {
    this.#stopRequested.add(gen);
    const engine = this.#engines.get(gen);
    if (!engine || this.#stopping.has(gen)) return;
    if (!this.#started.has(gen)) {
      // Its start is still queued behind an older engine's exit. Stopping an engine that was never
      // started cannot work (no process yet, so no `exited`), and starting it afterwards would leave
      // an agent running that nobody stops. So it is dropped here and reported gone right away.
      this.#engines.delete(gen);
      queueMicrotask(() => {
        if (this.isDone || this.actor.getSnapshot().context.liveGen !== gen) return;
        this.#send({ type: 'exited', gen, at: this.#opts.clock.now(), code: null, signal: null, reason: 'stopped before it started' });
      });
      return;
    }
    const stopped = engine
      .stop()
      .catch((error: unknown) => this.#fail('ENGINE_ERROR', `stopping engine gen ${gen} failed: ${message(error)}`, error))
      .finally(() => this.#stopping.delete(gen));
    this.#stopping.set(gen, stopped);
  }

  #callEngine(gen: number, what: string, call: (engine: AgentEngine) => Promise<void>): void {
    if (this.#fenced) return;
    const engine = this.#engines.get(gen);
    if (!engine) {
      this.#fail('ENGINE_NOT_RUNNING', `${what} for gen ${gen}: its engine is gone`);
      return;
    }
    call(engine).catch((error: unknown) => this.#engineFailed(gen, error, 'protocol'));
  }

  /**
   * Calls the engine now, or, while a send is held for its write, after it (calls keep the order
   * they were emitted in). With `stored`, the call waits for that write and is dropped if it never
   * comes (the session ended or was fenced). A deferred call is dropped if the engine is gone or
   * being stopped by then.
   */
  #gated(gen: number, what: string, call: (engine: AgentEngine) => Promise<void>, stored?: Promise<boolean>): void {
    if (!stored && !this.#engineGate) return this.#callEngine(gen, what, call);
    const run = async () => {
      if (stored && !(await stored)) return;
      // Deferred: an engine that exited or was told to stop meanwhile is not called (nothing was lost
      // that the statechart does not know: it ends that generation's turn and requests itself).
      if (this.#stopRequested.has(gen) || !this.#engines.has(gen)) return;
      this.#callEngine(gen, what, call);
    };
    const next = (this.#engineGate ?? Promise.resolve()).then(run);
    this.#engineGate = next;
    void next.then(() => {
      if (this.#engineGate === next) this.#engineGate = null;
    });
  }

  /**
   * Hands a settings change to the engine once it is stored (like a delivery: a host that dies
   * first restarts with the stored settings, never with ones the store does not hold) and once the
   * engine's `start()` was called (a change made while the engine waits to start reaches it after).
   */
  #configure(effect: EffectOf<'engine.configure'>): void {
    const stored = this.#afterWrite(this.#writesIssued, 'engine');
    const started = this.#engineChain.then(() => true);
    const ready = Promise.all([stored, started]).then(([ok]) => ok);
    this.#gated(
      effect.gen,
      'configure',
      async (engine) => {
        if (!engine.configure) throw new AseError('UNSUPPORTED', `the ${this.actor.getSnapshot().context.agent} engine has no configure()`);
        await engine.configure(effect.settings);
      },
      ready,
    );
  }

  /** Asks the engine whether its resumed agent session already holds a message; `null` when it cannot tell. */
  #checkDelivery(effect: EffectOf<'engine.check_delivery'>): void {
    const { gen, message: msg } = effect;
    const report = (received: boolean | null) => {
      if (this.isDone || this.#fenced || this.actor.getSnapshot().context.liveGen !== gen) return;
      this.#send({ type: 'delivery_checked', gen, localId: msg.localId, received, at: this.#opts.clock.now() });
    };
    this.#gated(gen, 'wasReceived', async (engine) => {
      if (!engine.wasReceived) return queueMicrotask(() => report(null));
      try {
        report((await engine.wasReceived(msg)) ?? null);
      } catch (error) {
        this.#fail('ENGINE_ERROR', `engine gen ${gen} could not tell whether it received "${msg.localId}": ${message(error)}`, error);
        report(null);
      }
    });
  }

  /**
   * An engine call failed: the session hears it as that generation's `error` event (and `exited`
   * when the engine is gone without saying so). Delivered after the current transition completes.
   */
  #engineFailed(gen: number, error: unknown, kind: 'fatal' | 'protocol', ended = false): void {
    this.#fail('ENGINE_ERROR', `engine gen ${gen}: ${message(error)}`, error);
    queueMicrotask(() => {
      if (this.isDone || this.actor.getSnapshot().context.liveGen !== gen) return;
      const at = this.#opts.clock.now();
      this.#send({ type: 'error', gen, at, kind, message: message(error), retryable: kind !== 'fatal' });
      if (ended) this.#send({ type: 'exited', gen, at, code: null, signal: null, reason: message(error) });
    });
  }

  #onEngineEvent(gen: number, event: AgentEvent): void {
    if (event.gen !== gen) {
      this.#fail('ENGINE_ERROR', `engine of gen ${gen} reported an event stamped gen ${event.gen}; dropped`);
      return;
    }
    if (event.type === 'exited') this.#engines.delete(gen);
    if (this.isDone) return;
    // Any other event (or another generation's) comes after the output before it: its statechart
    // handling, and its notice too (so a transcript entry of that output is out before it).
    const pending = this.#pendingOutput;
    if (pending && (pending.gen !== gen || !isBatchableOutput(event))) this.#flushOutput();
    if (this.isDone) return;
    const context = this.actor.getSnapshot().context;
    if (context.liveGen !== gen) {
      this.#send(event); // stale: the statechart ignores it (one failed guard)
      return;
    }
    this.#notify('agentEvent', event);
    // Output the statechart handles alike in every state (text and thinking deltas, messages, tool
    // calls and results: agent-output.ts) is handed over in batches: consecutive events of the
    // live engine go in as one `agent_output` event, one transition instead of one per event. A
    // batch goes in before the next event of any kind (inputs, timers, store results, the engine's
    // other events: see #send), and at the latest on the next turn of the event loop, so nothing
    // overtakes it and the statechart's context lags behind by at most that.
    if (isBatchableOutput(event)) {
      const pending = this.#pendingOutput;
      if (pending) {
        if (event.at > pending.at) pending.at = event.at;
        // What would change nothing in the statechart is not carried (agent-output.ts says which).
        if (!addsNothingAfter(pending.last, event)) pending.events.push(event);
        pending.last = event;
      } else {
        this.#pendingOutput = { gen, at: event.at, events: [event], last: event };
        // Not a microtask: engines that deliver each message in a promise job of its own (the ACP
        // SDK) would flush after every event.
        setImmediate(() => this.#flushOutput());
      }
      return;
    }
    this.#send(event);
  }

  /**
   * Hands pending agent output (if any) to the statechart as one `agent_output`, one event or many,
   * then takes the events back out of it (an inspector got a copy of its own: inspectBatchCopies).
   * XState allocates records per action that point at the event being handled, and V8 may allocate
   * those straight in the old generation, where a dead one stays until the next full collection.
   * Until then every young object it reaches survives each scavenge: V8 then judges the engine's
   * event objects long-lived and allocates them in the old generation too, for good, which made the
   * engine's own code several times slower in a session (docs/performance-notes.md 13, pass 8). Emptied, a
   * batch pins nothing; a lone event goes in as a batch for the same reason (a slow stream is mostly
   * lone events).
   */
  #flushOutput(): void {
    const pending = this.#pendingOutput;
    if (!pending) return;
    this.#pendingOutput = undefined;
    if (this.isDone) return;
    const { gen, at, events } = pending;
    this.#send({ type: 'agent_output', gen, at, events });
    // Not at once: handed over inside another transition, the batch waits in the actor's mailbox
    // until that one ends (synchronously, so before any microtask).
    queueMicrotask(() => void (events.length = 0));
  }

  #setTimer(id: string, deadline: number): void {
    this.#cancelTimer(id);
    const { clock } = this.#opts;
    const handle = clock.setTimeout(() => {
      this.#timers.delete(id);
      if (!this.isDone) this.#send({ type: 'timer_fired', id, at: clock.now() });
    }, deadline - clock.now());
    this.#timers.set(id, handle);
  }

  #cancelTimer(id: string): void {
    const handle = this.#timers.get(id);
    if (!handle) return;
    this.#opts.clock.clearTimeout(handle);
    this.#timers.delete(id);
  }

  /** Writes are serialized: each starts after the previous one's result reached the actor. */
  #persist(effect: EffectOf<'state.persist'>, index: number): void {
    const { store, clock } = this.#opts;
    const sessionId = effect.state.sessionId;
    const final = effect.state.phase === 'stopped';
    // Journal first: a restored session's first write (it records what recovery closed), and a write
    // recording a delivery check (a message about to go out again), wait for those entries, so a
    // later restore never finds the state ahead of the journal on them (the journal is what tells it).
    const journalFirst = this.#journalFirst ?? (index === 0 && this.#opts.input.restored ? this.#closeAppendBatch() : undefined);
    this.#journalFirst = undefined;
    this.#persistChain = this.#persistChain.then(async () => {
      if (this.#fenced) return;
      if (journalFirst) await journalFirst;
      if (final) {
        // The final state never runs ahead of the transcript: a restore of a `stopped` session need
        // not look at the journal. This write records every delivery still held, so their entries go first.
        this.#releaseHolds((hold) => hold.kind === 'journal');
        await this.#journalChain;
      }
      let report: SessionEvent;
      // The final write is issued while an earlier write may still be in flight, so the machine can
      // only guess its expected version. Writes are serialized here: use the version our own last
      // write actually produced, so a failed earlier write cannot make the final one conflict.
      const expected = final ? this.#storedVersion : effect.expectedVersion;
      try {
        await this.#ensureLease();
        if (this.#fenced) return;
        const result = await store.save(sessionId, effect.state, expected, this.#lease?.fence);
        if (result.ok) {
          this.#storedVersion = result.version;
          this.#stored(index);
        }
        report = result.ok
          ? { type: 'persist_ok', version: result.version, at: clock.now() }
          : { type: 'persist_conflict', version: result.version, ...(result.stored && { stored: result.stored }), at: clock.now() };
        if (!result.ok && this.isDone) {
          this.#fail('PERSIST_FAILED', `final state of ${sessionId} not saved: store is at version ${result.version}`);
          this.#rejectWaiters(new AseError('PERSIST_FAILED', `final state of ${sessionId} not saved: store is at version ${result.version}`));
        }
      } catch (error) {
        if (isAseError(error, 'LEASE_LOST')) return this.#fence(error);
        report = { type: 'persist_failed', message: message(error), at: clock.now() };
        this.#fail('PERSIST_FAILED', `saving ${sessionId} failed: ${message(error)}`, error);
        if (this.isDone) this.#rejectWaiters(new AseError('PERSIST_FAILED', `saving ${sessionId} failed: ${message(error)}`, { cause: error }));
      }
      if (!this.isDone) this.#send(report);
    });
  }

  #append(entry: TranscriptEntry): void {
    // A delivery's entry waits for the write that records it (the next one issued), like its
    // `engine.send`. (Not a `recovered` one: it catches the journal up with a delivery already stored.)
    const delivery = entry.type === 'user_message' && (entry.payload as { recovered?: unknown } | null)?.recovered !== true;
    const stored = delivery ? this.#afterWrite(this.#writesIssued, 'journal') : undefined;
    // Appends are issued in order without waiting for the previous one to be durable (the journal
    // keeps call order, and FileJournal group-commits what arrives meanwhile). Entries appended
    // while the previous batch is still being issued join one batch: one link of `#journalIssue`
    // (which orders the issuing) and of `#journalChain` (which settles only once every entry so far
    // is durable) per batch, not per entry: a dense stream appends thousands of entries a second.
    let batch = this.#appendBatch;
    if (!batch) {
      const entries: PendingAppend[] = [];
      batch = this.#appendBatch = entries;
      const issued = this.#journalIssue.then(() => this.#issueAppends(entries));
      this.#journalIssue = issued.then(() => undefined);
      const durable = issued.then((appended) => Promise.all(appended));
      this.#journalChain = Promise.all([this.#journalChain, durable]).then(() => undefined);
    }
    batch.push({ entry, stored });
    // A held entry ends its batch: what follows is issued after it anyway, and a write waiting for
    // `#journalChain` (below) must never wait for an entry that itself waits for a later write.
    if (stored) this.#appendBatch = undefined;
    if (entry.type === 'delivery_checked') this.#journalFirst = this.#closeAppendBatch();
  }

  /** The batch being filled is closed; returns `#journalChain`, which then covers every entry appended so far and no later one. */
  #closeAppendBatch(): Promise<void> {
    this.#appendBatch = undefined;
    return this.#journalChain;
  }

  /**
   * Issues one batch of appends in order; resolves with their durability (a failure is reported, not
   * thrown). The entries between two waits (a held entry waits for its write, an untrusted lease for
   * its check) go to the journal in one `appendMany` call where it has one (`appendEntries`): one
   * promise and one serialization buffer for the run, not one per entry.
   */
  async #issueAppends(entries: PendingAppend[]): Promise<Promise<unknown>[]> {
    if (this.#appendBatch === entries) this.#appendBatch = undefined; // Nothing joins a batch once it is being issued.
    const appended: Promise<unknown>[] = [];
    let run: TranscriptEntry[] = [];
    let runFence: number | undefined;
    const issueRun = (): void => {
      if (run.length === 0) return;
      const journal = this.#opts.journal;
      let append: Promise<unknown>;
      try {
        // The fence rides along: a journal that can check it with the write (PostgresJournal) refuses a stale owner itself.
        append = run.length === 1 ? (runFence === undefined ? journal.append(run[0]!) : journal.append(run[0]!, { fence: runFence })) : appendEntries(journal, run, runFence === undefined ? undefined : { fence: runFence });
      } catch (error) {
        append = Promise.reject(error);
      }
      appended.push(append.catch((error: unknown) => this.#journalFailed(error)));
      run = [];
    };
    for (const { entry, stored } of entries) {
      if (stored) {
        issueRun(); // What came before the held entry goes first, as it would have.
        await stored;
      }
      // The lease is asked about only when it is not trusted any more (a sync check first: no await per entry).
      if (this.#lease && !this.#fenced && performance.now() >= this.#leaseTrustedUntil) {
        issueRun();
        try {
          await this.#ensureLease();
        } catch (error) {
          this.#journalFailed(error);
          continue;
        }
      }
      if (this.#fenced) continue; // Fenced while this batch waited: nothing more of it is written.
      const fence = this.#lease?.fence;
      if (run.length > 0 && fence !== runFence) issueRun();
      runFence = fence;
      run.push(entry);
    }
    issueRun();
    // Issued: the batch lets go of its entries. Something V8 allocated in the old generation still
    // points at this array after it died (as with the output batches, #flushOutput), and until a full
    // collection every entry in it, with the output it holds, survived each scavenge: 1.4 MB copied
    // and promoted per scavenge on a dense Claude turn (docs/performance-notes.md 13, pass 9).
    entries.length = 0;
    return appended;
  }

  #journalFailed(error: unknown): void {
    if (isAseError(error, 'LEASE_LOST')) return this.#fence(error);
    this.#fail('JOURNAL_IO', `transcript append failed: ${message(error)}`, error);
  }

  /** Resolves `true` once a write with index >= `index` is stored, `false` if that can no longer happen. */
  #afterWrite(index: number, kind: Hold['kind']): Promise<boolean> {
    if (index <= this.#lastStored) return Promise.resolve(true);
    if (this.#fenced) return Promise.resolve(false);
    return new Promise((release) => this.#holds.push({ index, kind, release }));
  }

  /** Write `index` was stored: everything waiting for it (or an earlier one) goes. */
  #stored(index: number): void {
    this.#lastStored = Math.max(this.#lastStored, index);
    this.#releaseHolds((hold) => (hold.index <= index ? true : undefined));
    const waiting = this.#waiters;
    this.#waiters = waiting.filter((w) => w.index > index);
    for (const w of waiting) if (w.index <= index) w.resolve();
  }

  /** Settles held work: `decide` returns go (true), drop (false), or keep waiting (undefined). */
  #releaseHolds(decide: (hold: Hold) => boolean | undefined): void {
    const kept: Hold[] = [];
    for (const hold of this.#holds) {
      const go = decide(hold);
      if (go === undefined) kept.push(hold);
      else hold.release(go);
    }
    this.#holds = kept;
  }

  #rejectWaiters(error: AseError): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) w.reject(error);
  }

  // ---------------------------------------------------------------- the lease

  #armRenewal(): void {
    const lease = this.#lease;
    if (!lease || this.#fenced) return;
    this.#renewTimer = this.#opts.clock.setTimeout(() => {
      this.#renewTimer = undefined;
      if (this.isDone || this.#fenced) return;
      this.#renewLease()
        .catch((error: unknown) => this.#fail('STORE_IO', `renewing the lease on ${lease.sessionId} failed: ${message(error)}`, error))
        .finally(() => {
          if (!this.isDone) this.#armRenewal();
        });
    }, Math.max(1, Math.floor(lease.ttlMs / 3)));
  }

  #stopRenewal(): void {
    if (this.#renewTimer) this.#opts.clock.clearTimeout(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  /** Before any write: a lease not confirmed recently (e.g. the process was stopped) is renewed first. */
  async #ensureLease(): Promise<void> {
    if (!this.#lease || this.#fenced) return;
    if (performance.now() < this.#leaseTrustedUntil) return;
    await this.#renewLease();
  }

  /** One renewal at a time; LEASE_LOST fences this runtime, other failures are thrown to the caller. */
  #renewLease(): Promise<void> {
    const lease = this.#lease;
    if (!lease || this.#fenced) return Promise.resolve();
    this.#renewing ??= (async () => {
      const askedAt = performance.now();
      try {
        this.#lease = await this.#opts.store.renew(lease);
        this.#leaseTrustedUntil = askedAt + this.#lease.ttlMs * LEASE_TRUST;
      } catch (error) {
        if (isAseError(error, 'LEASE_LOST')) this.#fence(error);
        else throw error;
      } finally {
        this.#renewing = null;
      }
    })();
    return this.#renewing;
  }

  #leaseLostError(cause?: unknown): AseError {
    const sessionId = this.actor.getSnapshot().context.sessionId;
    return new AseError('LEASE_LOST', `another host took over session "${sessionId}": this host stopped its engine and writes nothing more`, {
      ...(cause !== undefined && { cause }),
      details: { sessionId, ...(isAseError(cause) && cause.details) },
    });
  }

  /** Another host holds the session now: stop driving it, write nothing, and wind the statechart down. */
  #fence(cause: unknown): void {
    if (this.#fenced) return;
    this.#fenced = true;
    this.#stopRenewal();
    const error = this.#leaseLostError(cause);
    this.#notify('failure', error);
    this.#rejectWaiters(error);
    this.#releaseHolds(() => false);
    // The statechart's stop stops the engine (`engine.stop` is still performed); its writes are dropped.
    if (!this.isDone) this.#send({ type: 'stop', at: this.#opts.clock.now() });
  }

  async #releaseLease(): Promise<void> {
    this.#stopRenewal();
    const lease = this.#lease;
    if (!lease || this.#fenced) return;
    this.#lease = undefined;
    await this.#opts.store.release(lease).catch((error: unknown) => this.#fail('STORE_IO', `releasing the lease on ${lease.sessionId} failed: ${message(error)}`, error));
  }

  async #settle(): Promise<void> {
    // Writes queued by the final effects may queue further writes; wait until quiet.
    for (;;) {
      const chains = [this.#persistChain, this.#journalChain, this.#engineChain, this.#engineGate, ...this.#stopping.values()];
      await Promise.allSettled(chains);
      const after = [this.#persistChain, this.#journalChain, this.#engineChain, this.#engineGate, ...this.#stopping.values()];
      if (after.length === chains.length && after.every((c, i) => c === chains[i])) break;
    }
    await this.#opts.journal.flush().catch((error: unknown) => this.#fail('JOURNAL_IO', `transcript flush failed: ${message(error)}`, error));
  }

  async #finish(): Promise<void> {
    for (const handle of this.#timers.values()) this.#opts.clock.clearTimeout(handle);
    this.#timers.clear();
    this.#stopRenewal();
    // The final state already stopped the engine; make sure nothing survives a stop timeout.
    await Promise.allSettled([...this.#engines.values()].map((e) => e.stop()));
    await this.#settle();
    this.#releaseHolds(() => false);
    this.#rejectWaiters(new AseError('PERSIST_FAILED', 'the session ended before its state was stored'));
    await this.#releaseLease();
    this.#resolveDone();
  }
}

/**
 * The inspection hook as the runtime's actor would call it if it emitted effect by effect: an
 * `@xstate.action` that emits an effect batch becomes one `xstate.emit` action per effect, so
 * inspectors (the server's, the model-based harness) see what they always saw.
 */
function inspectEachEffect(inspect: (event: InspectionEvent) => void): (event: InspectionEvent) => void {
  return (event) => {
    if (event.type === '@xstate.action' && event.action.type === 'xstate.emit') {
      const emitted = (event.action.params as { event?: Effect | EffectBatch } | undefined)?.event;
      if (emitted && isEffectBatch(emitted)) {
        for (const effect of emitted.effects) inspect({ ...event, action: { type: 'xstate.emit', params: { event: effect } } });
        return;
      }
    }
    inspect(event);
  };
}

/**
 * The inspection hook shown a copy of each `agent_output` batch, which stays whole, while the
 * runtime empties its own (#flushOutput): an inspector may keep what it is shown and read it later
 * (`ase serve`'s hub does). A copy per inspection event: anything mapping a batch to its copy would
 * keep the copy as long as a dead XState record keeps the batch.
 */
function inspectBatchCopies(inspect: (event: InspectionEvent) => void): (event: InspectionEvent) => void {
  return (event) => {
    const batch = 'event' in event ? (event.event as AgentOutputEvent | undefined) : undefined;
    inspect(batch?.type === 'agent_output' ? ({ ...event, event: { ...batch, events: [...batch.events] } } as InspectionEvent) : event);
  };
}

/**
 * The indexes of the `timer.set` / `timer.cancel` effects of one step that a later effect of that
 * step sets or cancels again (the last one for a timer decides it: it clears what was armed before
 * the step and arms its own deadline, at its own place among the step's effects); undefined when
 * there are none.
 */
function supersededTimerEffects(effects: readonly Effect[]): Set<number> | undefined {
  let later: Set<string> | undefined;
  let superseded: Set<number> | undefined;
  for (let i = effects.length - 1; i >= 0; i--) {
    const effect = effects[i]!;
    if (effect.type !== 'timer.set' && effect.type !== 'timer.cancel') continue;
    later ??= new Set();
    if (later.has(effect.id)) (superseded ??= new Set()).add(i);
    else later.add(effect.id);
  }
  return superseded;
}

/** Rethrows outside the current call stack, as XState reports an error thrown by an `on()` listener. */
function reportLater(error: unknown): void {
  setTimeout(() => {
    throw error;
  });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Agent output of one engine generation waiting for the statechart (SessionRuntime#onEngineEvent). */
interface PendingOutput {
  gen: number;
  /** The latest time of every event so far, carried or not. */
  at: number;
  /** The events the statechart gets, in order. */
  events: AgentEvent[];
  /** The last event seen (carried or not). */
  last: AgentEvent;
}
