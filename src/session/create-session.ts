/**
 * `createSession()` and the handle it returns: the public face of a SessionActor + runtime.
 * Inputs are validated and stamped; a refused input throws a typed `AseError` and changes nothing.
 * Everything the session reports is a `SessionNotice`, available through `on()` (mitt) and `events()`.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import mittImport, { type Emitter } from 'mitt';
import type { SessionContext } from '../actors/session-context.js';
import { RealClock } from '../runtime/clock.js';
import type { Effect } from '../events/effect.js';
import type { Ephemeral } from '../events/ephemeral.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import { FileJournal } from '../runtime/journal/file-journal.js';
import { SessionRuntime } from '../runtime/session-runtime.js';
import { FileStore } from '../runtime/store/file-store.js';
import { defaultRegistry } from '../engines/default-registry.js';
import type { AgentEvent } from '../events/agent-event.js';
import type { ControlMode, SessionInput } from '../events/session-input.js';
import type { CompletedPermission, OpenPermission, QueuedSend, SessionPhase, SessionUsage } from '../events/session-state.js';
import { AseError } from '../errors.js';
import { defaultDataDir, parseSessionOptions, type SessionOptions } from './options.js';

// mitt's typings are CommonJS-shaped while Node loads its ESM build (a default export);
// under NodeNext resolution TypeScript sees the namespace, so name the function's type explicitly.
const mitt = mittImport as unknown as typeof mittImport.default;

type EphemeralNotice<K extends Ephemeral['kind']> = Omit<Extract<Ephemeral, { kind: K }>, 'kind'> & { type: K };

/** Everything a session tells its clients. */
export type SessionNotice =
  /** An AgentEvent of the live generation (text deltas included), as the engine reported it. */
  | { type: 'agent'; event: AgentEvent }
  /** A durable transcript entry (also appended to the journal). */
  | { type: 'transcript'; entry: TranscriptEntry }
  | EphemeralNotice<'status'>
  | EphemeralNotice<'thinking'>
  | EphemeralNotice<'presence'>
  | EphemeralNotice<'permission_prompt'>
  | EphemeralNotice<'permission_resolved'>
  /** A refused input, an engine failure, or a runtime I/O failure. */
  | { type: 'error'; error: AseError }
  /** The session reached its final state; nothing follows. */
  | { type: 'done'; snapshot: SessionSnapshot };

export type SessionNoticeType = SessionNotice['type'];
export type NoticeOf<T extends SessionNoticeType> = Extract<SessionNotice, { type: T }>;

/** A read-only view of the session's state. */
export interface SessionSnapshot {
  sessionId: string;
  agent: string;
  phase: SessionPhase;
  /** The statechart state, e.g. `{ remote: 'running' }`. */
  state: unknown;
  mode: ControlMode;
  gen: number;
  liveGen: number | null;
  resumeToken?: string;
  transcriptPath?: string;
  queue: readonly QueuedSend[];
  requests: Readonly<Record<string, OpenPermission>>;
  completed: Readonly<Record<string, CompletedPermission>>;
  usage: SessionUsage;
  online: boolean;
  thinking: boolean;
  lastError: SessionContext['lastError'];
  done: boolean;
}

export interface SendOptions {
  /** Client-chosen id for idempotent retries; default: a new UUID. */
  localId?: string;
}

export interface DecideOptions {
  /** Allow with a modified tool input. */
  updatedInput?: unknown;
  /** Deny with a reason the agent sees. */
  message?: string;
  /** Allow and change the agent's permission rules (engine-specific, e.g. Claude's `{type:'addRules', …}`). */
  updatedPermissions?: unknown[];
}

export interface Session {
  readonly id: string;
  /** Queues a user message (sent now, or when the agent is ready). Returns its localId. */
  send(text: string, options?: SendOptions): string;
  /** Interrupts the running turn. Throws `NOTHING_TO_ABORT` when none runs. */
  abort(): void;
  /** Hands control to the terminal (`local`) or to remote clients (`remote`). */
  switchMode(to: ControlMode): void;
  /** Answers a permission request. Throws `PERMISSION_NOT_FOUND` / `PERMISSION_ALREADY_DECIDED`. */
  decide(requestId: string, decision: 'allow' | 'deny', options?: DecideOptions): void;
  /** Tells the session whether a remote client is connected (open prompts are re-sent on reconnect). */
  setOnline(online: boolean): void;
  /** Stops the engine, cancels whatever is open, persists, and resolves when everything is gone. */
  stop(): Promise<SessionSnapshot>;
  snapshot(): SessionSnapshot;
  on<T extends SessionNoticeType>(type: T, listener: (notice: NoticeOf<T>) => void): () => void;
  on(type: '*', listener: (notice: SessionNotice) => void): () => void;
  /** All notices from now on, ending after `done`. Breaking out of the loop unsubscribes. */
  events(options?: { signal?: AbortSignal }): AsyncIterable<SessionNotice>;
  /** Resolves with the final snapshot once the session is stopped and every engine has exited. */
  readonly done: Promise<SessionSnapshot>;
}

