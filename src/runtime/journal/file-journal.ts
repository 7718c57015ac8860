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
import { JournalWatchers, selectRange, type JournalBounds, type JournalListener, type JournalRange, type TranscriptJournal } from './transcript-journal.js';
import { assertSessionId } from '../store/file-store.js';
import { errno, syncDir } from '../fs-durable.js';

export interface FileJournalOptions {
  dir: string;
}

/** Entries waiting for their session's write: they go out together, in call order. */
interface Batch {
  entries: TranscriptEntry[];
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

  constructor(options: FileJournalOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new AseError('INVALID_OPTIONS', 'FileJournal: dir must be a non-empty string');
    }
    this.dir = path.resolve(options.dir);
  }

  append(entry: TranscriptEntry): Promise<number> {
    let copy: TranscriptEntry;
    try {
      assertSessionId(entry.sessionId);
      // Copied now, so a caller mutating the entry after the call cannot change what is written.
      copy = JSON.parse(JSON.stringify(entry)) as TranscriptEntry;
    } catch (error) {
      if (error instanceof AseError) return Promise.reject(error);
      return Promise.reject(new AseError('INVALID_INPUT', `transcript entry is not serializable: ${message(error)}`, { cause: error }));
    }
    const sessionId = entry.sessionId;
    let batch = this.#filling.get(sessionId);
    if (!batch) {
      const entries: TranscriptEntry[] = [];
      let seqs: number[] = [];
      const queued: Batch = {
        entries,
        // Runs once the session's previous task is done; entries appended until then join this batch.
        written: this.#enqueue(sessionId, async () => {
          if (this.#filling.get(sessionId) === queued) this.#filling.delete(sessionId);
          seqs = await this.#write(sessionId, entries);
        }).then(() => seqs),
      };
      batch = queued;
      this.#filling.set(sessionId, batch);
    }
    const index = batch.entries.push(copy) - 1;
    return batch.written.then((seqs) => seqs[index]!);
  }

  async read(sessionId: string, range?: JournalRange): Promise<TranscriptEntry[]> {
    return selectRange(await this.#readAll(sessionId), range);
  }

  async bounds(sessionId: string): Promise<JournalBounds> {
    const entries = await this.#readAll(sessionId);
    return { firstSeq: entries[0]?.seq ?? 0, lastSeq: entries.at(-1)?.seq ?? 0 };
  }

  watch(sessionId: string, listener: JournalListener): () => void {
    return this.#watchers.watch(sessionId, listener);
  }

  async #readAll(sessionId: string): Promise<JournaledEntry[]> {
    assertSessionId(sessionId);
    await this.#chains.get(sessionId); // Read-your-writes: include appends already called.
    const file = this.#file(sessionId);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if (errno(error) === 'ENOENT') return [];
      throw new AseError('JOURNAL_IO', `reading ${file} failed: ${message(error)}`, { cause: error });
    }
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const entries: JournaledEntry[] = [];
    let lastSeq = 0;
    for (const [index, line] of lines.entries()) {
      let data: unknown;
      try {
        data = JSON.parse(line);
      } catch (error) {
        // A crash mid-append can only tear the last line; anywhere else it is corruption.
        if (index === lines.length - 1) break;
        throw new AseError('STORE_CORRUPT', `${file}:${index + 1}: not valid JSON`, { cause: error });
      }
      const parsed = TranscriptEntrySchema.safeParse(data);
      if (!parsed.success) throw new AseError('STORE_CORRUPT', `${file}:${index + 1}: not a transcript entry: ${parsed.error.message}`);
      // A line from before seqs existed counts by position; so does one whose seq does not grow
      // (two writers despite the lease): the same rule the writer uses, so both agree.
      const seq = nextSeq(lastSeq, parsed.data.seq);
      lastSeq = seq;
      entries.push({ ...upgradeTranscriptEntry(parsed.data), seq });
    }
    return entries;
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
  async #write(sessionId: string, entries: readonly TranscriptEntry[]): Promise<number[]> {
    const file = this.#file(sessionId);
    const stored: JournaledEntry[] = [];
    try {
      const handle = await this.#open(sessionId);
      const { size } = await handle.stat();
      let tail = this.#tails.get(sessionId);
      if (!tail || tail.size !== size) tail = { lastSeq: await lastSeqIn(file), size };
      for (const [i, entry] of entries.entries()) stored.push({ ...entry, seq: tail.lastSeq + 1 + i });
      const bytes = Buffer.from(stored.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');
      let offset = 0;
      while (offset < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
      await handle.datasync();
      this.#tails.set(sessionId, { lastSeq: stored.at(-1)?.seq ?? tail.lastSeq, size: size + bytes.length });
    } catch (error) {
      // Drop the handle: the next append reopens the file and trims any partial line left here.
      this.#tails.delete(sessionId);
      await this.#closeHandle(sessionId).catch(() => undefined);
      throw new AseError('JOURNAL_IO', `appending to ${file} failed: ${message(error)}`, { cause: error });
    }
    for (const e of stored) this.#watchers.notify(e);
    return stored.map((e) => e.seq);
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

/**
 * The seq of a (tail-trimmed) file's last line: its `seq` field, or for a file written before seqs
 * existed, its line count. 0 for an empty or missing file.
 */
async function lastSeqIn(file: string): Promise<number> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return 0;
    throw error;
  }
  const lines = text.split('\n').filter((line) => line !== '');
  let counted = 0;
  for (const line of lines) {
    let seq: unknown;
    try {
      seq = (JSON.parse(line) as { seq?: unknown }).seq;
    } catch {
      seq = undefined;
    }
    counted = nextSeq(counted, seq);
  }
  return counted;
}

/** A line's seq: its own when it grows past the previous one, else the previous one plus one. */
function nextSeq(previous: number, own: unknown): number {
  return typeof own === 'number' && Number.isInteger(own) && own > previous ? own : previous + 1;
}

async function cut(handle: FileHandle, length: number): Promise<void> {
  await handle.truncate(length);
  await handle.datasync();
}



function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
