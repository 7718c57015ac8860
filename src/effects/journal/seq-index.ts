/**
 * A sparse index of one JSONL journal file, seq -> byte offset, so `FileJournal.read` of a range
 * costs what it returns instead of parsing the whole file (replay was O(n²/page) without it).
 *
 * Why an in-memory index rebuilt from the file, not an index file next to it: the JSONL file stays
 * the only thing written, so appends stay one write + one datasync per group commit and a crash
 * cannot leave the two disagreeing. The index costs one streaming pass over the file per process
 * (chunked, so the event loop is never held for long), then only the bytes appended since, and
 * holds one checkpoint every `CHECKPOINT_EVERY` lines or `CHECKPOINT_BYTES` bytes, whichever comes
 * first (100,000 entries of ~300 bytes: ~1,600 checkpoints).
 *
 * The index covers complete (newline-terminated) lines only; what follows the last newline (a
 * torn tail from a crash, or a line another host is writing) is the reader's to judge, as before.
 * A line's seq is read from its end (`,"seq":N}`, how the journal writes it) without parsing the
 * line; any other line is parsed. Seqs follow the journal's rule (`nextSeq`): a line's own seq when
 * it grows, else the previous one plus one.
 */
import type { FileHandle } from 'node:fs/promises';
import { AseError } from '../../errors.js';

/** One checkpoint per this many lines at most... */
export const CHECKPOINT_EVERY = 64;
/** ...and per this many bytes at most (long lines: a read starts at most this far before its range). */
export const CHECKPOINT_BYTES = 512 * 1024;
/** Bytes read per step while scanning. */
const SCAN_CHUNK = 256 * 1024;

export interface Checkpoint {
  /** Byte offset where the line starts. */
  offset: number;
  /** Its 0-based line number (for error messages). */
  line: number;
  /** Its seq. */
  seq: number;
  /** The seq of the line before it (0 for the first), so a reader starting here numbers lines as a full read would. */
  prevSeq: number;
}

export interface SeqIndex {
  /** The file it describes, inode and birth time (a replaced or recreated file is indexed again). */
  identity: string;
  /** Bytes covered: the file up to and including its last newline seen. */
  end: number;
  /** Complete lines covered. */
  lines: number;
  /** The seq of the last covered line (0: none). */
  lastSeq: number;
  checkpoints: Checkpoint[];
}

export function emptyIndex(identity: string): SeqIndex {
  return { identity, end: 0, lines: 0, lastSeq: 0, checkpoints: [] };
}

/** Whether the byte before `end` is a newline (0: trivially): an index still fits the file's start. */
export async function endsLine(handle: FileHandle, end: number): Promise<boolean> {
  if (end === 0) return true;
  const byte = Buffer.alloc(1);
  const { bytesRead } = await handle.read(byte, 0, 1, end - 1);
  return bytesRead === 1 && byte[0] === 0x0a;
}

/** A line's seq: its own when it grows past the previous one, else the previous one plus one. */
export function nextSeq(previous: number, own: unknown): number {
  return typeof own === 'number' && Number.isInteger(own) && own > previous ? own : previous + 1;
}

const SEQ_AT_END = /,"seq":(\d{1,15})\}$/;

/**
 * The `seq` a line ends with (`,"seq":N}`, where the journal writes it), without parsing the line;
 * undefined when it does not end so. Ending so, N is the top-level object's `seq` (nothing else can
 * stand right before the line's closing brace), the one a parse would give.
 */
export function seqAtEnd(line: Buffer): number | undefined {
  const fast = SEQ_AT_END.exec(line.toString('latin1', Math.max(0, line.length - 24)));
  return fast ? Number(fast[1]) : undefined;
}

/** The `seq` a line carries, read from its end when it is where the journal writes it, else by parsing. `null`: not JSON. */
function ownSeq(line: Buffer): unknown {
  const fast = seqAtEnd(line);
  if (fast !== undefined) return fast;
  try {
    const data = JSON.parse(line.toString('utf8')) as unknown;
    return typeof data === 'object' && data !== null ? (data as { seq?: unknown }).seq : undefined;
  } catch {
    return null;
  }
}