/**
 * Creates (or, when the store holds `sessionId`, continues) a session and starts its engine.
 *
 * @example
 * const session = await createSession({ agent: 'fake', workDir: process.cwd() });
 * session.on('permission_prompt', (p) => session.decide(p.requestId, 'allow'));
 * session.send('hello');
 */
export async function createSession(options: SessionOptions): Promise<Session> {
  const opts = parseSessionOptions(options);
  if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was already aborted');
  const dataDir = opts.dataDir ?? defaultDataDir();
  const store = opts.store ?? new FileStore({ dir: path.join(dataDir, 'sessions') });
  const journal = opts.journal ?? new FileJournal({ dir: path.join(dataDir, 'transcripts') });
  const clock = opts.clock ?? new RealClock();
  const registry = opts.registry ?? defaultRegistry();
  for (const factory of opts.engines ?? []) registry.register(factory);
  registry.get(opts.agent); // Unknown engine names fail here, with the known names listed.

  const sessionId = opts.sessionId ?? randomUUID();
  const restored = await store.load(sessionId);
  // A resume token belongs to one agent in one directory: never hand it to another.
  if (restored && (restored.state.agent !== opts.agent || restored.state.workDir !== path.resolve(opts.workDir))) {
    throw new AseError(
      'INVALID_OPTIONS',
      `createSession: session "${sessionId}" belongs to agent "${restored.state.agent}" in ${restored.state.workDir}, not "${opts.agent}" in ${path.resolve(opts.workDir)}`,
    );
  }
  // Aborted while loading: the 'abort' event has fired already, so a listener added below would never run.
  if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was aborted while the session was loading');
  const runtime = new SessionRuntime({
    input: {
      sessionId,
      instance: randomUUID().slice(0, 8),
      agent: opts.agent,
      workDir: path.resolve(opts.workDir),
      mode: opts.mode,
      now: clock.now(),
      ...(opts.engineOptions && { options: opts.engineOptions }),
      ...(opts.config && { config: opts.config }),
      ...(restored && { restored }),
    },
    registry,
    clock,
    store,
    journal,
    ...(opts.bin !== undefined && { bin: opts.bin }),
  });
  const session = new SessionHandle(sessionId, runtime);
  if (opts.onNotice) session.on('*', opts.onNotice);
  // A journal this call created is this session's to close; a caller's journal stays open.
  if (!opts.journal) {
    void session.done
      .then(() => journal.close?.())
      .catch((error: unknown) => process.emitWarning(`agent-session-engine: closing the transcript journal failed: ${String(error)}`));
  }
  if (opts.signal) {
    const onAbort = () => void session.stop();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    void session.done.finally(() => opts.signal?.removeEventListener('abort', onAbort));
  }
  runtime.start();
  return session;
}

type NoticeMap = { [K in SessionNoticeType]: NoticeOf<K> };

class SessionHandle implements Session {
  readonly done: Promise<SessionSnapshot>;
  readonly #runtime: SessionRuntime;
  readonly #bus: Emitter<NoticeMap> = mitt<NoticeMap>();
  /** Set once `done` was emitted: nothing follows it. (The actor is final earlier, while engines and writes settle.) */
  #doneEmitted = false;

  constructor(
    readonly id: string,
    runtime: SessionRuntime,
  ) {
    this.#runtime = runtime;
    runtime.observe({
      effect: (effect) => this.#onEffect(effect),
      agentEvent: (event) => this.#emit({ type: 'agent', event }),
      failure: (error) => this.#emit({ type: 'error', error }),
    });
    this.done = runtime.done.then(() => {
      const snapshot = this.snapshot();
      this.#doneEmitted = true;
      this.#emit({ type: 'done', snapshot });
      return snapshot;
    });
  }

  send(text: string, options: SendOptions = {}): string {
    const localId = options.localId ?? randomUUID();
    this.#dispatch({ type: 'send', text, localId });
    return localId;
  }

  abort(): void {
    this.#dispatch({ type: 'abort' });
  }

  switchMode(to: ControlMode): void {
    this.#dispatch({ type: 'switch_mode', to });
  }

