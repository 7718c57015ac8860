/**
 * An in-memory SessionStore for tests and embedders that need no durability. States are deep-copied
 * in and out, so neither the caller nor the store can change the other's copy after the fact.
 */
import type { PersistedSession, VersionedSession } from '../../events/session-state.js';
import { AseError } from '../../errors.js';
import type { SaveResult, SessionStore } from './session-store.js';

export class MemoryStore implements SessionStore {
  readonly #sessions = new Map<string, VersionedSession>();

  async load(sessionId: string): Promise<VersionedSession | undefined> {
    const stored = this.#sessions.get(sessionId);
    return stored && structuredClone(stored);
  }

  // No await between the read and the write: the compare-and-set is atomic on the event loop.
  async save(sessionId: string, state: PersistedSession, expectedVersion: number): Promise<SaveResult> {
    assertExpectedVersion(expectedVersion);
    const current = this.#sessions.get(sessionId);
    const currentVersion = current?.version ?? 0;
    if (currentVersion !== expectedVersion) {
      return { ok: false, version: currentVersion, ...(current && { stored: structuredClone(current.state) }) };
    }
    const version = expectedVersion + 1;
    this.#sessions.set(sessionId, { version, state: structuredClone(state) });
    return { ok: true, version };
  }

  async list(): Promise<string[]> {
    return [...this.#sessions.keys()];
  }

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }
}

/** Shared by the stores: a version is a non-negative integer. */
export function assertExpectedVersion(expectedVersion: number): void {
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new AseError('INVALID_INPUT', `expectedVersion must be a non-negative integer, got ${String(expectedVersion)}`);
  }
}
