/**
 * The transcript journal: an append-only record of everything durable that happened in a session
 * (user messages, agent messages, tool calls, decisions, turn ends), one JSON object per line.
 * The journal numbers each session's entries (`seq` 1, 2, 3, ...): the cursor an event stream resumes from.
 */
import type { JournaledEntry, TranscriptEntry } from '../../events/transcript-entry.js';

/** Which entries `read` returns: `seq` strictly between `afterSeq` and `beforeSeq`, at most `limit`. */
export interface JournalRange {
  afterSeq?: number;
  beforeSeq?: number;
  /**
   * At most this many: the oldest ones after `afterSeq`, or, with only `beforeSeq`, the newest ones
   * before it (backward paging). Always returned in ascending `seq`.
   */
  limit?: number;
}

/** How one entry is appended. */
export interface JournalAppendOptions {
  /** The writer's lease fence (see `TranscriptJournal.append`). */
  fence?: number;
}

/** What the journal still keeps of a session: `firstSeq` 0 and `lastSeq` 0 when nothing. */
export interface JournalBounds {
  firstSeq: number;
  lastSeq: number;
}

/**
 * A journaled entry as JSON text: what `JSON.stringify` of the entry `read` returns would give (up
 * to key order, whitespace and number spelling), on one line (no CR or LF). What an event stream
 * sends, so a journal that stores JSON can hand it over without a parse-and-stringify per entry.
 */
export interface JournaledJson {
  seq: number;
  json: string;
}

/** Called after an entry is durable, with its seq (in append order per session). */
export type JournalListener = (entry: JournaledEntry) => void;

export interface TranscriptJournal {
  /**
   * Appends in call order, setting the entry's `seq` to one more than the session's last; resolves
   * with that seq once the entry is durable. I/O failures reject with `AseError('JOURNAL_IO')`.
   *
   * With `options.fence`, a journal that can check it in the same step as the write (the
   * PostgresJournal) writes nothing and rejects with `AseError('LEASE_LOST')` unless that fence is
   * the session's current lease. The file and memory journals ignore it: there the runtime's own
   * lease check gates appends.
   */
  append(entry: TranscriptEntry, options?: JournalAppendOptions): Promise<number | void>;
  /**
   * `append` of several entries of one session at once, in order, as if appended one after the
   * other in one go: resolves with their seqs once every one of them is durable, rejects (JOURNAL_IO,
   * LEASE_LOST) if any of them failed. Entries of more than one session, or one entry that cannot be
   * appended, refuse the whole call with `INVALID_INPUT` and append nothing. For a journal that can
   * do it cheaper than an `append` per entry (one promise per call, not per entry: the runtime
   * appends a dense turn's entries in batches of tens). Optional: `appendEntries` falls back to `append`.
   */
  appendMany?(entries: readonly TranscriptEntry[], options?: JournalAppendOptions): Promise<(number | void)[]>;
  /** A session's entries in append order (a torn last line from a crash is skipped), optionally a range of them. */
  read(sessionId: string, range?: JournalRange): Promise<TranscriptEntry[]>;
  /**
   * `read` as JSON text (see JournaledJson), for a journal that can do it cheaper than `read` and
   * `JSON.stringify` per entry (the FileJournal hands over its lines as stored, still validated).
   * Optional: `readJsonEntries` falls back to `read`.
   */
  readJson?(sessionId: string, range?: JournalRange): Promise<JournaledJson[]>;
  /** Waits for pending appends. */
  flush(): Promise<void>;
  /** Flushes and releases resources (file handles); appending later may reopen them. */
  close?(): Promise<void>;
  /** Removes a session's transcript (after pending appends); nothing to remove is not an error. */
  delete?(sessionId: string): Promise<void>;
  /** The seqs still kept for a session (an event stream whose cursor is older reports a gap). */
  bounds?(sessionId: string): Promise<JournalBounds>;
  /** Hears every entry this journal appends for `sessionId` once durable; returns the unsubscribe. */
  watch?(sessionId: string, listener: JournalListener): () => void;
  /**
   * Resolves once the watches of `sessionId` begun so far know where they start: every entry
   * appended after that, by this host or (PostgresJournal) another, reaches them. A journal whose
   * watch starts at once resolves at once. Optional, like `watch`.
   */
  watchStarted?(sessionId: string): Promise<void>;
}

/**
 * `journal.appendMany` where the journal has it, else `append` per entry (each called at once, in
 * order, so they keep call order as `append` promises): resolves with the seqs once all are durable.
 */
export function appendEntries(journal: TranscriptJournal, entries: readonly TranscriptEntry[], options?: JournalAppendOptions): Promise<(number | void)[]> {
  if (journal.appendMany) return journal.appendMany(entries, options);
  return Promise.all(entries.map((entry) => (options === undefined ? journal.append(entry) : journal.append(entry, options))));
}

/** `journal.readJson` where the journal has it, else `read` and `JSON.stringify` per entry. */
export async function readJsonEntries(journal: TranscriptJournal, sessionId: string, range?: JournalRange): Promise<JournaledJson[]> {
  if (journal.readJson) return journal.readJson(sessionId, range);
  const entries = (await journal.read(sessionId, range)) as JournaledEntry[];
  return entries.map((entry) => ({ seq: entry.seq, json: JSON.stringify(entry) }));
}

/** Applies a JournalRange to entries sorted by seq. */
export function selectRange<T extends { seq?: number }>(entries: readonly T[], range: JournalRange | undefined): T[] {
  if (!range) return [...entries];
  const after = range.afterSeq ?? 0;
  const before = range.beforeSeq ?? Number.POSITIVE_INFINITY;
  const inRange = entries.filter((e) => (e.seq ?? 0) > after && (e.seq ?? 0) < before);
  if (range.limit === undefined) return inRange;
  const limit = Math.max(0, Math.floor(range.limit));
  // Only a beforeSeq (backward paging): the newest `limit` before the cursor.
  return range.afterSeq === undefined && range.beforeSeq !== undefined ? inRange.slice(Math.max(0, inRange.length - limit)) : inRange.slice(0, limit);
}

/** Per-session listeners, shared by the journals. */
export class JournalWatchers {
  readonly #listeners = new Map<string, Set<JournalListener>>();

  watch(sessionId: string, listener: JournalListener): () => void {
    let set = this.#listeners.get(sessionId);
    if (!set) this.#listeners.set(sessionId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(sessionId) === set) this.#listeners.delete(sessionId);
    };
  }

  /** Whether anyone watches `sessionId`. */
  has(sessionId: string): boolean {
    return this.#listeners.has(sessionId);
  }

  notify(entry: JournaledEntry): void {
    const set = this.#listeners.get(entry.sessionId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(structuredClone(entry));
      } catch (error) {
        // A listener's bug must not fail an append that is already durable.
        process.emitWarning(`agent-session-engine: a journal listener threw: ${String(error)}`);
      }
    }
  }
}
