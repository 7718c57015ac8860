/**
 * The ACP engine's turns: one `session/prompt` per sent message, queued so that never two are in
 * flight (ACP allows one prompt per session at a time), each ended exactly once — by its prompt
 * response (read in wire order by the engine), by a cancel that timed out, or by the agent's exit.
 * Kept apart from the engine so the turn rules (cancel = `session/cancel` + every open permission
 * answered, a per-turn cost delta, late output closed before the next turn) read in one place.
 */
import type { UserMessage } from '../../events/engine-input.js';
import type { EngineContext } from '../core/engine.js';
import type { EngineEvents } from '../core/engine-events.js';
import { classifyRpcError } from './errors.js';
import { isRecord } from './messages.js';
import { timerMs } from './options.js';
import type { PendingPermission, PermissionBroker } from './permissions.js';
import type { AcpTranslator } from './translate.js';
import { turnUsage } from './usage.js';

export interface Turn {
  readonly localId: string;
  /** Our JSON-RPC id of its `session/prompt`, once the SDK wrote it. */
  promptKey?: string;
  /** We sent `session/cancel`: the turn ends `cancelled` whatever the agent's stopReason. */
  cancelled: boolean;
  ended: boolean;
  /** The session's cumulative USD cost when the turn started (for a per-turn delta). */
  costAtStart: number | undefined;
  cancelTimer?: { readonly id: number };
  readonly done: Promise<void>;
  markDone(): void;
}

/** A `session/prompt` response as the engine read it off the wire. */
export interface PromptResponse {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What the queue needs of its engine. */
export interface TurnQueueHost {
  readonly context: Pick<EngineContext, 'setTimeout' | 'clearTimeout'>;
  readonly events: EngineEvents;
  readonly translator: AcpTranslator;
  readonly permissions: PermissionBroker;
  /** How long a cancelled turn may take to end before the agent is stopped. */
  readonly cancelTimeoutMs: number;
  /** A prompt may go out: the session is ready and nothing is taking the agent down. */
  canPrompt(): boolean;
  /** Sends `session/prompt`; its response comes back through {@link TurnQueue.promptAnswered}. */
  sendPrompt(text: string): void;
  /** Sends `session/cancel`. */
  sendCancel(): Promise<unknown>;
  /** Takes the agent down (a cancelled turn did not end in time). */
  kill(reason: string): void;
}

export class TurnQueue {
  readonly #host: TurnQueueHost;
  readonly #queue: UserMessage[] = [];
  #turn: Turn | undefined;

  constructor(host: TurnQueueHost) {
    this.#host = host;
  }

  /** The running turn, if any. */
  get current(): Turn | undefined {
    return this.#turn;
  }

  enqueue(message: UserMessage): void {
    this.#queue.push(message);
    this.pump();
  }

  /** Starts the next queued turn if none is running and a prompt may go out. */
  pump(): void {
    const host = this.#host;
    if (this.#turn || !host.canPrompt()) return;
    const message = this.#queue.shift();
    if (!message) return;
    // Late output of the previous turn is closed here, not merged into this turn.
    const late = host.translator.beginTurn();
    let markDone!: () => void;
    const done = new Promise<void>((r) => (markDone = r));
    const cost = host.translator.info.cost;
    const turn: Turn = { localId: message.localId, cancelled: false, ended: false, costAtStart: cost?.currency === 'USD' ? cost.amount : undefined, done, markDone };
    this.#turn = turn;
    host.sendPrompt(message.text);
    // Emitted once the turn is set and its prompt queued: a listener reacting (send, abort) sees a consistent state.
    for (const body of late) host.events.emit(body);
  }

  /** The SDK wrote a `session/prompt` with this id key: the running turn's, if it has none yet. */
  promptSent(key: string): void {
    if (this.#turn && this.#turn.promptKey === undefined) this.#turn.promptKey = key;
  }

  /** The response to our request `key` (a `session/prompt`) arrived, in wire order. */
  promptAnswered(key: string, response: PromptResponse): void {
    const turn = this.#turn;
    if (turn && turn.promptKey === key) this.#finish(turn, response);
  }

  /** The prompt's response ends the turn here. */
  #finish(turn: Turn, response: PromptResponse): void {
    if (turn.ended) return;
    const host = this.#host;
    const stopReason = isRecord(response.result) && typeof response.result['stopReason'] === 'string' ? response.result['stopReason'] : undefined;
    const cancelled = turn.cancelled || stopReason === 'cancelled';
    this.end(turn, cancelled);
    if (response.error && !turn.cancelled) {
      const { code, message, data } = response.error;
      const { kind, retryable } = classifyRpcError(code, message, data);
      host.events.emit({ type: 'error', kind, message: `acp agent: session/prompt failed: ${message} (JSON-RPC ${code})${data === undefined ? '' : ` ${JSON.stringify(data)}`}`, retryable });
      host.events.emit({ type: 'turn_complete', status: 'failed', usage: turnUsage(undefined, host.translator.takeChunkUsage()) });
    } else {
      const usage = turnUsage(response.result, host.translator.takeChunkUsage());
      const cost = host.translator.info.cost;
      if (turn.costAtStart !== undefined && cost?.currency === 'USD') usage.costUsd = Math.max(0, cost.amount - turn.costAtStart);
      host.events.emit({ type: 'turn_complete', status: cancelled ? 'cancelled' : 'completed', ...(stopReason !== undefined && { stopReason }), usage });
    }
    this.pump();
  }

  /** Common end of a turn: translator flush, timers, open permissions get their grace period. */
  end(turn: Turn, cancelled: boolean): void {
    const host = this.#host;
    turn.ended = true;
    if (this.#turn === turn) this.#turn = undefined;
    if (turn.cancelTimer) host.context.clearTimeout(turn.cancelTimer);
    for (const body of host.translator.endTurn({ cancelled })) host.events.emit(body);
    host.permissions.expireLater('turn ended');
    turn.markDone();
  }

  /**
   * Cancels the running turn: `session/cancel`, then every open permission answered `cancelled`
   * (ACP requires both). The turn still ends through its prompt response (forced to `cancelled`);
   * if none comes within `cancelTimeoutMs`, the turn is ended here and the agent stopped.
   * `only` = the request that prompted the cancel, answered even when no turn runs.
   */
  async cancel(only?: PendingPermission): Promise<void> {
    const host = this.#host;
    const turn = this.#turn;
    const permissions = host.permissions;
    if (!turn || turn.ended || turn.cancelled) {
      if (only) permissions.settle(only.requestId, { outcome: 'cancelled' }, 'cancelled');
      if (turn?.cancelled) permissions.cancelAll('turn cancelled');
      return;
    }
    turn.cancelled = true;
    const sent = host.sendCancel();
    permissions.cancelAll('turn cancelled');
    turn.cancelTimer = host.context.setTimeout(() => this.#cancelTimedOut(turn), timerMs(host.cancelTimeoutMs));
    await sent.catch(() => undefined); // a dead connection is reported by the exit path
  }

  #cancelTimedOut(turn: Turn): void {
    const host = this.#host;
    if (turn.ended || host.events.exited) return;
    host.events.emit({ type: 'error', kind: 'protocol', message: `acp agent did not end the cancelled turn within ${host.cancelTimeoutMs} ms; stopping it`, retryable: true });
    this.end(turn, true);
    host.events.emit({ type: 'turn_complete', status: 'cancelled', usage: turnUsage(undefined, host.translator.takeChunkUsage()) });
    host.kill('cancel timed out');
  }
}
