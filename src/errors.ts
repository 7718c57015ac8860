/**
 * Typed errors. Every error the library throws or reports is an `AseError` with a stable `code`,
 * so callers can branch on `error.code` instead of parsing messages.
 */
export const ERROR_CODES = [
  'INVALID_OPTIONS',
  'INVALID_INPUT',
  'SESSION_STOPPED',
  'UNKNOWN_ENGINE',
  'ENGINE_START_FAILED',
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
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class AseError extends Error {
  override readonly name: string = 'AseError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Any thrown value as one line of text (an Error's message, anything else stringified). */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function isAseError(value: unknown, code?: ErrorCode): value is AseError {
  return value instanceof AseError && (code === undefined || value.code === code);
}