  decide(requestId: string, decision: 'allow' | 'deny', options: DecideOptions = {}): void {
    this.#dispatch({
      type: 'decide',
      requestId,
      decision,
      ...(options.updatedInput !== undefined && { updatedInput: options.updatedInput }),
      ...(options.updatedPermissions !== undefined && { updatedPermissions: options.updatedPermissions }),
      ...(options.message !== undefined && { message: options.message }),
    });
  }

  setOnline(online: boolean): void {
    this.#dispatch({ type: online ? 'client_online' : 'client_offline' });
  }

  async stop(): Promise<SessionSnapshot> {
    if (!this.#runtime.isDone) this.#runtime.dispatch({ type: 'stop' });
    return this.done;
  }

  snapshot(): SessionSnapshot {
    const snap = this.#runtime.actor.getSnapshot();
    const c = snap.context;
    return {
      sessionId: c.sessionId,
      agent: c.agent,
      phase: c.phase,
      state: snap.value,
      mode: c.mode,
      gen: c.gen,
      liveGen: c.liveGen,
      ...(c.resumeToken !== undefined && { resumeToken: c.resumeToken }),
      ...(c.transcriptPath !== undefined && { transcriptPath: c.transcriptPath }),
      queue: c.queue,
      requests: c.requests,
      completed: c.completed,
      usage: c.usage,
      online: c.online,
      thinking: c.thinking,
      lastError: c.lastError,
      done: snap.status !== 'active',
    };
  }

  on(type: SessionNoticeType | '*', listener: (notice: never) => void): () => void {
    const handler = guarded(listener as (notice: unknown) => void);
    if (type === '*') {
      const star = (_type: SessionNoticeType, notice: unknown) => handler(notice);
      this.#bus.on('*', star);
      return () => this.#bus.off('*', star);
    }
    this.#bus.on(type, handler);
    return () => this.#bus.off(type, handler);
  }

  events(options: { signal?: AbortSignal } = {}): AsyncIterable<SessionNotice> {
    const bus = this.#bus;
    // Not `runtime.isDone`: between the final state and `done` an iterator must still get `done`.
    const finished = () => this.#doneEmitted;
    return {
      [Symbol.asyncIterator]() {
        const buffer: SessionNotice[] = [];
        let wake: (() => void) | undefined;
        let ended = finished() || options.signal?.aborted === true;
        const onNotice = (_type: SessionNoticeType, notice: SessionNotice) => {
          buffer.push(notice);
          if (notice.type === 'done') ended = true;
          wake?.();
        };
        const onAbort = () => {
          ended = true;
          wake?.();
        };
        bus.on('*', onNotice as never);
        options.signal?.addEventListener('abort', onAbort, { once: true });
        const cleanup = () => {
          bus.off('*', onNotice as never);
          options.signal?.removeEventListener('abort', onAbort);
        };
        return {
          async next(): Promise<IteratorResult<SessionNotice>> {
            while (buffer.length === 0 && !ended) await new Promise<void>((r) => (wake = r));
            wake = undefined;
            const value = buffer.shift();
            if (value === undefined || options.signal?.aborted) {
              cleanup();
              return { done: true, value: undefined };
            }
            return { done: false, value };
          },
          async return(): Promise<IteratorResult<SessionNotice>> {
            cleanup();
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  #dispatch(input: SessionInput): void {
    const effects = this.#runtime.dispatch(input);
    for (const effect of effects) {
      if (effect.type === 'client.error' && isRefusalOf(effect, input)) throw new AseError(effect.code, effect.message);
    }
  }

  #onEffect(effect: Effect): void {
    if (effect.type === 'transcript.emit') this.#emit({ type: 'transcript', entry: effect.entry });
    else if (effect.type === 'ephemeral.emit') {
      const { type: _effectType, kind, ...rest } = effect;
      this.#emit({ type: kind, ...rest } as SessionNotice);
    } else if (effect.type === 'client.error') this.#emit({ type: 'error', error: new AseError(effect.code, effect.message) });
  }

  #emit(notice: SessionNotice): void {
    this.#bus.emit(notice.type, notice as never);
  }
}

/** mitt stops at the first listener that throws; one client's bug must not starve the others. */
function guarded(listener: (notice: unknown) => void): (notice: unknown) => void {
  return (notice) => {
    try {
      listener(notice);
    } catch (error) {
      process.emitWarning(`agent-session-engine: a session listener threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
}

/** Which client errors mean "this input was refused" (others, like SESSION_FAILED, are reports). */
function isRefusalOf(error: Extract<Effect, { type: 'client.error' }>, input: SessionInput): boolean {
  switch (input.type) {
    case 'send':
      return error.code === 'DUPLICATE_SEND' || error.code === 'SESSION_STOPPED';
    case 'abort':
      return error.code === 'NOTHING_TO_ABORT';
    case 'decide':
      return error.code === 'PERMISSION_NOT_FOUND' || error.code === 'PERMISSION_ALREADY_DECIDED';
    default:
      return false;
  }
}
