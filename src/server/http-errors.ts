/** How the server answers a refusal: `{ error: { code, message } }` with the status that fits the code. */
import { isAseError } from '../errors.js';

export const STATUS_BY_CODE: Record<string, number> = {
  INVALID_OPTIONS: 400,
  INVALID_INPUT: 400,
  UNKNOWN_ENGINE: 400,
  AGENT_NOT_FOUND: 400,
  UNSUPPORTED: 400,
  PERMISSION_NOT_FOUND: 404,
  PERMISSION_ALREADY_DECIDED: 409,
  NOTHING_TO_ABORT: 409,
  SESSION_STOPPED: 409,
  SESSION_OWNED: 409,
  DUPLICATE_SEND: 409,
  LEASE_LOST: 409,
  TREE_CONFLICT: 409,
  RESUME_FORKED: 409,
  SESSION_NOT_FOUND: 404,
};

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}): { error: { code: string; message: string } } & Record<string, unknown> {
  return { error: { code, message }, ...extra };
}

/** Any thrown value as `[status, body]`. */
export function toHttpError(error: unknown): [number, ReturnType<typeof errorBody>] {
  if (error instanceof HttpError) return [error.status, errorBody(error.code, error.message, error.extra)];
  if (isAseError(error)) return [STATUS_BY_CODE[error.code] ?? 500, errorBody(error.code, error.message)];
  return [500, errorBody('INTERNAL', error instanceof Error ? error.message : String(error))];
}
