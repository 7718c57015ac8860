/**
 * The history an agent replays while it answers our `session/load`: its updates go through a
 * translator of their own into `entries` and never into the live event stream (the vocabulary has
 * no way yet to mark an event as history; see docs/engines/acp.md). The replay ends at the load's
 * response, read in wire order, so updates right behind it are live even before the handshake's
 * continuation runs.
 */
import type { AgentEventBody } from '../../events/agent-event.js';
import type { SkippedInput } from '../core/skipped-inputs.js';
import type { AcpSessionUpdate } from './messages.js';
import { AcpTranslator } from './translate.js';

export class HistoryReplay {
  /** Messages, tool calls and results of the replayed history (not the streaming deltas). */
  readonly entries: AgentEventBody[] = [];
  #translator: AcpTranslator | undefined;
  #loading = false;
  /** The id key of our `session/load` while its history replays. */
  #loadKey: string | undefined;

  /** True between {@link begin} and the end of the replay: updates are history. */
  get loading(): boolean {
    return this.#loading;
  }

  /** Updates of the replay the translator could not use. */
  get skipped(): readonly SkippedInput[] {
    return this.#translator?.skipped ?? [];
  }

  /** Call before `session/load` is sent. */
  begin(idPrefix: string): void {
    this.#loading = true;
    this.#translator = new AcpTranslator({ idPrefix, includeUserMessages: true });
  }

  /** The SDK wrote a `session/load` with this id key. */
  loadSent(key: string): void {
    this.#loadKey = key;
  }

  /** The response to our `session/load` with this id key arrived: later updates are live. */
  loadAnswered(key: string): void {
    if (key === this.#loadKey) this.end();
  }

  update(update: AcpSessionUpdate): void {
    this.#push(this.#translator!.update(update));
  }

  /** Ends the replay (idempotent): a message still open is flushed into the history. */
  end(): void {
    if (!this.#loading) return;
    this.#loading = false;
    this.#loadKey = undefined;
    const translator = this.#translator;
    if (translator) this.#push(translator.endTurn({ cancelled: false }));
  }

  /** History keeps what lasts (messages, tool calls and results), not the streaming deltas. */
  #push(bodies: AgentEventBody[]): void {
    for (const body of bodies) if (body.type === 'message' || body.type === 'tool_call' || body.type === 'tool_result') this.entries.push(body);
  }
}
