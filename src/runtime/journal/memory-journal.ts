/**
 * An in-memory TranscriptJournal for tests and embedders that need no durability. Entries are
 * copied in and out, so later mutation by either side cannot rewrite history. They are kept as
 * their JSON lines, what FileJournal writes (and reads back): serializing an entry costs a fraction
 * of a deep clone, and the copy read back is the same a file would give.
 */
import type { TranscriptEntry } from '../../events/transcript-entry.js';
import type { TranscriptJournal } from './transcript-journal.js';

export class MemoryJournal implements TranscriptJournal {
  readonly #sessions = new Map<string, string[]>();

  async append(entry: TranscriptEntry): Promise<void> {
    const lines = this.#sessions.get(entry.sessionId) ?? [];
    lines.push(JSON.stringify(entry));
    this.#sessions.set(entry.sessionId, lines);
  }

  async read(sessionId: string): Promise<TranscriptEntry[]> {
    return (this.#sessions.get(sessionId) ?? []).map((line) => JSON.parse(line) as TranscriptEntry);
  }

  async flush(): Promise<void> {}

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }
}
