/** The handle `createSession()` returns: the session's whole public interface. */
import type { ControlMode } from '../events/session-input.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';
import type { SessionSnapshot } from './snapshot.js';

export interface SendOptions {
  /** Client-chosen id for idempotent retries; default: a new UUID. */
  localId?: string;
}

export interface DecideOptions {
  /** Allow with a modified tool input. */
  updatedInput?: unknown;
  /** Deny with a reason the agent sees. */
  message?: string;
  /** Allow and change the agent's permission rules (engine-specific, e.g. Claude's `{type:'addRules', …}`). */
  updatedPermissions?: unknown[];
}

export interface Session {
  readonly id: string;
  /** Queues a user message (sent now, or when the agent is ready). Returns its localId. */
  send(text: string, options?: SendOptions): string;
  /** Interrupts the running turn. Throws `NOTHING_TO_ABORT` when none runs. */
  abort(): void;
  /** Hands control to the terminal (`local`) or to remote clients (`remote`). */
  switchMode(to: ControlMode): void;
  /** Answers a permission request. Throws `PERMISSION_NOT_FOUND` / `PERMISSION_ALREADY_DECIDED`. */
  decide(requestId: string, decision: 'allow' | 'deny', options?: DecideOptions): void;
  /** Tells the session whether a remote client is connected (open prompts are re-sent on reconnect). */
  setOnline(online: boolean): void;
  /** Stops the engine, cancels whatever is open, persists, and resolves when everything is gone. */
  stop(): Promise<SessionSnapshot>;
  snapshot(): SessionSnapshot;
  on<T extends SessionNoticeType>(type: T, listener: (notice: NoticeOf<T>) => void): () => void;
  on(type: '*', listener: (notice: SessionNotice) => void): () => void;
  /** All notices from now on, ending after `done`. Breaking out of the loop unsubscribes. */
  events(options?: { signal?: AbortSignal }): AsyncIterable<SessionNotice>;
  /** Resolves with the final snapshot once the session is stopped and every engine has exited. */
  readonly done: Promise<SessionSnapshot>;
}
