/**
 * How the server answers a refusal: `{ error: { code, message } }` with the status that fits the
 * code. The server throws the library's one error family (`AseError`, its own codes such as
 * `UNAUTHORIZED` included): a status is a mapping of the code, never a second error class.
 */
import { randomUUID } from 'node:crypto';
import { AseError, isAseError } from '../errors.js';
import type { ErrorCode } from '../events/error-codes.js';

export const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_OPTIONS: 400,
  INVALID_INPUT: 400,
  UNKNOWN_ENGINE: 400,
  AGENT_NOT_FOUND: 400,
  UNSUPPORTED: 400,
  BAD_JSON: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN_ORIGIN: 403,
  PERMISSION_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  NOT_FOUND: 404,
  PERMISSION_ALREADY_DECIDED: 409,
  NOTHING_TO_ABORT: 409,
  SESSION_STOPPED: 409,
  SESSION_OWNED: 409,
  DUPLICATE_SEND: 409,
  LEASE_LOST: 409,
  TREE_CONFLICT: 409,
  RESUME_FORKED: 409,
  BODY_TOO_LARGE: 413,
  FORBIDDEN_HOST: 421,
  UPGRADE_REQUIRED: 426,
  INTERNAL: 500,
  // The host that owns a session did not answer a routed command in time (multi-host).
  TIMEOUT: 504,
};

/** The status an error is answered with: its code's, 500 for any other code or value. */
export function statusOf(error: unknown): number {
  return isAseError(error) ? (STATUS_BY_CODE[error.code] ?? 500) : 500;
}

export type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown>; requestId?: string } } & Record<string, unknown>;

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}, details?: Record<string, unknown>): ErrorBody {
  return { error: { code, message, ...(details && { details }) }, ...extra };
}

/** An error's `details` as the client may see them: plain JSON (docs/errors.md lists them per code), else none. */
function wireDetails(error: AseError): Record<string, unknown> | undefined {
  if (typeof error.details !== 'object' || error.details === null) return undefined;
  try {
    const copy = JSON.parse(JSON.stringify(error.details)) as unknown;
    return typeof copy === 'object' && copy !== null && !Array.isArray(copy) ? (copy as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // a cycle or a BigInt: the code and message still say what happened
  }
}

/**
 * Any thrown value as `[status, body, logLine?]`. A 500 is unexpected whatever its code: it gets a
 * request id, in the body and in the log line, so a person can match the two. The line names the
 * method and the path without its query (tickets and page tokens ride in queries) and the error;
 * a value that is not an AseError is not echoed to the client (it may hold anything).
 */
export function toHttpError(error: unknown, request: { method: string; url: string }): [number, ErrorBody, string?] {
  const status = statusOf(error);
  if (status !== 500) return [status, errorBody((error as AseError).code, (error as AseError).message, {}, wireDetails(error as AseError))];
  const requestId = randomUUID();
  const pathname = safePathname(request.url);
  const what = error instanceof Error ? (error.stack ?? error.message) : String(error);
  const line = `ase serve: request ${requestId} (${request.method} ${pathname}) failed: ${what}`;
  const body = isAseError(error) ? errorBody(error.code, error.message) : errorBody('INTERNAL', `an unexpected error; the server's log has it under request ${requestId}`);
  body.error.requestId = requestId;
  return [500, body, line];
}

function safePathname(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '(unparsable URL)';
  }
}
