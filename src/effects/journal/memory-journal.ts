/**
 * An in-memory TranscriptJournal for tests and embedders that need no durability. Entries are
 * copied in and out, so later mutation by either side cannot rewrite history.
 */
import type { JournaledEntry, TranscriptEntry } from '../../events/transcript-entry.js';
import { AseError } from '../../errors.js';
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
    return this.#store(copyPlain(entry) as JournaledEntry);
  }

  /** Stores our own copy of an entry: its seq is set in place (a given one replaced), not spread into another object. */
  #store(stored: JournaledEntry): number {
    const seq = (this.#lastSeq.get(stored.sessionId) ?? 0) + 1;
    this.#lastSeq.set(stored.sessionId, seq);
    stored.seq = seq;
    const entries = this.#sessions.get(stored.sessionId) ?? [];
    entries.push(stored);
    if (entries.length > this.#max) entries.splice(0, entries.length - this.#max);
    this.#sessions.set(stored.sessionId, entries);
    this.#watchers.notify(stored);
    return seq;
  }

  /** `append` of each entry in turn, one promise for the lot; entries of more than one session are refused, nothing appended. */
  async appendMany(entries: readonly TranscriptEntry[]): Promise<number[]> {
    if (!Array.isArray(entries)) throw new AseError('INVALID_INPUT', 'appendMany takes an array of transcript entries');
    const sessionId = entries[0]?.sessionId;
    for (const entry of entries) {
      if (entry?.sessionId !== sessionId) throw new AseError('INVALID_INPUT', `appendMany takes entries of one session: "${String(entry?.sessionId)}" after "${String(sessionId)}"`);
    }
    // Copied before any is stored, so an entry that cannot be copied refuses the call with nothing appended.
    const copies = entries.map((entry) => copyPlain(entry) as JournaledEntry);
    return copies.map((copy) => this.#store(copy));
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

  /** A watch of this journal starts when `watch` returns (it hears this journal's own appends): resolves at once. */
  watchStarted(_sessionId: string): Promise<void> {
    return Promise.resolve();
  }

  async flush(): Promise<void> {}

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
    this.#lastSeq.delete(sessionId); // Like a deleted file: a session appended again starts at 1.
  }
}
