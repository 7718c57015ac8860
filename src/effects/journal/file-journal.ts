/**
 * The embedded default TranscriptJournal: one append-only JSONL file per session,
 * `<dir>/<sessionId>.jsonl`. An append resolves only after its line is written and datasynced.
 *
 * One writer per session file at a time is assumed (the session's ownership lease): appends are
 * ordered by a per-session promise chain, not by a file lock. Each line carries its `seq`; the next
 * one is the file's last plus one, re-read from the file whenever it changed under this journal (another
 * host or process appended), so seqs only grow across restarts and hosts. Lines written before seqs
 * existed count by position.
 *
 * Group commit: appends made while the previous write of their session runs are written together,
 * with one write and one datasync, and each of them resolves (or rejects) only after that batch's
 * datasync. A burst of entries costs one sync, not one per entry; no entry is reported durable early.
 */
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AseError } from '../../errors.js';
import { TranscriptEntrySchema, upgradeTranscriptEntry, type JournaledEntry, type TranscriptEntry } from '../../events/transcript-entry.js';
import { JournalWatchers, type JournalBounds, type JournaledJson, type JournalListener, type JournalRange, type TranscriptJournal } from './transcript-journal.js';
import { assertSessionId } from '../store/file-store.js';
import { errno, syncDir } from '../fs-durable.js';
import { serializeEntry } from './serialize-entry.js';
import { checkpointAfter, checkpointBefore, emptyIndex, endsLine, extendIndex, nextSeq, readLines, seqAtEnd, type SeqIndex } from './seq-index.js';

export interface FileJournalOptions {
  dir: string;
}

/** Entries waiting for their session's write: they go out together, in call order. */
interface Batch {
  /**
   * Each entry serialized once, at append, without its `seq` (`{...}` of the entry's own fields):
   * the write only splices the seq in before the closing brace, so an entry is not copied as an
   * object and then serialized again.
   */
  entries: string[];
  /** The seqs the entries got, in order, once the batch is datasynced. */
  written: Promise<number[]>;
}

export class FileJournal implements TranscriptJournal {
  readonly dir: string;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #handles = new Map<string, FileHandle>();
  /** Per session, the batch queued behind the write in progress (still taking entries). */
  readonly #filling = new Map<string, Batch>();
  /** Per session: the last seq written and the file size after it (a different size: someone else wrote). */
  readonly #tails = new Map<string, { lastSeq: number; size: number }>();
  readonly #watchers = new JournalWatchers();
  /** Per session: where each stretch of seqs starts in its file (seq-index.ts). */
  readonly #indexes = new Map<string, SeqIndex>();
  /** Per session: the index extension in progress. */
  readonly #indexing = new Map<string, Promise<void>>();
  /**
   * A buffer a write borrows to encode its batch in, given back when its bytes are on disk. A fresh
   * buffer per batch (~40 a dense turn, 3 MB) cost the session more in page faults and collections
   * than the encoding itself (docs/performance-notes.md 13, pass 7). One per journal, kept only up to
   * SPARE_BUFFER_LIMIT: writes of other sessions meanwhile, and larger batches, allocate their own.
   */
  #spare: Buffer | undefined;

