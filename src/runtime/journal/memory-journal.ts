/**
 * An in-memory TranscriptJournal for tests and embedders that need no durability. Entries are
 * copied in and out, so later mutation by either side cannot rewrite history.
 */
import type { TranscriptEntry } from '../../events/transcript-entry.js';
import type { TranscriptJournal } from './transcript-journal.js';

export class MemoryJournal implements TranscriptJournal {
  readonly #sessions = new Map<string, TranscriptEntry[]>();

  async append(entry: TranscriptEntry): Promise<void> {
    const entries = this.#sessions.get(entry.sessionId) ?? [];
    entries.push(structuredClone(entry));
    this.#sessions.set(entry.sessionId, entries);
  }

  async read(sessionId: string): Promise<TranscriptEntry[]> {
    return structuredClone(this.#sessions.get(sessionId) ?? []);
  }

  async flush(): Promise<void> {}

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }
}
