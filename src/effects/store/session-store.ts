/**
 * Where a session's durable state lives, and who may write it. Writes are compare-and-set on
 * `version`, so two writers can never silently overwrite each other; and one host at a time owns a
 * session through a lease with a fencing token, so two hosts never both drive one agent.
 *
 * This is the whole contract a multi-host store (a database shared by several hosts) implements;
 * `test/support/store-conformance.ts` is the one suite every store must pass.
 */
import type { PersistedSession, VersionedSession } from '../../events/session-state.js';

export type SaveResult =
  | { ok: true; version: number }
  /** The store holds `version` (and `stored`, if readable), not the version the writer expected. */
  | { ok: false; version: number; stored?: PersistedSession };

/** Who holds a lease: enough for another host to judge whether it is still alive, and to name it. */
export interface LeaseOwner {
  /** The machine the owner runs on (`os.hostname()` unless the store was told otherwise). */
  host: string;
  pid: number;
  /**
   * The owner process's start time (Linux: field 22 of `/proc/<pid>/stat`), so a pid the kernel
   * gave to another process since is never taken for the owner.
   */
  startTime?: string;
  /** The host's boot id (Linux), so a pid from before a reboot is known to be dead. */
  bootId?: string;
  /** Free text the owner chose (a supervisor or service name), shown in `SESSION_OWNED`. */
  label?: string;
}

/** The right to drive one session, until `expiresAt` unless renewed. */
export interface Lease {
  sessionId: string;
  /**
   * The fencing token: grows by one with every acquire of this session and is never reused (a
   * release keeps it). A write carrying an older token is refused with `LEASE_LOST`.
   */
  fence: number;
  owner: LeaseOwner;
  /** Epoch ms on the store's clock; after it another host may take the session. */
  expiresAt: number;
  ttlMs: number;
}

export interface AcquireOptions {
  /** How long the lease holds without a renewal. */
  ttlMs: number;
  /** Take the session even from a live owner (an operator who knows better); its writes are then refused. */
  force?: boolean;
  /** Shown to others in `SESSION_OWNED`. */
  label?: string;
}

/** Who holds a session's lease, as a store shared by hosts reports it (`SessionStore.owners`). */
export interface SessionOwnerInfo {
  host: string;
  pid: number;
  label?: string;
  /** Epoch ms on the store's clock. */
  expiresAt: number;
  /** The lease has not expired (on the store's clock). */
  live: boolean;
}

export interface SessionStore {
  /**
   * The stored session, or undefined when none exists. Corrupt data, or a state whose `sessionId`
   * is not the one asked for, throws `AseError('STORE_CORRUPT')`.
   */
  load(sessionId: string): Promise<VersionedSession | undefined>;
  /**
   * Writes `state` if the stored version equals `expectedVersion` (0 = must not exist yet) and
   * returns the new version (`expectedVersion + 1`); otherwise writes nothing and reports the conflict.
   * With `fence`, the write is refused (`AseError('LEASE_LOST')`, nothing written) unless that fence
   * is the session's current, unreleased lease: check and write are one atomic step. Without it the
   * write is compare-and-set only. I/O failures throw `AseError('STORE_IO')`.
   */
  save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult>;
  /** Session ids the store holds. */
  list(): Promise<string[]>;
  /** Removes the state and ends any lease on it (its holder's next write is refused); the fence counter is kept. */
  delete(sessionId: string): Promise<void>;
  /**
   * Takes the session's lease with the next fence. Throws `AseError('SESSION_OWNED')` (details:
   * `owner`, `expiresAt`) while another owner holds an unexpired lease and is not known to be dead;
   * a store that can tell a dead owner (the FileStore, for a process on the same host) takes its
   * lease at once. `force` takes it regardless.
   */
  acquire(sessionId: string, options: AcquireOptions): Promise<Lease>;
  /**
   * Extends the lease by its `ttlMs` from now. Throws `AseError('LEASE_LOST')` when it is no longer
   * the current lease: always when it expired and another owner took it, or it was taken, released
   * or deleted through this store's process. A live lease that another process took by `force` or
   * ended by `delete` may still be renewed for up to one ttl after the store last checked it (the
   * FileStore checks the lease file at most once per ttl on an idle renewal); a fenced `save` is
   * refused at once regardless.
   */
  renew(lease: Lease): Promise<Lease>;
  /** Gives the lease up (the fence counter stays). Does nothing when the lease is no longer current. */
  release(lease: Lease): Promise<void>;
  /**
   * Optional, for a store several hosts share: who holds the lease of each of these sessions (those
   * with no holder are left out), so a server can list every host's sessions with their owner.
   */
  owners?(sessionIds: string[]): Promise<Map<string, SessionOwnerInfo>>;
}
