/**
 * The session handle: inputs are validated and stamped, a refused input throws a typed `AseError`
 * and changes nothing; everything the runtime reports becomes a `SessionNotice` on one bus.
 */
import mittImport, { type Emitter } from 'mitt';
import { randomUUID } from 'node:crypto';
import { AseError } from '../errors.js';
import type { Effect } from '../events/effect.js';
import type { ControlMode, SessionInput } from '../events/session-input.js';
import type { SessionRuntime } from '../runtime/session-runtime.js';
import { noticeStream, type EventsOptions, type NoticeMap, type NoticeSource, type StreamNotice } from './notice-stream.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';
import type { DecideOptions, SendOptions, Session } from './session.js';
import { toSessionSnapshot, type SessionSnapshot } from './snapshot.js';
import { runTurn, type RunOptions, type TurnResult } from './turn-runner.js';
import { waitForNotice, type WaitForOptions } from './wait-for.js';

// mitt's typings are CommonJS-shaped while Node loads its ESM build (a default export);
// under NodeNext resolution TypeScript sees the namespace, so name the function's type explicitly.
const mitt = mittImport as unknown as typeof mittImport.default;

export class SessionHandle implements Session {
  readonly done: Promise<SessionSnapshot>;
  readonly #runtime: SessionRuntime;
  readonly #bus: Emitter<NoticeMap> = mitt<NoticeMap>();
  /** Set once `done` was emitted: nothing follows it. (The actor is final earlier, while engines and writes settle.) */
  #doneEmitted = false;
  #finalSnapshot: SessionSnapshot | undefined;

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
      this.#finalSnapshot = snapshot;
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
    return toSessionSnapshot(this.#runtime.actor.getSnapshot());
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

  events(options: EventsOptions = {}): AsyncIterableIterator<StreamNotice> {
    return noticeStream(this.#source(), options);
  }

  run(text: string, options: RunOptions = {}): Promise<TurnResult> {
    return runTurn(this, text, options);
  }

  waitFor<T extends SessionNoticeType>(type: T, predicate?: (notice: NoticeOf<T>) => boolean, options?: WaitForOptions): Promise<NoticeOf<T>>;
  waitFor(type: '*', predicate?: (notice: SessionNotice) => boolean, options?: WaitForOptions): Promise<SessionNotice>;
  waitFor(type: SessionNoticeType | '*', predicate?: (notice: never) => boolean, options?: WaitForOptions): Promise<SessionNotice> {
    return waitForNotice({ ...this.#source(), doneSnapshot: () => this.#finalSnapshot }, type, predicate as (notice: SessionNotice) => boolean, options);
  }

  /** Every notice, unguarded (streams and waiters do not throw), and whether `done` was emitted. */
  #source(): NoticeSource {
    return {
      subscribe: (listener) => {
        const star = (_type: SessionNoticeType, notice: unknown) => listener(notice as SessionNotice);
        this.#bus.on('*', star);
        return () => this.#bus.off('*', star);
      },
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