  constructor(options: FileJournalOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new AseError('INVALID_OPTIONS', 'FileJournal: dir must be a non-empty string');
    }
    this.dir = path.resolve(options.dir);
  }

  append(entry: TranscriptEntry): Promise<number> {
    let json: string;
    try {
      assertSessionId(entry.sessionId);
      // Serialized now, so a caller mutating the entry after the call cannot change what is written.
      // A `seq` given is replaced by the journal's own (it goes last, where seq-index.ts reads it).
      json = serializeEntry(entry);
    } catch (error) {
      return Promise.reject(refusal(error));
    }
    const batch = this.#batchFor(entry.sessionId);
    const index = batch.entries.push(json) - 1;
    return batch.written.then((seqs) => seqs[index]!);
  }

  /**
   * Several entries of one session: each serialized as `append` does, all into the batch being
   * filled, and one promise for the lot (not one per entry). A bad entry refuses the whole call
   * before anything is queued.
   */
  appendMany(entries: readonly TranscriptEntry[]): Promise<number[]> {
    if (!Array.isArray(entries)) return Promise.reject(new AseError('INVALID_INPUT', 'appendMany takes an array of transcript entries'));
    if (entries.length === 0) return Promise.resolve([]);
    const jsons: string[] = new Array<string>(entries.length);
    const sessionId = entries[0]?.sessionId;
    try {
      assertSessionId(sessionId as string);
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!;
        if (entry.sessionId !== sessionId) throw new AseError('INVALID_INPUT', `appendMany takes entries of one session: "${String(entry.sessionId)}" after "${sessionId}"`);
        jsons[i] = serializeEntry(entry);
      }
    } catch (error) {
      return Promise.reject(refusal(error));
    }
    const batch = this.#batchFor(sessionId as string);
    const first = batch.entries.length;
    for (const json of jsons) batch.entries.push(json);
    return batch.written.then((seqs) => seqs.slice(first, first + jsons.length));
  }

  /** The session's batch still taking entries, queued behind its write in progress (a new one if none). */
  #batchFor(sessionId: string): Batch {
    const filling = this.#filling.get(sessionId);
    if (filling) return filling;
    const entries: string[] = [];
    let seqs: number[] = [];
    const batch: Batch = {
      entries,
      // Runs once the session's previous task is done; entries appended until then join this batch.
      written: this.#enqueue(sessionId, async () => {
        if (this.#filling.get(sessionId) === batch) this.#filling.delete(sessionId);
        seqs = await this.#write(sessionId, entries);
      }).then(() => seqs),
    };
    this.#filling.set(sessionId, batch);
    return batch;
  }

  async read(sessionId: string, range?: JournalRange): Promise<TranscriptEntry[]> {
    assertSessionId(sessionId);
    await this.#chains.get(sessionId); // Read-your-writes: include appends already called.
    return this.#readRange(sessionId, range, (entry, seq) => ({ ...upgradeTranscriptEntry(entry), seq }));
  }

  /**
   * `read` as JSON text: each line as stored when it is the entry `read` would return (its own seq,
   * no unknown keys, nothing to upgrade, no CR), else that entry stringified. Every line is still
   * parsed and checked as `read` checks it; what is saved is the object built from it and the
   * stringify, per entry, on every replay (most of the garbage ten concurrent replays made).
   */
  async readJson(sessionId: string, range?: JournalRange): Promise<JournaledJson[]> {
    assertSessionId(sessionId);
    await this.#chains.get(sessionId);
    return this.#readRange(sessionId, range, (entry, seq, data, text) => ({ seq, json: isStoredAsRead(entry, seq, data, text) ? text : JSON.stringify({ ...upgradeTranscriptEntry(entry), seq }) }));
  }

  async bounds(sessionId: string): Promise<JournalBounds> {
    assertSessionId(sessionId);
    await this.#chains.get(sessionId);
    // From the index alone (no line parsed), plus what follows its last newline if that reads as an entry.
    const view = await this.#view(sessionId);
    if (!view) return { firstSeq: 0, lastSeq: 0 };
    const { handle, index, size } = view;
    try {
      let firstSeq = index.checkpoints[0]?.seq ?? 0;
      let lastSeq = index.lastSeq;
      for (const own of await tailSeqs(handle, index.end, size)) {
        if (own === null) continue; // a torn line: not an entry
        lastSeq = nextSeq(lastSeq, own);
        if (firstSeq === 0) firstSeq = lastSeq;
      }
      return { firstSeq, lastSeq };
    } finally {
      await handle.close();
    }
  }

  watch(sessionId: string, listener: JournalListener): () => void {
    return this.#watchers.watch(sessionId, listener);
  }

  /** A watch of this journal starts when `watch` returns (it hears this journal's own appends): resolves at once. */
  watchStarted(_sessionId: string): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The entries of a range, read from the checkpoint before it (seq-index.ts): the cost is the
   * entries returned plus at most one checkpoint's worth of lines, not the file.
   */
  async #readRange<T>(sessionId: string, range: JournalRange | undefined, keep: (entry: TranscriptEntry, seq: number, data: object, text: string) => T): Promise<T[]> {
    const file = this.#file(sessionId);
    const view = await this.#view(sessionId);
    if (!view) return [];
    const { handle, index, size } = view;
    try {
      const after = range?.afterSeq ?? 0;
      const before = range?.beforeSeq ?? Number.POSITIVE_INFINITY;
      const limit = range?.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, Math.floor(range.limit));
      // Only a beforeSeq (backward paging): the newest `limit` before the cursor.
      const backward = range?.afterSeq === undefined && range?.beforeSeq !== undefined;
      if (limit === 0) return [];
      const at = index.checkpoints.length === 0 ? undefined : index.checkpoints[backward && limit !== Number.POSITIVE_INFINITY ? checkpointBefore(index, before, limit) : checkpointAfter(index, after)];
      const entries: T[] = [];
      let previous = at?.prevSeq ?? 0;
      let finished = false;
      /** Takes one line; false once the range is complete. */
      const take = (text: string, lineNo: number, mayBeTorn: boolean): boolean => {
        let data: unknown;
        try {
          data = JSON.parse(text);
        } catch (error) {
          // A crash mid-append can only tear the last line; anywhere else it is corruption.
          if (mayBeTorn) return false;
          throw new AseError('STORE_CORRUPT', `${file}:${lineNo + 1}: not valid JSON`, { cause: error });
        }
        const parsed = TranscriptEntrySchema.safeParse(data);
        if (!parsed.success) throw new AseError('STORE_CORRUPT', `${file}:${lineNo + 1}: not a transcript entry: ${parsed.error.message}`);
        // A line from before seqs existed counts by position; so does one whose seq does not grow
        // (two writers despite the lease): the same rule the writer uses, so both agree.
        const seq = nextSeq(previous, parsed.data.seq);
        previous = seq;
        if (seq <= after) return true;
        if (seq >= before) {
          finished = true;
          return false;
        }
        entries.push(keep(parsed.data, seq, data as object, text));
        if (!backward && entries.length >= limit) {
          finished = true;
          return false;
        }
        return true;
      };
      await readLines(handle, at?.offset ?? 0, index.end, at?.line ?? 0, (line, lineNo) => {
        // A line before the range (up to a checkpoint's worth): its seq from its end, unparsed,
        // when it carries one there (the index read it the same way); the rule is `take`'s.
        const own = seqAtEnd(line);
        if (own !== undefined && own > 0 && nextSeq(previous, own) <= after) {
          previous = nextSeq(previous, own);
          return true;
        }
        return take(line.toString('utf8'), lineNo, lineNo === index.lines - 1 && index.end === size);
      });
      if (!finished && size > index.end) {
        // Past the last indexed newline: a torn tail, or lines another host is writing now.
        const tail = Buffer.alloc(size - index.end);
        const { bytesRead } = await handle.read(tail, 0, tail.length, index.end);
        const lines = tail.subarray(0, bytesRead).toString('utf8').split('\n');
        if (lines.at(-1) === '') lines.pop();
        for (const [i, text] of lines.entries()) if (!take(text, index.lines + i, i === lines.length - 1)) break;
      }
      return backward && entries.length > limit ? entries.slice(entries.length - limit) : entries;
    } finally {
      await handle.close();
    }
  }

  /**
   * The file opened for reading with its index brought up to date (one pass over the bytes appended
   * since the last look, by anyone). Undefined when there is no file. The caller closes the handle.
   */
  async #view(sessionId: string): Promise<{ handle: FileHandle; index: SeqIndex; size: number } | undefined> {
    const file = this.#file(sessionId);
    let handle: FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (errno(error) === 'ENOENT') {
        this.#indexes.delete(sessionId);
        return undefined;
      }
      throw new AseError('JOURNAL_IO', `reading ${file} failed: ${message(error)}`, { cause: error });
    }
    try {
      // One extension at a time per session: two would both append checkpoints.
      const previous = this.#indexing.get(sessionId) ?? Promise.resolve();
      const run = previous.then(async () => {
        const stat = await handle.stat();
        const identity = `${stat.ino}:${stat.birthtimeMs}`;
        let index = this.#indexes.get(sessionId);
        // Another file now (deleted and created again, or replaced), or cut shorter: index it anew.
        if (!index || index.identity !== identity || stat.size < index.end || !(await endsLine(handle, index.end))) index = emptyIndex(identity);
        if (stat.size > index.end) await extendIndex(handle, file, index, stat.size);
        this.#indexes.set(sessionId, index);
        return { index, size: stat.size };
      });
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      this.#indexing.set(sessionId, settled);
      void settled.then(() => {
        if (this.#indexing.get(sessionId) === settled) this.#indexing.delete(sessionId);
      });
      const { index, size } = await run;
      return { handle, index, size };
    } catch (error) {
      await handle.close().catch(() => undefined);
      if (error instanceof AseError) throw error;
      throw new AseError('JOURNAL_IO', `reading ${file} failed: ${message(error)}`, { cause: error });
    }
  }

  async flush(): Promise<void> {
    await Promise.all(this.#chains.values());
  }

  /** Waits for pending appends and closes the files. A later append reopens its file. */
  async close(): Promise<void> {
    // Through each session's chain, so a handle is never closed under an append queued before it.
    const sessionIds = new Set([...this.#handles.keys(), ...this.#chains.keys()]);
    this.#filling.clear(); // appends from now on go after the close
    await Promise.all([...sessionIds].map((sessionId) => this.#enqueue(sessionId, () => this.#closeHandle(sessionId))));
    await this.flush();
  }

  /** Removes `<dir>/<sessionId>.jsonl` after the appends already called (its handle closed first). */
  delete(sessionId: string): Promise<void> {
    try {
      assertSessionId(sessionId);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#filling.delete(sessionId); // appends from now on go after the delete
    return this.#enqueue(sessionId, async () => {
      await this.#closeHandle(sessionId);
      const file = this.#file(sessionId);
      try {
        await fs.rm(file, { force: true });
        this.#indexes.delete(sessionId);
        await syncDir(this.dir);
      } catch (error) {
        throw new AseError('JOURNAL_IO', `deleting ${file} failed: ${message(error)}`, { cause: error });
      }
    });
  }

  #file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.jsonl`);
  }

  #enqueue(sessionId: string, task: () => Promise<void>): Promise<void> {
    const run = (this.#chains.get(sessionId) ?? Promise.resolve()).then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#chains.set(sessionId, tail);
    void tail.then(() => {
      if (this.#chains.get(sessionId) === tail) this.#chains.delete(sessionId);
    });
    return run;
  }

  /** Writes a batch with one write and one datasync; returns the seqs its entries got. */
  async #write(sessionId: string, entries: readonly string[]): Promise<number[]> {
    const file = this.#file(sessionId);
    let firstSeq = 0;
    let bytes: Buffer;
    try {
      const handle = await this.#open(sessionId);
      const { size } = await handle.stat();
      let tail = this.#tails.get(sessionId);
      if (!tail || tail.size !== size) tail = { lastSeq: await this.#lastSeqOnDisk(sessionId), size };
      firstSeq = tail.lastSeq + 1;
      const spare = this.#spare;
      this.#spare = undefined; // Borrowed: a write of another session meanwhile allocates its own.
      bytes = linesWithSeqs(entries, firstSeq, spare);
      let offset = 0;
      while (offset < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
      await handle.datasync();
      this.#tails.set(sessionId, { lastSeq: tail.lastSeq + entries.length, size: size + bytes.length });
    } catch (error) {
      // Drop the handle: the next append reopens the file and trims any partial line left here.
      this.#tails.delete(sessionId);
      await this.#closeHandle(sessionId).catch(() => undefined);
      throw new AseError('JOURNAL_IO', `appending to ${file} failed: ${message(error)}`, { cause: error });
    }
    // Watchers get objects: parsed back from the lines written, only when someone watches.
    if (this.#watchers.has(sessionId)) for (const line of bytes.toString('utf8').split('\n')) if (line !== '') this.#watchers.notify(JSON.parse(line) as JournaledEntry);
    this.#giveBack(bytes);
    return entries.map((_, i) => firstSeq + i);
  }

  /**
   * The seq of the (tail-trimmed) file's last line, from the index: its `seq`, or for lines written
   * before seqs existed, their count. An unreadable last line counts too, as it always did.
   */
  async #lastSeqOnDisk(sessionId: string): Promise<number> {
    const view = await this.#view(sessionId);
    if (!view) return 0;
    const { handle, index, size } = view;
    try {
      let lastSeq = index.lastSeq;
      for (const own of await tailSeqs(handle, index.end, size)) lastSeq = nextSeq(lastSeq, own ?? undefined);
      return lastSeq;
    } finally {
      await handle.close();
    }
  }

  async #open(sessionId: string): Promise<FileHandle> {
    const open = this.#handles.get(sessionId);
    if (open) return open;
    const file = this.#file(sessionId);
    await fs.mkdir(this.dir, { recursive: true });
    const existed = await trimTornTail(file);
    const handle = await fs.open(file, 'a');
    this.#handles.set(sessionId, handle);
    if (!existed) await syncDir(this.dir); // Make the new file's directory entry durable too.
    return handle;
  }

  /** Keeps the buffer a written batch was encoded in (linesWithSeqs': nobody else holds it) as the spare, when small enough. */
  #giveBack(bytes: Buffer): void {
    if (bytes.buffer.byteLength <= SPARE_BUFFER_LIMIT && (this.#spare === undefined || this.#spare.length < bytes.buffer.byteLength)) this.#spare = Buffer.from(bytes.buffer);
  }

  async #closeHandle(sessionId: string): Promise<void> {
    this.#tails.delete(sessionId);
    const handle = this.#handles.get(sessionId);
    if (!handle) return;
    this.#handles.delete(sessionId);
    await handle.close();
  }
}

/**
 * Cuts a partial last line (no trailing newline) left by a crash, so the next append starts on a
 * line of its own instead of gluing onto the fragment and corrupting the middle of the file.
 * Returns whether the file existed.
 */
async function trimTornTail(file: string): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, 'r+');
  } catch (error) {
    if (errno(error) === 'ENOENT') return false;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const chunk = 64 * 1024;
    const buffer = Buffer.alloc(Math.min(chunk, size));
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - chunk);
      const { bytesRead } = await handle.read(buffer, 0, end - start, start);
      const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline >= 0) {
        const keep = start + newline + 1;
        if (keep < size) await cut(handle, keep);
        return true;
      }
      end = start;
    }
    if (size > 0) await cut(handle, 0);
    return true;
  } finally {
    await handle.close();
  }
}

