/**
 * `session.run(text, options)`: send one message and resolve at the end of its turn with what the
 * turn produced. The "send and wait for the turn's end" helper every client wrote, done once, with
 * the endings such helpers forget: the engine dying mid-turn, the session failing before the
 * message was delivered, the session stopping, an abort.
 *
 * It works from the notices alone (it subscribes before sending), so it needs nothing of the
 * session but `on`, `send` and `abort`, and it accepts a `send`/`abort` that returns a value or a
 * promise.
 */
import { randomUUID } from 'node:crypto';
import { AseError, isAseError } from '../errors.js';
import { ZERO_USAGE, type AgentEvent, type AgentEventOf, type TurnUsage } from '../events/agent-event.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import { messageText } from '../events/message-text.js';
import type { SessionNotice } from './notices.js';
import type { CanUseTool } from './permission-policy.js';

export interface RunOptions {
  /**
   * Aborting it aborts the turn and rejects `run()` at once with an `AbortError` (`AseError` code
   * `ABORTED`). If the message is still queued then, the turn is aborted as soon as it starts:
   * an accepted message cannot be taken back.
   */
  signal?: AbortSignal;
  /** The message's localId (idempotent retries); default: a new UUID. */
  localId?: string;
  /**
   * Called with each AgentEvent of this turn (text deltas included), from its start to its
   * `turn_complete`: nothing of other turns. A listener that throws is reported as a process
   * warning and does not end the turn. `runStreamed()` gives the same events as an async iterable.
   */
  onEvent?: (event: AgentEvent) => void;
  /** The permission policy for this turn's tool requests; wins over the session's `canUseTool` (permission-policy.ts). */
  canUseTool?: CanUseTool;
}

/** Internal: told when the run's turn starts and ends (the session scopes a run's `canUseTool` with it). */
export interface TurnHooks {
  started?(): void;
  ended?(): void;
}

/** An assistant (or agent-reported user/system) message of the turn, as the transcript holds it. */
export type TurnMessage = Omit<AgentEventOf<'message'>, 'type' | 'gen' | 'at'>;

export interface TurnResult {
  localId: string;
  /** How the turn ended. `failed` and `cancelled` come with `error`. */
  status: 'completed' | 'failed' | 'cancelled';
  /** The text of the turn's last assistant message that has text (the agent's answer); '' if none. */
  text: string;
  /** The turn's usage as the agent reported it (zeros when the turn ended without a report). */
  usage: TurnUsage;
  /** `usage.costUsd`, or 0 when the agent reports no cost. Exact, not rounded. */
  costUsd: number;
  /** Every `message` of the turn, in order. */
  messages: TurnMessage[];
  /** Every durable transcript entry of the turn, from its `user_message` to its end (empty if it never started). */
  entries: TranscriptEntry[];
  /**
   * Why the turn did not complete: `ENGINE_ERROR` (the agent failed or its engine died; the agent's
   * error kind in `details`), `ABORTED` (the turn was aborted or stalled), `SESSION_FAILED` (the
   * session failed before the message was delivered; it stays queued), `SESSION_STOPPED` (the
   * session was stopped first).
   */
  error?: AseError;
}

/** The session methods a turn runner uses; `send` and `abort` may return a value or a promise. */
export interface TurnHost {
  on(type: '*', listener: (notice: SessionNotice) => void): () => void;
  send(text: string, options: { localId: string }): unknown;
  abort(): unknown;
}

