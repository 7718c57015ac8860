/**
 * Typed errors. Every error the library throws or reports is an `AseError` with a stable `code`,
 * so callers can branch on `error.code` instead of parsing messages.
 */
import type { ErrorCode } from './events/error-codes.js';

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