/** The own seq of each line after the index's end (`null`: not JSON, e.g. a torn line). */
async function tailSeqs(handle: FileHandle, from: number, size: number): Promise<unknown[]> {
  if (size <= from) return [];
  const tail = Buffer.alloc(size - from);
  const { bytesRead } = await handle.read(tail, 0, tail.length, from);
  const seqs: unknown[] = [];
  for (const line of tail.subarray(0, bytesRead).toString('utf8').split('\n')) {
    if (line === '') continue;
    try {
      seqs.push((JSON.parse(line) as { seq?: unknown } | null)?.seq);
    } catch {
      seqs.push(null);
    }
  }
  return seqs;
}

async function cut(handle: FileHandle, length: number): Promise<void> {
  await handle.truncate(length);
  await handle.datasync();
}

/** The keys of an entry (`read` returns these only: the schema drops any other). */
const ENTRY_KEYS = new Set(Object.keys(TranscriptEntrySchema.shape));

/**
 * Whether a line's text already is the entry `read` returns for it: its own seq is the one it got,
 * it has no key `read` would drop, nothing to upgrade, and no CR (an event-stream line break).
 */
function isStoredAsRead(entry: TranscriptEntry, seq: number, data: object, text: string): boolean {
  if (entry.seq !== seq || upgradeTranscriptEntry(entry) !== entry || text.includes('\r')) return false;
  for (const key in data) if (!ENTRY_KEYS.has(key)) return false;
  return true;
}