/**
 * Extends `index` over the complete lines between `index.end` and `size`. A line that is not JSON
 * with more lines after it is corruption (STORE_CORRUPT); as the last line it is left out of the
 * index (the reader skips it as a torn tail, as it always did).
 */
export async function extendIndex(handle: FileHandle, file: string, index: SeqIndex, size: number): Promise<void> {
  let pending: Buffer[] = [];
  let pendingStart = index.end;
  let position = index.end;
  const buffer = Buffer.alloc(Math.min(SCAN_CHUNK, Math.max(1, size - index.end)));
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, from);
      if (newline < 0) break;
      const piece = chunk.subarray(from, newline);
      const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      const lineEnd = position + newline + 1;
      const own = ownSeq(line);
      if (own === null) {
        if (lineEnd < size) throw new AseError('STORE_CORRUPT', `${file}:${index.lines + 1}: not valid JSON`);
        return; // the last line, unreadable: a torn tail, left to the reader
      }
      const seq = nextSeq(index.lastSeq, own);
      const previous = index.checkpoints.at(-1);
      if (!previous || index.lines - previous.line >= CHECKPOINT_EVERY || pendingStart - previous.offset >= CHECKPOINT_BYTES) {
        index.checkpoints.push({ offset: pendingStart, line: index.lines, seq, prevSeq: index.lastSeq });
      }
      index.lastSeq = seq;
      index.lines += 1;
      index.end = lineEnd;
      pendingStart = lineEnd;
      from = newline + 1;
    }
    // Copied: `buffer` is reused for the next chunk.
    if (from < bytesRead) pending.push(Buffer.from(chunk.subarray(from)));
    position += bytesRead;
  }
}

/** The checkpoint to start reading from for the first line with seq > `afterSeq`. */
export function checkpointAfter(index: SeqIndex, afterSeq: number): number {
  // The last checkpoint whose seq <= afterSeq + 1 ... its line or a later one is the first wanted.
  let lo = 0;
  let hi = index.checkpoints.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (index.checkpoints[mid]!.seq <= afterSeq) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The checkpoint to start reading from to see the `limit` lines before the first with seq >= `beforeSeq`. */
export function checkpointBefore(index: SeqIndex, beforeSeq: number, limit: number): number {
  const at = checkpointAfter(index, beforeSeq - 1);
  // The last checkpoint at least `limit` lines before that one (checkpoints are lines apart unevenly).
  const line = index.checkpoints[at]!.line - limit;
  let lo = 0;
  let hi = at;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (index.checkpoints[mid]!.line <= line) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Calls `onLine` with each complete line in `[from, to)` (ending at a newline), and its 0-based
 * line number counted from `firstLine`, until it returns `false`. Reads in chunks, so memory is
 * bounded by the chunk and the longest line.
 */
export async function readLines(handle: FileHandle, from: number, to: number, firstLine: number, onLine: (line: Buffer, lineNo: number) => boolean): Promise<void> {
  // Not zero-filled: only the bytes read into it are ever looked at.
  const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(1, to - from)));
  let pending: Buffer[] = [];
  let position = from;
  let lineNo = firstLine;
  while (position < to) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, to - position), position);
    if (bytesRead === 0) return;
    const chunk = buffer.subarray(0, bytesRead);
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) break;
      const piece = chunk.subarray(start, newline);
      const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      if (!onLine(line, lineNo++)) return;
      start = newline + 1;
    }
    if (start < bytesRead) pending.push(Buffer.from(chunk.subarray(start)));
    position += bytesRead;
  }
}

/**
 * Bytes read per step while reading a range: a page of a replay (128 entries of ~300 bytes, from the
 * checkpoint before it) is ~40-60 KB. Larger chunks were read mostly to be dropped: a 256 KB buffer
 * per page of a replay was most of the garbage ten concurrent replays made.
 */
const READ_CHUNK = 64 * 1024;
