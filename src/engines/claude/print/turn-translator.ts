/**
 * One `claude -p --output-format stream-json` turn read with the stream-json translator the
 * hooked engine uses (translate.ts): the output of print mode is the same message stream, one
 * process per turn. Adds what a driven turn needs: whether the `result` arrived, and how to close a
 * turn whose process died without one.
 */
import type { AgentEventBody } from '../../../events/agent-event.js';
import { ZERO_USAGE } from '../../../events/agent-event.js';
import type { TurnStreamTranslator } from '../../core/driven-engine.js';
import { ClaudeTranslator, type ClaudeTranslatorOptions } from '../translate.js';

export class ClaudePrintTurnTranslator implements TurnStreamTranslator {
  readonly #inner: ClaudeTranslator;
  turnEnded = false;

  constructor(options: ClaudeTranslatorOptions) {
    this.#inner = new ClaudeTranslator(options);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  get skipped() {
    return this.#inner.skipped;
  }

  translate(value: unknown): AgentEventBody[] {
    const bodies = this.#inner.translate(value);
    if (bodies.some((b) => b.type === 'turn_complete')) this.turnEnded = true;
    return bodies;
  }

  endWithoutResult(status: 'failed' | 'cancelled', reason: string): AgentEventBody[] {
    if (this.turnEnded) return [];
    this.turnEnded = true;
    const error: AgentEventBody[] = status === 'failed' ? [{ type: 'error', kind: 'fatal', message: reason, retryable: false }] : [];
    return [...error, { type: 'turn_complete', status, stopReason: status === 'cancelled' ? 'interrupted' : 'exited', usage: { ...ZERO_USAGE } }];
  }
}
