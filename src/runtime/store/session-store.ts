/**
 * Where a session's durable state lives. Writes are compare-and-set on `version`, so two writers
 * (two host processes, a host and a server) can never silently overwrite each other.
 */
import type { PersistedSession, VersionedSession } from '../../events/session-state.js';

export type SaveResult =
  | { ok: true; version: number }
  /** The store holds `version` (and `stored`, if readable), not the version the writer expected. */
  | { ok: false; version: number; stored?: PersistedSession };

export interface SessionStore {
  /** The stored session, or undefined when none exists. Corrupt data throws `AseError('STORE_CORRUPT')`. */
  load(sessionId: string): Promise<VersionedSession | undefined>;
  /**
   * Writes `state` if the stored version equals `expectedVersion` (0 = must not exist yet) and
   * returns the new version (`expectedVersion + 1`); otherwise writes nothing and reports the conflict.
   * I/O failures throw `AseError('STORE_IO')`.
   */
  save(sessionId: string, state: PersistedSession, expectedVersion: number): Promise<SaveResult>;
  /** Session ids the store holds. */
  list(): Promise<string[]>;
  delete(sessionId: string): Promise<void>;
}
