/**
 * The `thinking` indicator of a translator: the agent's reasoning is reported as transitions only
 * (`thinking {active: true}` once when it starts, `{active: false}` once when text, a tool call or
 * the turn's end follows), however many reasoning deltas arrive in between.
 */
import type { AgentEventBody } from '../../events/agent-event.js';

export class ThinkingIndicator {
  #active = false;

  get active(): boolean {
    return this.#active;
  }

  /** `thinking {active: true}` unless it is already on. */
  on(): AgentEventBody[] {
    if (this.#active) return [];
    this.#active = true;
    return [{ type: 'thinking', active: true }];
  }

  /** `thinking {active: false}` if it was on. */
  off(): AgentEventBody[] {
    if (!this.#active) return [];
    this.#active = false;
    return [{ type: 'thinking', active: false }];
  }
}
