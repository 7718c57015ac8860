/**
 * The emitting side every engine shares, so the contract's event rules live in one place: a body
 * is stamped with the generation and the context clock's time, validated against
 * AgentEventSchema, delivered in order through an EventOutbox, and nothing follows `exited`. It
 * also knows when the session last heard from the engine, which is what throttles `activity`.
 */
import { AseError } from '../../errors.js';
import { ACTIVITY_INTERVAL_MS, AgentEventSchema, type AgentEvent, type AgentEventBody } from '../../events/agent-event.js';
import { describeId, resumeTokenProblem } from './agent-ids.js';
import { noteSkipped } from './skipped-inputs.js';
import type { AgentEventListener, EngineContext } from './engine.js';
import { EventOutbox } from './event-outbox.js';
import { handCheckedEvent } from './hand-checked-events.js';

/** A body that failed AgentEvent validation (an engine bug if it ever happens), kept for diagnostics (bounded: skipped-inputs.ts). */
export interface InvalidEvent {
  reason: string;
  raw: unknown;
}

export interface EngineEventsOptions {
  /**
   * What an invalid body does: `'record'` (default) keeps it in `invalidEvents` and emits nothing,
   * so a translation bug cannot break a session; `'throw'` raises the zod error where the body was
   * produced (the fake engine's scripts).
   */
  onInvalid?: 'record' | 'throw';
}

