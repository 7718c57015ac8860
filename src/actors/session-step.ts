/**
 * One step of the SessionActor: a working copy of the context plus the effects the step emits,
 * in order. Policy functions mutate a Step; the machine's actions flush it as one `assign`
 * followed by `emit`s. Keeping this a plain object keeps every policy function pure and small.
 */
import type { Effect } from '../events/effect.js';
import type { Ephemeral } from '../events/ephemeral.js';
import type { PermissionDecision } from '../events/engine-input.js';
import type { SessionContext } from './session-context.js';
import { toPersisted } from './session-context.js';

export class Step {
  readonly ctx: SessionContext;
  readonly effects: Effect[] = [];
  /** `ctx.timers` is this step's own copy (made on its first change), so later changes need no copy. */
  #timersCopied = false;

  constructor(
    context: SessionContext,
    /** The time of the event being processed (epoch ms); a batch of agent output moves it to each event's (agent-output.ts). */
    public at: number,
  ) {
    this.ctx = { ...context };
  }

  emit(effect: Effect): void {
    this.effects.push(effect);
  }

  ephemeral(ephemeral: Ephemeral): void {
    this.emit({ type: 'ephemeral.emit', ...ephemeral } as Effect);
  }

  setTimer(id: string, deadline: number): void {
    // Re-arming moves the timer to the end, so key order is arming order (the runtime's tie-break).
    const timers = this.#ownTimers();
    delete timers[id];
    timers[id] = deadline;
    this.emit({ type: 'timer.set', id, deadline });
  }

  cancelTimer(id: string): void {
    if (!(id in this.ctx.timers)) return;
    delete this.#ownTimers()[id];
    this.emit({ type: 'timer.cancel', id });
  }

  /**
   * The timers to change in place: copied once per step (the context this step started from, and
   * so the snapshot before it, keeps its own), not once per change: a batch of agent output turns
   * the thinking indicator on and off many times in one step.
   */
  #ownTimers(): Record<string, number> {
    if (!this.#timersCopied) {
      this.ctx.timers = { ...this.ctx.timers };
      this.#timersCopied = true;
    }
    return this.ctx.timers;
  }

  /** Appends a durable transcript entry for the current generation (or `gen`); returns its eventId. */
  transcript(type: string, payload: unknown, gen: number = this.ctx.gen): string {
    const seq = this.ctx.seq + 1;
    this.ctx.seq = seq;
    const eventId = this.ctx.instance ? `${this.ctx.instance}.${gen}-${seq}` : `${gen}-${seq}`;
    this.emit({
      type: 'transcript.emit',
      entry: {
        ts: this.at,
        sessionId: this.ctx.sessionId,
        agent: this.ctx.agent,
        gen,
        eventId,
        type,
        payload,
      },
    });
    return eventId;
  }

  status(detail?: string): void {
    this.ephemeral({
      kind: 'status',
      phase: this.ctx.phase,
      mode: this.ctx.mode,
      gen: this.ctx.gen,
      ...(detail !== undefined && { detail }),
    });
  }

  clientError(code: Extract<Effect, { type: 'client.error' }>['code'], message: string, ids: { requestId?: string; localId?: string } = {}): void {
    this.emit({ type: 'client.error', code, message, ...ids });
  }

  /** True when engine-bound effects may still go to generation `gen`. */
  canReach(gen: number): boolean {
    return this.ctx.liveGen === gen && this.ctx.stopSentFor !== gen;
  }

  answer(gen: number, requestId: string, decision: PermissionDecision): void {
    if (this.canReach(gen)) this.emit({ type: 'engine.answer_permission', gen, requestId, decision });
  }

  /**
   * Asks for the durable state to be written: at once when `urgent` (the permission ledger),
   * otherwise debounced. Only one write is in flight; changes made meanwhile follow it.
   */
  persist(urgent: boolean): void {
    const p = { ...this.ctx.persist, dirty: true, urgent: this.ctx.persist.urgent || urgent };
    this.ctx.persist = p;
    if (p.inFlight) return;
    if (urgent) this.writeNow();
    else if (!('persist' in this.ctx.timers)) this.setTimer('persist', this.at + this.ctx.config.persistDebounceMs);
  }

  writeNow(expectedVersion: number = this.ctx.version): void {
    this.cancelTimer('persist');
    this.ctx.persist = { ...this.ctx.persist, inFlight: true, dirty: false, urgent: false };
    this.emit({ type: 'state.persist', state: toPersisted(this.ctx, this.at), expectedVersion });
  }
}
