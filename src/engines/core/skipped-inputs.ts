/**
 * Upstream input an engine or translator skipped (unknown, malformed, stale) is kept for
 * diagnostics, but bounded in count AND in bytes: a session can run for hours on a chatty protocol,
 * and an agent that prints thirty 10 MiB lines of garbage must not make the host hold 300 MiB.
 * An entry keeps a prefix of what was skipped and its full length; small inputs are kept as they
 * came (a parsed message stays an object, so diagnostics can look into it).
 */
export const MAX_SKIPPED = 500;

/** Largest `raw` kept whole, in UTF-8 bytes (a string as is, anything else as its JSON text). */
export const MAX_SKIPPED_RAW_BYTES = 2048;

/** Longest `reason` kept, in UTF-8 bytes (a reason may quote the input, e.g. a JSON parse error). */
export const MAX_SKIPPED_REASON_BYTES = 512;

export interface SkippedInput {
  reason: string;
  /**
   * What was skipped: as it came when it is at most {@link MAX_SKIPPED_RAW_BYTES} (its JSON text
   * for a non-string); otherwise (`truncated`) the first bytes of it, as a string.
   */
  raw: unknown;
  /** Set when `raw` was cut: the full size in UTF-8 bytes (of the line, or of the value's JSON text). */
  bytes?: number;
  truncated?: true;
}

/**
 * Appends `entry`, dropping the oldest entries beyond {@link MAX_SKIPPED}. A `raw` or `reason`
 * over its byte bound is replaced by a fresh copy of its prefix (never a slice that would keep
 * the whole original string alive).
 */
export function noteSkipped(list: SkippedInput[], entry: SkippedInput): void {
  if (list.length >= MAX_SKIPPED) list.splice(0, list.length - MAX_SKIPPED + 1);
  list.push(boundSkipped(entry));
}

/** `entry` with its `reason` and `raw` within their byte bounds. */
export function boundSkipped(entry: SkippedInput): SkippedInput {
  const reason = utf8Prefix(entry.reason, MAX_SKIPPED_REASON_BYTES);
  const bounded: SkippedInput = { reason: reason.truncated ? `${reason.prefix}…` : entry.reason, raw: entry.raw };
  const text = typeof entry.raw === 'string' ? entry.raw : jsonText(entry.raw);
  if (text !== undefined) {
    const cut = utf8Prefix(text, MAX_SKIPPED_RAW_BYTES);
    if (cut.truncated) {
      bounded.raw = cut.prefix;
      bounded.bytes = cut.bytes;
      bounded.truncated = true;
    }
  }
  return bounded;
}

/**
 * The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes without splitting a character,
 * as a new string, and the full length of `text` in bytes.
 */
export function utf8Prefix(text: string, maxBytes: number): { prefix: string; bytes: number; truncated: boolean } {
  // A string of n chars is at least n bytes: short ones need no encoding at all.
  if (text.length <= maxBytes / 3) return { prefix: text, bytes: Buffer.byteLength(text, 'utf8'), truncated: false };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return { prefix: text, bytes, truncated: false };
  // The first maxBytes chars encode to at least maxBytes bytes: enough to cut from.
  const head = Buffer.from(text.slice(0, maxBytes), 'utf8');
  let cut = maxBytes;
  while (cut > 0 && ((head[cut] ?? 0) & 0xc0) === 0x80) cut--; // back off a continuation byte
  return { prefix: head.subarray(0, cut).toString('utf8'), bytes, truncated: true };
}

function jsonText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value); // a cycle or a BigInt: not from the wire, but never throw here
  }
}
