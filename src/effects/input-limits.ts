/**
 * Size limits on what a client hands the session. A message is kept in the stored state while it
 * waits, written to the transcript and sent to the agent, so a 50 MiB `send()` would be rewritten
 * with every state write and held several times over; it is refused instead, before anything
 * changes.
 */
import { AseError } from '../errors.js';

/** Default `maxMessageBytes`: 1 MiB of UTF-8 (far more text than any model's context takes). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

/** Throws `INVALID_INPUT` (details: `bytes`, `limit`) when `text` is over `limit` UTF-8 bytes. */
export function checkMessageSize(text: string, limit: number): void {
  // A string of n chars takes at least n and at most 3n bytes: most texts need no count at all.
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) {
    throw new AseError('INVALID_INPUT', `send: the message is ${bytes} bytes (UTF-8), over the limit of ${limit} (the maxMessageBytes option)`, { details: { bytes, limit } });
  }
}
