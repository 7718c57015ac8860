/**
 * The effect runtime: runs a SessionActor and carries out the effects it emits. It is the only
 * place with I/O: engine instances (one per generation), timers on an injectable clock, the
 * session store, and the transcript journal. Everything it learns goes back into the actor as
 * events, so all decisions stay in the statechart.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { sessionMachine, type SessionEvent } from '../actors/session.js';
import type { SessionMachineInput } from '../actors/session-context.js';
import type { AgentEvent } from '../events/agent-event.js';
import { SessionInputSchema, type SessionInput } from '../events/session-input.js';
import type { EngineRegistry } from '../engines/core/registry.js';
import type { AgentEngine } from '../engines/core/engine.js';
import type { ProcessObserver } from '../engines/core/process-observer.js';
import { AseError } from '../errors.js';
import type { Clock, TimerHandle } from './clock.js';
import { checkMessageSize, DEFAULT_MAX_MESSAGE_BYTES } from './input-limits.js';
import type { Effect, EffectOf } from '../events/effect.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import type { TranscriptJournal } from './journal/transcript-journal.js';
import type { SessionStore } from './store/session-store.js';

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
  /** Largest `send` text in UTF-8 bytes; a larger one is refused with `INVALID_INPUT`. Default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  maxMessageBytes?: number;
  /** XState inspection hook (the model-based harness uses it for transition coverage). */
  inspect?: (event: InspectionEvent) => void;
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
  /** Generations whose `engine.start()` has been called (it runs after older engines are gone). */
  readonly #started = new Set<number>();
  readonly #timers = new Map<string, TimerHandle>();
  readonly #observers = new Set<RuntimeObserver>();
  #persistChain: Promise<void> = Promise.resolve();
  /** The version the store holds after this runtime's last successful write (or the restored one). */
  #storedVersion: number;
  #journalChain: Promise<void> = Promise.resolve();
  #engineChain: Promise<void> = Promise.resolve();
  /** Effects emitted while a client input is being processed (to return its rejection). */
  #collecting: Effect[] | null = null;
  #done: Promise<void>;
  #resolveDone!: () => void;

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#storedVersion = opts.input.restored?.version ?? 0;
    this.actor = createActor(sessionMachine, { input: opts.input, ...(opts.inspect && { inspect: opts.inspect }) });
    this.actor.on('*', (effect) => this.#perform(effect));
    this.#done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.actor.subscribe({ complete: () => void this.#finish() });
  }

  observe(observer: RuntimeObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  start(): void {
    this.actor.start();
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
    if (input?.type === 'send' && typeof input.text === 'string') checkMessageSize(input.text, this.#opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    const parsed = SessionInputSchema.safeParse(input);
    if (!parsed.success) {
      throw new AseError('INVALID_INPUT', `invalid ${String((input as { type?: unknown })?.type ?? 'input')}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`);
    }
    if (this.isDone) throw new AseError('SESSION_STOPPED', 'the session has stopped');
    return this.#collect(() => this.actor.send({ ...parsed.data, at: this.#opts.clock.now() } as SessionEvent));
  }

  /** Sends an event straight to the actor (runtime reports; tests injecting stale events). */
  deliver(event: SessionEvent): Effect[] {
    if (this.isDone) return [];
    return this.#collect(() => this.actor.send(event));
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
    await Promise.allSettled([...this.#engines.values()].map((e) => e.stop()));
    this.#engines.clear();
    await this.#settle();
    this.#resolveDone();
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

  #perform(effect: Effect): void {
    this.#collecting?.push(effect);
    this.#notify('effect', effect);
    switch (effect.type) {
      case 'engine.start':
        return this.#startEngine(effect);
      case 'engine.stop':
        return this.#stopEngine(effect.gen);
      case 'engine.send':
        return this.#callEngine(effect.gen, 'send', (e) => e.send(effect.message));
      case 'engine.abort':
        return this.#callEngine(effect.gen, 'abort', (e) => e.abort());
      case 'engine.answer_permission':
        return this.#callEngine(effect.gen, 'answerPermission', (e) => e.answerPermission(effect.requestId, effect.decision));
      case 'timer.set':
        return this.#setTimer(effect.id, effect.deadline);
      case 'timer.cancel':
        return this.#cancelTimer(effect.id);
      case 'state.persist':
        return this.#persist(effect);
      case 'transcript.emit':
        return this.#append(effect.entry);
      case 'ephemeral.emit':
      case 'client.error':
        return; // Observers saw it above; nothing to perform.
    }
  }

  #startEngine(effect: EffectOf<'engine.start'>): void {
    const { clock, registry, bin, processes } = this.#opts;
    let engine: AgentEngine;
    try {
      engine = registry.get(effect.agent).create({
        now: () => clock.now(),
        setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
        clearTimeout: (h) => clock.clearTimeout(h),
        ...(bin !== undefined && { bin }),
        ...(processes && { processes }),
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
    const engine = this.#engines.get(gen);
    if (!engine || this.#stopping.has(gen)) return;
    if (!this.#started.has(gen)) {
      // Its start is still queued behind an older engine's exit. Stopping an engine that was never
      // started cannot work (no process yet, so no `exited`), and starting it afterwards would leave
      // an agent running that nobody stops. So it is dropped here and reported gone right away.
      this.#engines.delete(gen);
      queueMicrotask(() => {
        if (this.isDone || this.actor.getSnapshot().context.liveGen !== gen) return;
        this.actor.send({ type: 'exited', gen, at: this.#opts.clock.now(), code: null, signal: null, reason: 'stopped before it started' });
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
    const engine = this.#engines.get(gen);
    if (!engine) {
      this.#fail('ENGINE_NOT_RUNNING', `${what} for gen ${gen}: its engine is gone`);
      return;
    }
    call(engine).catch((error: unknown) => this.#engineFailed(gen, error, 'protocol'));
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
      this.actor.send({ type: 'error', gen, at, kind, message: message(error), retryable: kind !== 'fatal' });
      if (ended) this.actor.send({ type: 'exited', gen, at, code: null, signal: null, reason: message(error) });
    });
  }

  #onEngineEvent(gen: number, event: AgentEvent): void {
    if (event.gen !== gen) {
      this.#fail('ENGINE_ERROR', `engine of gen ${gen} reported an event stamped gen ${event.gen}; dropped`);
      return;
    }
    if (event.type === 'exited') this.#engines.delete(gen);
    if (this.isDone) return;
    if (this.actor.getSnapshot().context.liveGen === gen) this.#notify('agentEvent', event);
    this.actor.send(event);
  }

  #setTimer(id: string, deadline: number): void {
    this.#cancelTimer(id);
    const { clock } = this.#opts;
    const handle = clock.setTimeout(() => {
      this.#timers.delete(id);
      if (!this.isDone) this.actor.send({ type: 'timer_fired', id, at: clock.now() });
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
  #persist(effect: EffectOf<'state.persist'>): void {
    const { store, clock } = this.#opts;
    const sessionId = effect.state.sessionId;
    this.#persistChain = this.#persistChain.then(async () => {
      let report: SessionEvent;
      // The final write is issued while an earlier write may still be in flight, so the machine can
      // only guess its expected version. Writes are serialized here: use the version our own last
      // write actually produced, so a failed earlier write cannot make the final one conflict.
      const expected = effect.state.phase === 'stopped' ? this.#storedVersion : effect.expectedVersion;
      try {
        const result = await store.save(sessionId, effect.state, expected);
        if (result.ok) this.#storedVersion = result.version;
        report = result.ok
          ? { type: 'persist_ok', version: result.version, at: clock.now() }
          : { type: 'persist_conflict', version: result.version, ...(result.stored && { stored: result.stored }), at: clock.now() };
        if (!result.ok && this.isDone) this.#fail('PERSIST_FAILED', `final state of ${sessionId} not saved: store is at version ${result.version}`);
      } catch (error) {
        report = { type: 'persist_failed', message: message(error), at: clock.now() };
        this.#fail('PERSIST_FAILED', `saving ${sessionId} failed: ${message(error)}`, error);
      }
      if (!this.isDone) this.actor.send(report);
    });
  }

  #append(entry: TranscriptEntry): void {
    this.#journalChain = this.#journalChain.then(() =>
      this.#opts.journal.append(entry).catch((error: unknown) => this.#fail('JOURNAL_IO', `transcript append failed: ${message(error)}`, error)),
    );
  }

  async #settle(): Promise<void> {
    // Writes queued by the final effects may queue further writes; wait until quiet.
    for (;;) {
      const chains = [this.#persistChain, this.#journalChain, this.#engineChain, ...this.#stopping.values()];
      await Promise.allSettled(chains);
      const after = [this.#persistChain, this.#journalChain, this.#engineChain, ...this.#stopping.values()];
      if (after.length === chains.length && after.every((c, i) => c === chains[i])) break;
    }
    await this.#opts.journal.flush().catch((error: unknown) => this.#fail('JOURNAL_IO', `transcript flush failed: ${message(error)}`, error));
  }

  async #finish(): Promise<void> {
    for (const handle of this.#timers.values()) this.#opts.clock.clearTimeout(handle);
    this.#timers.clear();
    // The final state already stopped the engine; make sure nothing survives a stop timeout.
    await Promise.allSettled([...this.#engines.values()].map((e) => e.stop()));
    await this.#settle();
    this.#resolveDone();
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
