/**
 * The transcript journal: an append-only record of everything durable that happened in a session
 * (user messages, agent messages, tool calls, decisions, turn ends), one JSON object per line.
 */
import type { TranscriptEntry } from '../../events/transcript-entry.js';

export interface TranscriptJournal {
  /** Appends in call order; resolves once the entry is durable. I/O failures reject with `AseError('JOURNAL_IO')`. */
  append(entry: TranscriptEntry): Promise<void>;
  /** Every entry of a session, in append order (a torn last line from a crash is skipped). */
  read(sessionId: string): Promise<TranscriptEntry[]>;
  /** Waits for pending appends. */
  flush(): Promise<void>;
  /** Flushes and releases resources (file handles); appending later may reopen them. */
  close?(): Promise<void>;
  /** Removes a session's transcript (after pending appends); nothing to remove is not an error. */
  delete?(sessionId: string): Promise<void>;
}