/**
 * A batch's lines, seqs from `firstSeq`, encoded straight into one buffer: each serialized entry with
 * its seq spliced in as the last field (`,"seq":N}` in place of its closing brace, where seq-index.ts
 * reads it) and a newline. No string per line and no joined string of the batch: the buffer is the
 * only copy of the bytes.
 */
function linesWithSeqs(entries: readonly string[], firstSeq: number, spare: Buffer | undefined): Buffer {
  let length = 0;
  for (const json of entries) length += Buffer.byteLength(json, 'utf8');
  // Per line at most `,"seq":` (7), the digits (at most 16 for a safe integer), `}` and `\n`.
  const most = length + entries.length * 25;
  // Its own ArrayBuffer (allocUnsafeSlow), never a slice of Node's shared pool, so it can be kept and reused.
  const bytes = spare !== undefined && spare.length >= most ? spare : Buffer.allocUnsafeSlow(most);
  let offset = 0;
  for (let i = 0; i < entries.length; i++) {
    const json = entries[i]!;
    // Up to the closing brace; `{}` (no field of its own) takes no comma before its seq.
    offset += bytes.write(json, offset, 'utf8') - 1;
    offset += bytes.write(json === '{}' ? `"seq":${firstSeq + i}}\n` : `,"seq":${firstSeq + i}}\n`, offset, 'latin1');
  }
  return bytes.subarray(0, offset);
}

/** The largest buffer a journal keeps to encode its next batch in (a bigger batch gets its own). */
const SPARE_BUFFER_LIMIT = 1 << 20;
/** An entry refused before anything is queued: an AseError as it is, anything else (a serialization failure) as INVALID_INPUT. */
function refusal(error: unknown): AseError {
  if (error instanceof AseError) return error;
  return new AseError('INVALID_INPUT', `transcript entry is not serializable: ${message(error)}`, { cause: error });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
