/**
 * Ordered delivery of an engine's AgentEvents to its listeners. Events queue up while a delivery
 * is running, so a listener that reacts synchronously (e.g. calls `abort()`, which emits) cannot
 * make later listeners see events out of order; a listener that throws is recorded, not fatal.
 */
import type { AgentEvent } from '../../events/agent-event.js';
import type { AgentEventListener } from './engine.js';

export class EventOutbox {
  /** Replaced (never changed in place) on subscribe and unsubscribe, so a delivery walks it without copying it per event. */
  #listeners: readonly AgentEventListener[] = [];
  readonly #queue: AgentEvent[] = [];
  #delivering = false;
  /** Errors thrown by listeners, kept for diagnostics. */
  readonly listenerErrors: unknown[] = [];

  subscribe(listener: AgentEventListener): () => void {
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  push(event: AgentEvent): void {
    this.#queue.push(event);
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
        for (const listener of this.#listeners) {
          try {
            listener(next);
          } catch (error) {
            this.listenerErrors.push(error);
          }
        }
      }
    } finally {
      this.#delivering = false;
    }
  }
}