export function runTurn(host: TurnHost, text: string, options: RunOptions = {}, hooks: TurnHooks = {}): Promise<TurnResult> {
  const { signal, onEvent } = options;
  const localId = options.localId ?? randomUUID();
  const abortError = () => new AseError('ABORTED', 'run(): the signal was aborted', signal?.reason !== undefined ? { cause: signal.reason } : {});
  if (signal?.aborted) return Promise.reject(abortError());

  return new Promise<TurnResult>((resolve, reject) => {
    let started = false;
    let ended = false;
    let abortWanted = false;
    let settled = false;
    const entries: TranscriptEntry[] = [];
    const messages: TurnMessage[] = [];
    let agentError: { kind: string; message: string; retryable: boolean } | undefined;

    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    /** The turn is over (or will never run): stop listening, resolve unless an abort already rejected. */
    const end = (status: TurnResult['status'], usage: TurnUsage, error?: AseError) => {
      ended = true;
      unsubscribe();
      if (started) hooks.ended?.();
      // The signal aborted while the turn ended (one signal shared with createSession stops the
      // session first, in the same tick): an aborted run rejects, whatever ended it.
      if (signal?.aborted) {
        settle(() => reject(abortError()));
        return;
      }
      const result: TurnResult = {
        localId,
        status,
        text: answerText(messages),
        usage,
        costUsd: usage.costUsd ?? 0,
        messages,
        entries,
        ...(error && { error }),
      };
      settle(() => resolve(result));
    };
    const requestAbort = () => {
      // Outside the listener that saw the turn start: an input given inside one is applied late and
      // its refusal is broadcast as an error notice instead of thrown to us.
      queueMicrotask(() => {
        if (!ended) ignoreRefusal(() => host.abort());
      });
    };
    const onAbort = () => {
      abortWanted = true;
      if (started) requestAbort();
      // Keep listening: a queued message is aborted when it starts, and the listener goes when the turn ends.
      settle(() => reject(abortError()));
    };

    const unsubscribe = host.on('*', (notice) => {
      if (ended) return;
      if (notice.type === 'agent') {
        if (started && onEvent) deliver(onEvent, notice.event);
        return;
      }
      if (notice.type === 'transcript') {
        const { entry } = notice;
        const payload = entry.payload as { localId?: string } | undefined;
        if (!started) {
          if (entry.type !== 'user_message' || payload?.localId !== localId) return;
          started = true;
          hooks.started?.();
          if (abortWanted) requestAbort();
        }
        entries.push(entry);
        if (entry.type === 'message') messages.push(entry.payload as TurnMessage);
        else if (entry.type === 'error') agentError = entry.payload as typeof agentError;
        else if ((entry.type === 'turn_complete' || entry.type === 'turn_ended') && payload?.localId === localId) {
          const p = entry.payload as { status: TurnResult['status']; usage?: TurnUsage; reason?: string };
          end(p.status, p.usage ?? { ...ZERO_USAGE }, p.status === 'completed' ? undefined : turnError(p.status, p.reason, agentError));
        }
      } else if (notice.type === 'error' && notice.error.code === 'SESSION_FAILED' && !started) {
        // Nothing will deliver the message until someone sends again or switches mode. The error
        // is the root cause's (AGENT_NOT_FOUND, ENGINE_ERROR, ...), not a SESSION_FAILED around it.
        const root = rootCause(notice.error);
        const why = `the session failed before the message was delivered (it stays queued): ${root.message}`;
        end('failed', { ...ZERO_USAGE }, new AseError(root.code, why, { ...(root !== notice.error && { cause: notice.error }), ...(root.details && { details: root.details }) }));
      } else if (notice.type === 'done') {
        end('cancelled', { ...ZERO_USAGE }, new AseError('SESSION_STOPPED', 'the session ended before the turn did'));
      }
    });
    signal?.addEventListener('abort', onAbort, { once: true });

    let accepted: unknown;
    try {
      accepted = host.send(text, { localId });
    } catch (error) {
      ended = true;
      unsubscribe();
      settle(() => reject(error));
      return;
    }
    Promise.resolve(accepted).catch((error: unknown) => {
      if (ended) return;
      ended = true;
      unsubscribe();
      settle(() => reject(error));
    });
  });
}

/** What a `failed` or `cancelled` turn reports as its error. */
function turnError(status: 'failed' | 'cancelled', reason: string | undefined, agentError: { kind: string; message: string; retryable: boolean } | undefined): AseError {
  if (reason === 'session stopped') return new AseError('SESSION_STOPPED', 'the session was stopped during the turn');
  if (status === 'cancelled') return new AseError('ABORTED', `the turn was cancelled${reason ? `: ${reason}` : ''}`);
  const why = agentError?.message ?? reason ?? 'the agent reported the turn failed';
  return new AseError('ENGINE_ERROR', `the turn failed: ${why}`, agentError ? { details: { kind: agentError.kind, retryable: agentError.retryable } } : {});
}

/** A caller's event listener: its bug is reported, and the turn goes on. */
function deliver(listener: (event: AgentEvent) => void, event: AgentEvent): void {
  try {
    listener(event);
  } catch (error) {
    process.emitWarning(`agent-session-engine: run(): onEvent threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The innermost AseError of a cause chain: what actually went wrong. */
function rootCause(error: AseError): AseError {
  let root = error;
  while (isAseError(root.cause)) root = root.cause;
  return root;
}

/** The last assistant message with text: the agent's answer (Claude Code's `result`, Codex's final answer). */
function answerText(messages: readonly TurnMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    const text = messageText(m);
    if (text !== '') return text;
  }
  return '';
}

/** Calls an input method whose refusal does not matter here (the turn may have ended meanwhile). */
function ignoreRefusal(call: () => unknown): void {
  try {
    const result = call();
    if (result instanceof Promise) result.catch((error: unknown) => ignoreUnlessUnexpected(error));
  } catch (error) {
    ignoreUnlessUnexpected(error);
  }
}

function ignoreUnlessUnexpected(error: unknown): void {
  if (isAseError(error)) return;
  process.emitWarning(`agent-session-engine: run(): aborting the turn failed: ${error instanceof Error ? error.message : String(error)}`);
}
