/**
 * A MemoryStore whose state writes wait until `open()` (those of one session, or of every one): what
 * a test uses to see that something answers only once a session is stored.
 */
import { MemoryStore, type PersistedSession, type SaveResult } from '../../src/index.js';

export class GatedStore extends MemoryStore {
  /** The writes held so far (they are written after `open()`). */
  saves = 0;
  readonly #only: string | undefined;
  #open!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#open = resolve));

  /** `only`: hold the writes of this session alone (default: every session's). */
  constructor(only?: string) {
    super();
    this.#only = only;
  }

  open(): void {
    this.#open();
  }

  override async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    if (this.#only === undefined || sessionId === this.#only) {
      this.saves++;
      await this.#gate;
    }
    return super.save(sessionId, state, expectedVersion, fence);
  }
}