export class EngineEvents {
  readonly #clock: Pick<EngineContext, 'now'>;
  readonly #onInvalid: 'record' | 'throw';
  readonly #outbox = new EventOutbox();
  readonly #invalid: InvalidEvent[] = [];
  #gen: number | undefined;
  #ready = false;
  #exited = false;
  /** Events delivered so far, to tell whether handling one upstream message produced any. */
  #count = 0;
  /** When the session last heard from the engine (any event). */
  #lastAt = Number.NEGATIVE_INFINITY;
  #resolveExited!: () => void;
  /** Resolves once `exited` has been delivered. */
  readonly exitedEmitted = new Promise<void>((resolve) => (this.#resolveExited = resolve));

  constructor(clock: Pick<EngineContext, 'now'>, options: EngineEventsOptions = {}) {
    this.#clock = clock;
    this.#onInvalid = options.onInvalid ?? 'record';
  }

  /** The generation every event is stamped with. Until it is set (no start yet) bodies are dropped. */
  bind(gen: number): void {
    this.#gen = gen;
  }

  /** True once `exited` was emitted: the engine is dead and emits nothing more. */
  get exited(): boolean {
    return this.#exited;
  }

  /** When the last event was emitted (context clock; -Infinity before the first). */
  get lastEventAt(): number {
    return this.#lastAt;
  }

  get invalidEvents(): readonly InvalidEvent[] {
    return this.#invalid;
  }

  /** Errors thrown by listeners (caught, so a broken listener cannot break the engine). */
  get listenerErrors(): readonly unknown[] {
    return this.#outbox.listenerErrors;
  }

  subscribe(listener: AgentEventListener): () => void {
    return this.#outbox.subscribe(listener);
  }

  /**
   * Appended to the message of every `auth` error: which credential variables the engine looked
   * for and which were set (names only), so "Not logged in" says what to export.
   */
  authHint: string | undefined;

  /**
   * Stamps, validates and delivers one body; returns the event, or undefined when none was emitted.
   * A `session_identified` whose id cannot be a resume token (agent-ids.ts) is not adopted: an
   * `error {kind: 'protocol'}` saying why is emitted instead (and returned).
   */
  emit(body: AgentEventBody): AgentEvent | undefined {
    if (this.#exited || this.#gen === undefined) return undefined;
    if (body.type === 'session_identified') {
      const problem = resumeTokenProblem(body.resumeToken);
      if (problem) {
        const message = `the agent reported the session id ${describeId(body.resumeToken)}, which cannot be a resume token (${problem}); it was not adopted`;
        return this.emit({ type: 'error', kind: 'protocol', message, retryable: false });
      }
    }
    const at = this.#clock.now();
    if (body.type === 'error' && body.kind === 'auth' && this.authHint) body = { ...body, message: `${body.message} (${this.authHint})` };
    let event = streamedEvent(body, this.#gen, at);
    if (!event) {
      const parsed = AgentEventSchema.safeParse({ ...body, gen: this.#gen, at });
      if (!parsed.success) {
        if (this.#onInvalid === 'throw') throw parsed.error;
        // Bounded like skipped input: a translation bug fed by a hostile agent must not grow without end.
        noteSkipped(this.#invalid, { reason: `invalid AgentEvent: ${parsed.error.issues[0]?.message ?? 'invalid'}`, raw: body });
        return undefined;
      }
      event = parsed.data;
    }
    this.#count++;
    this.#lastAt = at;
    if (event.type === 'ready') this.#ready = true;
    if (event.type === 'exited') this.#exited = true;
    this.#outbox.push(event);
    if (event.type === 'exited') this.#resolveExited();
    return event;
  }

  emitAll(bodies: readonly AgentEventBody[]): void {
    for (const body of bodies) this.emit(body);
  }

  /**
   * A start that failed before the agent ran (bad options, no binary, spawn error): reports
   * `error` + `exited {reason: 'start failed'}` as the contract asks, and returns the typed error
   * `start()` rejects with (an AseError as it is, anything else as ENGINE_START_FAILED).
   */
  startFailed(error: unknown, message: string = error instanceof Error ? error.message : String(error)): AseError {
    this.emit({ type: 'error', kind: 'fatal', message, retryable: false, ...(error instanceof AseError && { code: error.code }) });
    this.emit({ type: 'exited', code: null, signal: null, reason: 'start failed' });
    return error instanceof AseError ? error : new AseError('ENGINE_START_FAILED', message, { cause: error });
  }

  /**
   * Upstream traffic that produced no event still proves the agent alive: `activity`, only after
   * `ready` (before it the session watches no turn, and `ready` itself follows), at most once per
   * ACTIVITY_INTERVAL_MS since the last event of any kind.
   */
  signOfLife(): void {
    if (this.#ready && this.#clock.now() - this.#lastAt >= ACTIVITY_INTERVAL_MS) this.emit({ type: 'activity' });
  }

  /** Runs the handling of one upstream message; if it emitted nothing, that is a {@link signOfLife}. */
  observe(handle: () => void): void {
    const before = this.#count;
    try {
      handle();
    } finally {
      if (this.#count === before) this.signOfLife();
    }
  }
}

const validStamp = (gen: number, at: number): boolean => Number.isInteger(gen) && gen >= 0 && Number.isFinite(at) && at >= 0;

/**
 * The streamed events (most of an agent's output) checked by hand against the same rules as their
 * schemas, and built afresh with only their own fields (what the schema parse returns): a zod parse
 * per delta cost more than everything else the engine does with it. Anything else, or a body that
 * fails these checks, goes through AgentEventSchema (which also says what is wrong).
 */
function streamedEvent(body: AgentEventBody, gen: number, at: number): AgentEvent | undefined {
  switch (body.type) {
    case 'text_delta': {
      // `parentCallId` (a sub-agent's delta): absent, or a non-empty string, as in subAgentScope.
      const parent = body.parentCallId;
      if (typeof body.messageId !== 'string' || typeof body.text !== 'string' || !validStamp(gen, at)) return undefined;
      if (parent === undefined) return { type: 'text_delta', gen, at, messageId: body.messageId, text: body.text };
      return typeof parent === 'string' && parent !== '' ? { type: 'text_delta', gen, at, parentCallId: parent, messageId: body.messageId, text: body.text } : undefined;
    }
    case 'thinking': {
      const parent = body.parentCallId;
      if (typeof body.active !== 'boolean' || !validStamp(gen, at)) return undefined;
      if (parent === undefined) return { type: 'thinking', gen, at, active: body.active };
      return typeof parent === 'string' && parent !== '' ? { type: 'thinking', gen, at, parentCallId: parent, active: body.active } : undefined;
    }
    case 'activity':
      return validStamp(gen, at) ? { type: 'activity', gen, at } : undefined;
    default:
      return validStamp(gen, at) ? handCheckedEvent(body, gen, at) : undefined;
  }
}
