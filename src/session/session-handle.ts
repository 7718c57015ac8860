/**
 * The session handle: inputs are validated and stamped, and each input method returns a promise
 * that resolves once the input is stored (fsynced, for the file store) and rejects with a typed
 * `AseError` when it was refused (nothing changed) or could not be stored. Refusals also go out as
 * `error` notices, and the promises are marked handled, so a caller that does not await never gets
 * an unhandled rejection. Everything the runtime reports becomes a `SessionNotice` on one bus.
 */
import { randomUUID } from 'node:crypto';
import { AseError, isAseError, toAseError } from '../errors.js';
import type { Effect } from '../events/effect.js';
import type { ControlMode, SessionInput } from '../events/session-input.js';
import type { AppliedInput, SessionRuntime } from '../effects/session-runtime.js';
import { NoticeBus } from './notice-bus.js';
import { noticeStream, type EventsOptions, type NoticeSource, type StreamNotice } from './notice-stream.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';
import type { DecideOptions, SendOptions, SendReceipt, Session } from './session.js';
import { toSessionSnapshot, type SessionSnapshot } from './snapshot.js';
import { PermissionPolicies, type CanUseTool } from './permission-policy.js';
import { runTurn, type RunOptions, type TurnResult } from './turn-runner.js';
import { streamTurn, type StreamedTurn } from './turn-stream.js';
import { waitForNotice, type WaitForOptions } from './wait-for.js';
import { SessionTerminal } from './session-terminal.js';

export class SessionHandle implements Session {
  readonly done: Promise<SessionSnapshot>;
  readonly #runtime: SessionRuntime;
  readonly #bus = new NoticeBus();
  readonly #policies: PermissionPolicies;
  /** Set once `done` was emitted: nothing follows it. (The actor is final earlier, while engines and writes settle.) */
  #doneEmitted = false;
  #finalSnapshot: SessionSnapshot | undefined;
  /** The runtime's last engine failure since the agent was last ready: the cause a SESSION_FAILED names. */
  #lastFailure: AseError | undefined;

