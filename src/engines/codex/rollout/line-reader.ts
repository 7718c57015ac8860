/**
 * Splits a growing byte stream (a rollout file read in arbitrary chunks) into complete lines and
 * reports each line's exact byte span in the file.
 *
 * The shared transport LineSplitter returns decoded strings only: it strips '\r' and decodes
 * UTF-8, so a line's byte length cannot be recovered from its text, and a resumable cursor needs
 * exact byte offsets. Hence this small byte-level variant with the same guarantees that matter
 * here: a line is produced only once its '\n' arrives (bytes after the last '\n' are carried),
 * each byte is scanned once, and UTF-8 is decoded per complete line (a character split across
 * chunks is never mangled). Unlike the transport splitter, an over-long line is NOT fatal: a
 * tailer must survive a bad line, so it is reported as `tooLong` (its bytes dropped) and reading
 * continues after its newline.
 */

export const DEFAULT_MAX_ROLLOUT_LINE_BYTES = 64 * 1024 * 1024;

export interface RawLine {
  /** byte offset of the line's first byte in the file */
  start: number;
  /** byte offset just after its '\n' */
  end: number;
  /** the line's bytes without the '\n' (empty when `tooLong`) */
  bytes: Buffer;
  /** true when the line exceeded the cap; `bytes` is then empty */
  tooLong: boolean;
}

const LF = 0x0a;

export class ByteLineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** the current line is longer than the cap: drop bytes until its '\n' */
  private discarding = false;

  /**
   * @param offset byte offset in the file of the first byte that will be pushed
   */
  constructor(
    private offset = 0,
    readonly maxLineBytes = DEFAULT_MAX_ROLLOUT_LINE_BYTES,
  ) {}

  /** File offset of the first byte not yet part of a complete line (= start of the carry). */
  get consumedOffset(): number {
    return this.offset;
  }

  /** Bytes carried (an incomplete last line). */
  get carriedBytes(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): RawLine[] {
    const lines: RawLine[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(LF, from); nl !== -1; nl = chunk.indexOf(LF, from)) {
      const segment = chunk.subarray(from, nl);
      const length = this.pendingBytes + segment.length;
      const start = this.offset;
      const end = start + length + 1;
      if (this.discarding || length > this.maxLineBytes) {
        lines.push({ start, end, bytes: Buffer.alloc(0), tooLong: true });
      } else {
        const bytes = this.pending.length === 0 ? Buffer.from(segment) : Buffer.concat([...this.pending, segment], length);
        lines.push({ start, end, bytes, tooLong: false });
      }
      this.pending = [];
      this.pendingBytes = 0;
      this.discarding = false;
      this.offset = end;
      from = nl + 1;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxLineBytes) {
        // keep counting (for the offsets) but stop holding the bytes of a line we will drop
        this.discarding = true;
        this.pending = [];
      } else {
        // copy: the caller reuses its read buffer
        this.pending.push(Buffer.from(rest));
      }
    }
    return lines;
  }
}
