/**
 * EventLog: every AgentEvent an engine emitted, in order, with waits that resolve when a matching
 * event arrives (never fixed sleeps), so a test holds on a loaded machine. Part of the public kit
 * (`agent-session-engine/testing`); the conformance checks and users' own engine tests use it.
 */
import type { AgentEvent } from '../events/agent-event.js';
import type { AgentEngine } from '../engines/core/engine.js';

export type EventOfType<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

export class EventLog {
  readonly events: AgentEvent[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(engine: Pick<AgentEngine, 'onEvent'>) {
    this.#unsubscribe = engine.onEvent((event) => {
      this.events.push(event);
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Stops recording (the events so far stay). */
  detach(): void {
    this.#unsubscribe();
  }

  /** Position to wait from: events before it are ignored by `waitFor(…, mark)` and `of(…, mark)`. */
  mark(): number {
    return this.events.length;
  }

  /** The events of one type from `from` on. */
  of<T extends AgentEvent['type']>(type: T, from = 0): EventOfType<T>[] {
    return this.events.slice(from).filter((e): e is EventOfType<T> => e.type === type);
  }

  /** The first event of `type` from `from` on that satisfies `pred`, as soon as it is there. */
  waitFor<T extends AgentEvent['type']>(type: T, from = 0, pred: (e: EventOfType<T>) => boolean = () => true, timeoutMs = 30_000): Promise<EventOfType<T>> {
    return this.waitUntil(() => this.of(type, from).find(pred), `${type}`, timeoutMs);
  }

  /** Resolves with `probe()`'s first defined value, re-checked on every event; rejects after `timeoutMs` naming what was seen. */
  waitUntil<R>(probe: () => R | undefined, what: string, timeoutMs = 30_000): Promise<R> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = probe();
        if (hit === undefined) return;
        cleanup();
        resolve(hit);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; saw: ${this.events.map((e) => e.type).join(', ') || 'nothing'}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }
}