  constructor(
    readonly id: string,
    runtime: SessionRuntime,
    /** The agent's own terminal UI while in local mode (see SessionTerminal). */
    readonly terminal: SessionTerminal = new SessionTerminal(),
  ) {
    this.#runtime = runtime;
    // First on the bus: a prompt reaches the policy before any other listener can act on it.
    this.#policies = new PermissionPolicies({ on: (type, listener) => this.#bus.on(type, listener), decide: (id, decision, options) => this.decide(id, decision, options) });
    runtime.observe({
      effect: (effect) => this.#onEffect(effect),
      agentEvent: (event) => {
        if (event.type === 'ready') this.#lastFailure = undefined;
        // A fatal error is what fails a session (the statechart hears it right after this).
        else if (event.type === 'error' && event.kind === 'fatal') this.#lastFailure = new AseError(event.code ?? 'ENGINE_ERROR', event.message);
        if (this.#bus.listens('agent')) this.#emit({ type: 'agent', event });
      },
      failure: (error) => this.#emit({ type: 'error', error }),
    });
    this.done = runtime.done.then(() => {
      const snapshot = this.snapshot();
      this.#finalSnapshot = snapshot;
      this.#doneEmitted = true;
      this.#emit({ type: 'done', snapshot });
      return snapshot;
    });
  }

  send(text: string, options: SendOptions = {}): SendReceipt {
    const localId = options?.localId ?? randomUUID();
    const recorded = this.#submit({ type: 'send', text, localId }).then(() => localId);
    return Object.assign(handled(recorded), { localId });
  }

  abort(): Promise<void> {
    return this.#submit({ type: 'abort' });
  }

  switchMode(to: ControlMode): Promise<void> {
    return this.#submit({ type: 'switch_mode', to });
  }

  decide(requestId: string, decision: 'allow' | 'deny', options: DecideOptions = {}): Promise<void> {
    return this.#submit({
      type: 'decide',
      requestId,
      decision,
      ...(options.updatedInput !== undefined && { updatedInput: options.updatedInput }),
      ...(options.updatedPermissions !== undefined && { updatedPermissions: options.updatedPermissions }),
      ...(options.message !== undefined && { message: options.message }),
    });
  }

  setModel(model: string | null): Promise<void> {
    return this.#submit({ type: 'set_model', model });
  }

  setPermissionMode(mode: string | null): Promise<void> {
    return this.#submit({ type: 'set_permission_mode', mode });
  }

  setOnline(online: boolean): void {
    // Presence of a session that has ended means nothing: a no-op, never a throw (a server's grace
    // timer may fire after the session stopped, and an uncaught throw there would end the server).
    if (this.#runtime.isDone) return;
    try {
      this.#dispatch({ type: online ? 'client_online' : 'client_offline' });
    } catch (error) {
      if (!isAseError(error, 'SESSION_STOPPED')) throw error;
    }
  }

  durable(): Promise<void> {
    return this.#runtime.durable();
  }

  stop(): Promise<SessionSnapshot> {
    if (!this.#runtime.isDone) {
      // Inside a listener the stop waits for the event being handled; done already: nothing to stop.
      void this.#runtime.apply({ type: 'stop' }).catch(() => undefined);
    }
    return this.done;
  }

  snapshot(): SessionSnapshot {
    return toSessionSnapshot(this.#runtime.actor.getSnapshot());
  }

  on(type: SessionNoticeType | '*', listener: (notice: never) => void): () => void {
    return this.#bus.on(type, guarded(listener as (notice: unknown) => void));
  }

  events(options: EventsOptions = {}): AsyncIterableIterator<StreamNotice> {
    return noticeStream(this.#source(), options);
  }

  run(text: string, options: RunOptions = {}): Promise<TurnResult> {
    const policy = options.canUseTool;
    if (policy !== undefined && typeof policy !== 'function') return handled(Promise.reject(new AseError('INVALID_INPUT', 'run(): canUseTool must be a function')));
    let leave: (() => void) | undefined;
    const hooks = policy ? { started: () => void (leave = this.#policies.enterTurn(policy)), ended: () => leave?.() } : {};
    return runTurn(this, text, options, hooks);
  }

  runStreamed(text: string, options: Omit<RunOptions, 'onEvent'> = {}): StreamedTurn {
    return streamTurn((withEvents) => this.run(text, withEvents), options);
  }

  /** Sets the session's inline permission policy (`createSession({ canUseTool })`); undefined removes it. */
  setPermissionPolicy(policy: CanUseTool | undefined): void {
    this.#policies.setSessionPolicy(policy);
  }

  waitFor<T extends SessionNoticeType>(type: T, predicate?: (notice: NoticeOf<T>) => boolean, options?: WaitForOptions): Promise<NoticeOf<T>>;
  waitFor(type: '*', predicate?: (notice: SessionNotice) => boolean, options?: WaitForOptions): Promise<SessionNotice>;
  waitFor(type: SessionNoticeType | '*', predicate?: (notice: never) => boolean, options?: WaitForOptions): Promise<SessionNotice> {
    return waitForNotice({ ...this.#source(), doneSnapshot: () => this.#finalSnapshot }, type, predicate as (notice: SessionNotice) => boolean, options);
  }

  /** Every notice, unguarded (streams and waiters do not throw), and whether `done` was emitted. */
  #source(): NoticeSource {
    return {
      subscribe: (listener) => this.#bus.on('*', listener),
      // Not `runtime.isDone`: between the final state and `done` a stream must still get `done`.
      finished: () => this.#doneEmitted,
    };
  }

  #dispatch(input: SessionInput): void {
    const effects = this.#runtime.dispatch(input);
    for (const effect of effects) {
      if (effect.type === 'client.error' && isRefusalOf(effect, input)) throw new AseError(effect.code, effect.message);
    }
  }

  /**
   * Applies an input and settles once it is stored: refused (the statechart's refusal, or the
   * runtime's `INVALID_INPUT` / `SESSION_STOPPED`) → rejected and reported as an `error` notice;
   * accepted → once the write holding the state right after it is stored (group commit: one write
   * carries every input made while the previous write ran).
   */
  #submit(input: SessionInput): Promise<void> {
    const refuse = (error: unknown): AseError => {
      const refusal = toAseError(error, 'INVALID_INPUT');
      if (!this.#doneEmitted) this.#emit({ type: 'error', error: refusal });
      return refusal;
    };
    let applied: Promise<AppliedInput>;
    try {
      applied = this.#runtime.apply(input);
    } catch (error) {
      // Refused before it reached the statechart: reported now, in the order inputs were given.
      return handled(Promise.reject(refuse(error)));
    }
    const outcome = applied.then(
      ({ effects, writeIndex }) => {
        for (const effect of effects) {
          // The statechart's refusal already went out as a notice (#onEffect).
          if (effect.type === 'client.error' && isRefusalOf(effect, input)) {
            throw new AseError(effect.code, effect.message, { details: { ...(effect.localId !== undefined && { localId: effect.localId }), ...(effect.requestId !== undefined && { requestId: effect.requestId }) } });
          }
        }
        return this.#runtime.stored(writeIndex);
      },
      (error: unknown) => {
        throw refuse(error);
      },
    );
    return handled(outcome);
  }

  #onEffect(effect: Effect): void {
    // A dense turn makes thousands of transcript and thinking notices: none is built when no listener would get it.
    if (effect.type === 'transcript.emit') {
      if (this.#bus.listens('transcript')) this.#emit({ type: 'transcript', entry: effect.entry });
    } else if (effect.type === 'ephemeral.emit') {
      if (!this.#bus.listens(effect.kind)) return;
      const { type: _effectType, kind, ...rest } = effect;
      this.#emit({ type: kind, ...rest } as SessionNotice);
    } else if (effect.type === 'client.error') {
      // A failed session says why: the engine failure behind it (AGENT_NOT_FOUND, ...) is its cause.
      const cause = effect.code === 'SESSION_FAILED' ? this.#lastFailure : undefined;
      this.#emit({ type: 'error', error: new AseError(effect.code, effect.message, cause ? { cause } : {}) });
    }
  }

  #emit(notice: SessionNotice): void {
    this.#bus.emit(notice);
  }
}

/** Marks a promise handled (a caller that ignores it never causes an unhandled rejection) and returns it. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
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
    case 'set_model':
    case 'set_permission_mode':
      return error.code === 'SESSION_STOPPED';
    default:
      return false;
  }
}
