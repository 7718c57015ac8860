/** The handle `createSession()` returns: the session's whole public interface. */
import type { ControlMode } from '../events/session-input.js';
import type { EventsOptions, StreamNotice } from './notice-stream.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';
import type { SessionSnapshot } from './snapshot.js';
import type { RunOptions, TurnResult } from './turn-runner.js';
import type { StreamedTurn } from './turn-stream.js';
import type { WaitForOptions } from './wait-for.js';

export interface SendOptions {
  /** Client-chosen id for idempotent retries; default: a new UUID. */
  localId?: string;
}

/**
 * What `send()` returns: a promise that resolves with the message's `localId` once the message is
 * stored (it then survives any crash of this host and is delivered once), and rejects with an
 * `AseError` when it was refused or could not be stored. The `localId` is also there at once.
 */
export type SendReceipt = Promise<string> & { readonly localId: string };

export interface DecideOptions {
  /** Allow with a modified tool input. */
  updatedInput?: unknown;
  /** Deny with a reason the agent sees. */
  message?: string;
  /** Allow and change the agent's permission rules (engine-specific, e.g. Claude's `{type:'addRules', …}`). */
  updatedPermissions?: unknown[];
}
import type { SessionTerminal } from './session-terminal.js';

export interface Session {
  readonly id: string;
  /**
   * The agent's own terminal UI while the session is in local mode (`onData`, `write`, `resize`,
   * `onChange`): render it in a terminal, an IDE panel or a web page. See docs/engines.md "Local mode".
   */
  readonly terminal: SessionTerminal;
  /**
   * Queues a user message (sent now, or when the agent is ready). Resolves with its localId once it
   * is stored; rejects with `DUPLICATE_SEND`, `SESSION_STOPPED`, `INVALID_INPUT`, `PERSIST_FAILED`
   * or `LEASE_LOST`. Once another host took the session's lease, this and every other input but
   * `stop` is refused with `LEASE_LOST`, also after the session wound down (never `SESSION_STOPPED`:
   * it did not stop, it moved). The localId is also on the returned promise (`.localId`).
   */
  send(text: string, options?: SendOptions): SendReceipt;
  /** Interrupts the running turn; resolves once that is stored. Rejects with `NOTHING_TO_ABORT` when none runs. */
  abort(): Promise<void>;
  /** Hands control to the terminal (`local`) or to remote clients (`remote`); resolves once that is stored. */
  switchMode(to: ControlMode): Promise<void>;
  /** Answers a permission request; resolves once stored. Rejects with `PERMISSION_NOT_FOUND` / `PERMISSION_ALREADY_DECIDED`. */
  decide(requestId: string, decision: 'allow' | 'deny', options?: DecideOptions): Promise<void>;
  /**
   * Changes the model for the rest of the session: the live agent is told (Claude at once, Codex
   * from its next turn: docs/engines.md), and every later start (restart, crash recovery, mode
   * switch, a continued session) carries it, winning over `engineOptions.model`. `null` goes back to
   * the `engineOptions` model (or the agent's default). Resolves once the choice is stored.
   * Rejects with `UNSUPPORTED` (the engine cannot; nothing changed), `INVALID_INPUT` (a name the
   * engine or its agent does not offer), `SESSION_STOPPED`, `PERSIST_FAILED` or `LEASE_LOST`. An
   * agent that refuses the change later reports it as an `error` notice; the choice stays stored.
   */
  setModel(model: string | null): Promise<void>;
  /**
   * Changes the permission mode for the rest of the session, in the engine's own words: Claude's
   * `permissionMode` (`default`, `acceptEdits`, `plan`, …), Codex's `approvalPolicy` (`untrusted`,
   * `on-request`, `never`), an ACP agent's mode id. Kept and applied like `setModel`; `null` goes
   * back to the `engineOptions` one. Rejects like `setModel`.
   */
  setPermissionMode(mode: string | null): Promise<void>;
  /** Tells the session whether a remote client is connected (open prompts are re-sent on reconnect). A no-op once the session has stopped. */
  setOnline(online: boolean): void;
  /**
   * Resolves once everything the session has changed so far is in its store (at once when nothing
   * is pending): from then on another host on the same store, or this one restarted after a crash,
   * finds it by its id. `createSession` resolves as soon as the session runs, before its first
   * write; a caller that hands the id to someone else awaits this first. Rejects with
   * `PERSIST_FAILED` (the write was given up) or `LEASE_LOST` (another host took the session).
   */
  durable(): Promise<void>;
  /** Stops the engine, cancels whatever is open, persists, and resolves when everything is gone. */
  stop(): Promise<SessionSnapshot>;
  snapshot(): SessionSnapshot;
  on<T extends SessionNoticeType>(type: T, listener: (notice: NoticeOf<T>) => void): () => void;
  on(type: '*', listener: (notice: SessionNotice) => void): () => void;
  /**
   * Every notice from this call on (subscribed and buffered now, not when iteration starts), ending
   * after `done`. Bounded: a consumer that falls behind gets ephemeral notices compacted behind a
   * `lagged` marker, and if that is not enough, the notices held and then `SLOW_CONSUMER`; durable
   * notices are never dropped. An aborted `signal` rejects with an `AbortError`. Breaking out of the
   * loop unsubscribes.
   */
  events(options?: EventsOptions): AsyncIterableIterator<StreamNotice>;
  /**
   * Sends `text` and resolves at the end of its turn with its status, answer text, usage, cost and
   * messages. A failed or cancelled turn resolves (status and `error` say why); aborting `signal`
   * aborts the turn and rejects with an `AbortError`; a refused send rejects.
   */
  run(text: string, options?: RunOptions): Promise<TurnResult>;
  /**
   * `run()` as a stream: `events` yields this turn's AgentEvents (text deltas, tool calls,
   * permission requests, its `turn_complete`) and ends with the turn; `result` is what `run()`
   * resolves with. An aborted `signal` (or a refused send) rejects `result` and makes `events`
   * throw after what it holds.
   *
   * @example
   * const { events, result } = session.runStreamed('hello');
   * for await (const e of events) if (e.type === 'text_delta') process.stdout.write(e.text);
   * const turn = await result;
   */
  runStreamed(text: string, options?: Omit<RunOptions, 'onEvent'>): StreamedTurn;
  /**
   * The first notice of `type` (any type with `'*'`) that `predicate` accepts, emitted from this call
   * on. Rejects with `SESSION_STOPPED` if the session ends first, `TIMEOUT` after `timeoutMs`, an
   * `AbortError` when `signal` aborts.
   */
  waitFor<T extends SessionNoticeType>(type: T, predicate?: (notice: NoticeOf<T>) => boolean, options?: WaitForOptions): Promise<NoticeOf<T>>;
  waitFor(type: '*', predicate?: (notice: SessionNotice) => boolean, options?: WaitForOptions): Promise<SessionNotice>;
  /** Resolves with the final snapshot once the session is stopped and every engine has exited. */
  readonly done: Promise<SessionSnapshot>;
}
