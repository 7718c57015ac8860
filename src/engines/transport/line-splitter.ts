/**
 * Byte-level NDJSON line splitter.
 *
 * - Scans only each NEW chunk for '\n' (native `indexOf`); unterminated bytes are kept as a list
 *   of chunks and concatenated once, when their line completes: O(total bytes) even for one huge
 *   line split into many small chunks (no quadratic `Buffer.concat` + rescan per chunk).
 * - Decodes UTF-8 per complete line, so multi-byte characters split across chunks are correct.
 * - Strips one trailing '\r' (also when '\r' and '\n' arrive in different chunks).
 * - Caps a line at `maxLineBytes` (default 64 MiB, excluding the '\n' / '\r'). Exceeding it —
 *   for a complete line or for a still-pending one — LATCHES a {@link LineTooLongError}: the
 *   `push` that hit it throws it (carrying the lines completed earlier in that chunk), and every
 *   later `push`/`end` throws the same error. A too-long line must be treated as a truncated
 *   stream, never as "the agent finished".
 * - `end()` returns the final unterminated line, if any, with `partial: true`, so callers can
 *   treat EOF-without-newline as a protocol error (or accept it) explicitly.
 */

import { AseError, isAseError } from '../../errors.js';

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

export type LineTooLongDetails = {
  /** Bytes of the offending line seen so far (at least `maxLineBytes + 1`). */
  bytes: number;
  maxLineBytes: number;
  /** Lines that completed before the overflow in the chunk that triggered it. */
  precedingLines: readonly string[];
};

/** The error a too-long line latches: an AseError with code `LINE_TOO_LONG`. */
export type LineTooLongError = AseError<LineTooLongDetails> & { readonly code: 'LINE_TOO_LONG'; readonly details: LineTooLongDetails };

export function isLineTooLong(error: unknown): error is LineTooLongError {
  return isAseError(error, 'LINE_TOO_LONG') && error.details !== undefined;
}

function lineTooLong(bytes: number, maxLineBytes: number, precedingLines: readonly string[]): LineTooLongError {
  return new AseError('LINE_TOO_LONG', `NDJSON line exceeds ${maxLineBytes} bytes (${bytes} bytes seen); stream is truncated`, {
    details: { bytes, maxLineBytes, precedingLines },
  }) as LineTooLongError;
}

export interface LineSplitterOptions {
  /** Maximum bytes per line, excluding the line terminator. Default 64 MiB. */
  maxLineBytes?: number;
}

export interface LineSplitterEnd {
  /** The final unterminated line, or `undefined` when the input ended with '\n' (or was empty). */
  line: string | undefined;
  /** True when `line` was not '\n'-terminated (EOF mid-line). */
  partial: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  readonly maxLineBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private latched: LineTooLongError | undefined;
  private ended = false;
  /** Total bytes ever scanned for '\n' (each input byte is scanned exactly once). */
  bytesScanned = 0;

  constructor(options: LineSplitterOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isInteger(max) || max < 1) throw new AseError('INVALID_OPTIONS', `maxLineBytes must be a positive integer, got ${max}`);
    this.maxLineBytes = max;
  }

  /** The latched error, if a line exceeded the cap. */
  get error(): LineTooLongError | undefined {
    return this.latched;
  }

  /** Feeds a chunk; returns the lines it completed, in order. Throws once the cap is exceeded. */
  push(chunk: Buffer | Uint8Array): string[] {
    if (this.latched) throw this.latched;
    if (this.ended) throw new AseError('INVALID_INPUT', 'LineSplitter.push() after end()');
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: string[] = [];
    let start = 0;
    this.bytesScanned += buf.length;
    for (let nl = buf.indexOf(LF, start); nl !== -1; nl = buf.indexOf(LF, start)) {
      const segment = buf.subarray(start, nl);
      start = nl + 1;
      let line: Buffer;
      if (this.pending.length === 0) {
        line = segment;
      } else {
        this.pending.push(segment);
        line = Buffer.concat(this.pending, this.pendingBytes + segment.length);
        this.pending = [];
        this.pendingBytes = 0;
      }
      const length = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
      if (length > this.maxLineBytes) this.latch(length, lines);
      lines.push(line.toString('utf8', 0, length));
    }
    if (start < buf.length) {
      const rest = buf.subarray(start);
      this.pendingBytes += rest.length;
      // A pending line may still end in '\r' that the next '\n' strips: allow one extra byte.
      if (this.pendingBytes > this.maxLineBytes + 1 || (this.pendingBytes === this.maxLineBytes + 1 && rest[rest.length - 1] !== CR)) {
        this.pending = [];
        this.latch(this.pendingBytes, lines);
      }
      // Copy only when the chunk is much larger than what we keep, so the caller's big buffer
      // is not retained; otherwise keep a view (no copy).
      this.pending.push(rest.length * 4 < buf.length ? Buffer.from(rest) : rest);
    }
    return lines;
  }

  /**
   * Ends the input. Returns the final unterminated line (with '\r' stripped) and `partial: true`,
   * or `{ line: undefined, partial: false }` when nothing was pending. Throws the latched error.
   */
  end(): LineSplitterEnd {
    if (this.latched) throw this.latched;
    this.ended = true;
    if (this.pendingBytes === 0) return { line: undefined, partial: false };
    const line = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const length = line[line.length - 1] === CR ? line.length - 1 : line.length;
    return { line: line.toString('utf8', 0, length), partial: true };
  }

  private latch(bytes: number, preceding: string[]): never {
    this.pending = [];
    this.pendingBytes = 0;
    this.latched = lineTooLong(bytes, this.maxLineBytes, preceding);
    throw this.latched;
  }
}
