/**
 * `ErrorDetails<Code>`: the shape of `AseError.details` per error code, as docs/errors.md lists
 * it, so code that branched on `error.code` (or on `isAseError(error, code)`) reads the facts
 * without a cast. Fields that only some occurrences of a code carry are optional; a code with no
 * structured facts has an open record. `details` itself may be absent.
 */
import type { ErrorCode } from './error-codes.js';

export interface ErrorDetailsMap {
  /** `agent`: the CLI's short name; `looked`: one line per place looked in, with what it held. */
  AGENT_NOT_FOUND: { agent: string; looked: string[] };
  /** An agent request (`request`); a command `ase serve` routed to the session's owner (`commandId`, `sessionId`, `owner`, `withdrawn`, `expiresAt`: its lease's expiry). */
  TIMEOUT: {
    request?: string;
    timeoutMs: number;
    commandId?: string;
    sessionId?: string;
    owner?: { host: string; pid: number; startTime?: string; bootId?: string; label?: string };
    withdrawn?: boolean;
    expiresAt?: number;
  };
  LINE_TOO_LONG: { bytes: number; maxLineBytes: number; precedingLines?: number };
  /** A `send` over `maxMessageBytes` (`bytes`, `limit`); a refused acp request (`rpcCode`, `data`); a refused input (`localId` / `requestId`). */
  INVALID_INPUT: { bytes?: number; limit?: number; rpcCode?: number; data?: unknown; localId?: string; requestId?: string };
  INVALID_OPTIONS: { workDir?: string; cwd?: string; sessionId?: string; parentId?: string | null; askedParentId?: string | null };
  ENGINE_START_FAILED: { errno?: string };
  /** A failed turn: the agent's error `kind` and whether it is `retryable`; an acp client failure: `rpcCode`, `data`; a `ConformanceFailure`: the `check`. */
  ENGINE_ERROR: { kind?: string; retryable?: boolean; rpcCode?: number; data?: unknown; check?: string };
  PROTOCOL_ERROR: { rpcCode?: number; data?: unknown };
  RESUME_NOT_FOUND: { threadId?: string; upstreamMessage?: string };
  /** A fork (`expected`, `actual` tokens); an adoption refused (`workDir`, and `reason`: what is missing on this host). */
  RESUME_FORKED: { sessionId: string; expected?: string; actual?: string; workDir?: string; reason?: string };
  /** Another live host owns the session: `owner` (host, pid, process start time) until `expiresAt`; or the id open in this supervisor; `orphaned`: that owner stopped renewing (adopt it). */
  SESSION_OWNED: { sessionId: string; owner?: { host: string; pid: number; startTime?: string; bootId?: string; label?: string }; expiresAt?: number; orphaned?: boolean };
  SLOW_CONSUMER: { maxBuffered: number; buffered: number };
  UNSUPPORTED: { agent?: string; capability?: string };
  RECORDING_INVALID: { file: string; line?: number };
  REPLAY_MISMATCH: { gen: number; line: number; expected?: string; got?: string };
  SUPERVISOR_FULL: { maxSessions: number };
  SESSION_NOT_FOUND: { sessionId: string };
  TREE_CONFLICT: { sessionId?: string; parentId?: string; focus?: string; state?: string };
  PERMISSION_NOT_FOUND: { requestId?: string };
  PERMISSION_ALREADY_DECIDED: { requestId?: string };
  DUPLICATE_SEND: { localId?: string };
}

/** `details` of an AseError with code `C`. */
export type ErrorDetails<C extends ErrorCode> = C extends keyof ErrorDetailsMap ? ErrorDetailsMap[C] : Record<string, unknown>;
