/**
 * The embedded default TranscriptJournal: one append-only JSONL file per session,
 * `<dir>/<sessionId>.jsonl`. An append resolves only after its line is written and datasynced.
 *
 * One writer per session file is assumed (one FileJournal in one process): appends are ordered by a
 * per-session promise chain, not by a file lock.
 */
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AseError } from '../../errors.js';
import { TranscriptEntrySchema, upgradeTranscriptEntry, type TranscriptEntry } from '../../events/transcript-entry.js';
import type { TranscriptJournal } from './transcript-journal.js';
import { assertSessionId } from '../store/file-store.js';
import { errno, syncDir } from '../fs-durable.js';

export interface FileJournalOptions {
  dir: string;
}

export class FileJournal implements TranscriptJournal {
  readonly dir: string;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #handles = new Map<string, FileHandle>();

  constructor(options: FileJournalOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new AseError('INVALID_OPTIONS', 'FileJournal: dir must be a non-empty string');
    }
    this.dir = path.resolve(options.dir);
  }

  append(entry: TranscriptEntry): Promise<void> {
    let line: string;
    try {
      assertSessionId(entry.sessionId);
      // Serialized now, so a caller mutating the entry after the call cannot change what is written.
      line = `${JSON.stringify(entry)}\n`;
    } catch (error) {
      if (error instanceof AseError) return Promise.reject(error);
      return Promise.reject(new AseError('INVALID_INPUT', `transcript entry is not serializable: ${message(error)}`, { cause: error }));
    }
    return this.#enqueue(entry.sessionId, () => this.#write(entry.sessionId, line));
  }

  async read(sessionId: string): Promise<TranscriptEntry[]> {
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
    const entries: TranscriptEntry[] = [];
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
      entries.push(upgradeTranscriptEntry(parsed.data));
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

  async #write(sessionId: string, line: string): Promise<void> {
    const file = this.#file(sessionId);
    try {
      const handle = await this.#open(sessionId);
      const bytes = Buffer.from(line, 'utf8');
      let offset = 0;
      while (offset < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
      await handle.datasync();
    } catch (error) {
      // Drop the handle: the next append reopens the file and trims any partial line left here.
      await this.#closeHandle(sessionId).catch(() => undefined);
      throw new AseError('JOURNAL_IO', `appending to ${file} failed: ${message(error)}`, { cause: error });
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

  async #closeHandle(sessionId: string): Promise<void> {
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

async function cut(handle: FileHandle, length: number): Promise<void> {
  await handle.truncate(length);
  await handle.datasync();
}



function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
