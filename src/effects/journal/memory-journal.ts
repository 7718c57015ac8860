/**
 * An in-memory TranscriptJournal for tests and embedders that need no durability. Entries are
 * copied in and out, so later mutation by either side cannot rewrite history.
 */
import type { JournaledEntry, TranscriptEntry } from '../../events/transcript-entry.js';
import { copyPlain } from './copy-plain.js';
import { JournalWatchers, selectRange, type JournalBounds, type JournalListener, type JournalRange, type TranscriptJournal } from './transcript-journal.js';

export interface MemoryJournalOptions {
  /** Keep at most this many entries per session, dropping the oldest (their seqs are not reused). Default: all. */
  maxEntriesPerSession?: number;
}

export class MemoryJournal implements TranscriptJournal {
  readonly #sessions = new Map<string, JournaledEntry[]>();
  /** Kept apart from the entries: dropping the oldest never lowers it. */
  readonly #lastSeq = new Map<string, number>();
  readonly #watchers = new JournalWatchers();
  readonly #max: number;

  constructor(options: MemoryJournalOptions = {}) {
    this.#max = options.maxEntriesPerSession ?? Number.POSITIVE_INFINITY;
  }

  async append(entry: TranscriptEntry): Promise<number> {
    const seq = (this.#lastSeq.get(entry.sessionId) ?? 0) + 1;
    this.#lastSeq.set(entry.sessionId, seq);
    // The copy is ours: its seq is set in place (a given one replaced), not spread into another object.
    const stored = copyPlain(entry) as JournaledEntry;
    stored.seq = seq;
    const entries = this.#sessions.get(entry.sessionId) ?? [];
    entries.push(stored);
    if (entries.length > this.#max) entries.splice(0, entries.length - this.#max);
    this.#sessions.set(entry.sessionId, entries);
    this.#watchers.notify(stored);
    return seq;
  }

  async read(sessionId: string, range?: JournalRange): Promise<TranscriptEntry[]> {
    return copyPlain(selectRange(this.#sessions.get(sessionId) ?? [], range));
  }

  async bounds(sessionId: string): Promise<JournalBounds> {
    const entries = this.#sessions.get(sessionId) ?? [];
    return { firstSeq: entries[0]?.seq ?? 0, lastSeq: this.#lastSeq.get(sessionId) ?? 0 };
  }

  watch(sessionId: string, listener: JournalListener): () => void {
    return this.#watchers.watch(sessionId, listener);
  }

  async flush(): Promise<void> {}

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
    this.#lastSeq.delete(sessionId); // Like a deleted file: a session appended again starts at 1.
  }
}
