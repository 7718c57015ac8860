/**
 * Every error code the library uses, declared once. `AseError` (src/errors.ts) carries one of
 * these; the SessionActor's `client.error` effect carries one of the client subset.
 */
import { z } from 'zod';

export const ERROR_CODES = [
  'INVALID_OPTIONS',
  'INVALID_INPUT',
  'SESSION_STOPPED',
  'UNKNOWN_ENGINE',
  'ENGINE_START_FAILED',
  /** The agent CLI was not found in any of the places an engine looks (details.looked lists them). */
  'AGENT_NOT_FOUND',
  'ENGINE_NOT_RUNNING',
  'STORE_CONFLICT',
  'STORE_CORRUPT',
  'STORE_IO',
  'JOURNAL_IO',
  'ABORTED',
  'PERMISSION_NOT_FOUND',
  'PERMISSION_ALREADY_DECIDED',
  'DUPLICATE_SEND',
  'NOTHING_TO_ABORT',
  'SESSION_FAILED',
  'RESUME_FORKED',
  'PERSIST_FAILED',
  'ENGINE_ERROR',
  /** A request to the agent got no answer in time (JSON-RPC request, Claude control request). */
  'TIMEOUT',
  /** The connection to the agent closed (or the request was given up) before an answer came. */
  'CONNECTION_CLOSED',
  /** The agent wrote a line longer than the engine accepts; the stream is treated as truncated. */
  'LINE_TOO_LONG',
  /** The agent broke its protocol (a message we cannot act on), or we answer it with a protocol error. */
  'PROTOCOL_ERROR',
  /** The agent answered a request with an error of its own (see `AgentError`). */
  'AGENT_ERROR',
  /** The agent cannot continue the session the resume token names (codex mcp-server after a restart). */
  'RESUME_NOT_FOUND',
  /** Another live host holds the session's ownership lease (`details.owner` names it). */
  'SESSION_OWNED',
  /** This host's ownership lease was taken by another host (it stalled past expiry): it stops and writes nothing more. */
  'LEASE_LOST',
  /**
   * An `events()` consumer fell so far behind that its stream could not hold what it had not read
   * without dropping durable notices; the stream ends with this error instead (never silently).
   */
  'SLOW_CONSUMER',
  /**
   * The session's engine cannot do what was asked (e.g. `setModel` on an engine whose protocol has
   * no way to change the model mid-session); nothing was changed. `details` names the capability.
   */
  'UNSUPPORTED',
  /** A file given as a traffic recording (`replayEngine`, `ase replay`) is not one: `details` has the line and why. */
  'RECORDING_INVALID',
  /**
   * A replay went another way than its recording: the engine wrote a host line that differs from
   * the recorded one (or one the recording does not have, or stopped before writing the recorded
   * ones). `details`: `{gen, line, expected, got}`.
   */
  'REPLAY_MISMATCH',
  /** A supervisor holds its `maxSessions` open sessions: stop one before opening another. */
  'SUPERVISOR_FULL',
  /** The supervisor was shut down: it opens no more sessions. */
  'SUPERVISOR_CLOSED',
  /** `open()` of a session id the store does not hold. */
  'SESSION_NOT_FOUND',
  /**
   * A session tree's rules forbid the change in the tree's current state (`openSessionTree`):
   * entering a session that is not a sub-agent of the focus or is completed, exiting the root,
   * completing the focused or a suspended session, spawning under a completed one. Nothing changed.
   */
  'TREE_CONFLICT',
  // `ase serve`'s own refusals (src/server/http-errors.ts maps each code to its HTTP status).
  /** A request to `ase serve` without the token, with a wrong one, or with a spent or expired ticket (401). */
  'UNAUTHORIZED',
  /** A state change to `ase serve` from an Origin other than its own or an allowed one (403). */
  'FORBIDDEN_ORIGIN',
  /** A request to `ase serve` naming a Host it does not answer for (421): a DNS-rebinding page, or a name not given with `--allow-host`. */
  'FORBIDDEN_HOST',
  /** `ase serve` has no such route or session (404). */
  'NOT_FOUND',
  /** A request body to `ase serve` that is not JSON (400). */
  'BAD_JSON',
  /** A request body to `ase serve` over its limit (413): cut off as it streams in. */
  'BODY_TOO_LARGE',
  /** A plain request to a WebSocket route of `ase serve` (the terminal), 426. */
  'UPGRADE_REQUIRED',
  /** An unexpected failure inside `ase serve` (500): logged with the request id the answer carries. */
  'INTERNAL',
] as const;
export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The codes the SessionActor reports to clients (`client.error`): refusals of an input, and failures. */
export const CLIENT_ERROR_CODES = [
  'PERMISSION_NOT_FOUND',
  'PERMISSION_ALREADY_DECIDED',
  'DUPLICATE_SEND',
  'NOTHING_TO_ABORT',
  'SESSION_FAILED',
  'SESSION_STOPPED',
  'RESUME_FORKED',
  'ENGINE_ERROR',
  'PERSIST_FAILED',
] as const satisfies readonly ErrorCode[];
export const ClientErrorCodeSchema = z.enum(CLIENT_ERROR_CODES);
export type ClientErrorCode = z.infer<typeof ClientErrorCodeSchema>;
