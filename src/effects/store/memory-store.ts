/**
 * An in-memory SessionStore for tests and embedders that need no durability. States are deep-copied
 * in and out, so neither the caller nor the store can change the other's copy after the fact.
 *
 * Leases: every holder lives in this process, so an owner is alive until its lease expires or is
 * released (a crashed holder cannot be told from a live one here; `force` or expiry takes over).
 */
import os from 'node:os';
import type { PersistedSession, VersionedSession } from '../../events/session-state.js';
import { AseError } from '../../errors.js';
import { assertAcquireOptions, assertCurrentLease, assertLease, takeLease, toLease, type LeaseRecord } from './lease.js';
import type { AcquireOptions, Lease, SaveResult, SessionStore } from './session-store.js';

export interface MemoryStoreOptions {
  /** The lease clock (epoch ms). Default `Date.now`. */
  now?: () => number;
}

export class MemoryStore implements SessionStore {
  readonly #sessions = new Map<string, VersionedSession>();
  readonly #leases = new Map<string, LeaseRecord>();
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async load(sessionId: string): Promise<VersionedSession | undefined> {
    const stored = this.#sessions.get(sessionId);
    return stored && structuredClone(stored);
  }

  // No await between the checks and the write: the compare-and-set is atomic on the event loop.
  async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    assertExpectedVersion(expectedVersion);
    assertStateOf(sessionId, state);
    if (fence !== undefined) assertCurrentLease(sessionId, this.#leases.get(sessionId), fence);
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
    const lease = this.#leases.get(sessionId);
    if (lease) this.#leases.set(sessionId, { ...lease, owner: null });
  }

  async acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    assertAcquireOptions(options);
    const owner = { host: os.hostname(), pid: process.pid, ...(options.label !== undefined && { label: options.label }) };
    // Every holder is in this process: alive until its lease expires.
    const record = takeLease(sessionId, this.#leases.get(sessionId), owner, options, this.#now(), () => 'unknown');
    this.#leases.set(sessionId, record);
    return toLease(sessionId, { ...record, owner });
  }

  async renew(lease: Lease): Promise<Lease> {
    assertLease(lease);
    const current = this.#leases.get(lease.sessionId);
    assertCurrentLease(lease.sessionId, current, lease.fence);
    const record = { ...current, expiresAt: this.#now() + current.ttlMs };
    this.#leases.set(lease.sessionId, record);
    return toLease(lease.sessionId, record);
  }

  async release(lease: Lease): Promise<void> {
    assertLease(lease);
    const current = this.#leases.get(lease.sessionId);
    if (current && current.owner !== null && current.fence === lease.fence) this.#leases.set(lease.sessionId, { ...current, owner: null });
  }
}

/** Shared by the stores: a version is a non-negative integer. */
export function assertExpectedVersion(expectedVersion: number): void {
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new AseError('INVALID_INPUT', `expectedVersion must be a non-negative integer, got ${String(expectedVersion)}`);
  }
}

/** Shared by the stores: a state is filed under its own session id, never another's. */
export function assertStateOf(sessionId: string, state: PersistedSession): void {
  if (typeof state !== 'object' || state === null || state.sessionId !== sessionId) {
    throw new AseError('INVALID_INPUT', `refusing to store the state of session ${JSON.stringify((state as { sessionId?: unknown } | null)?.sessionId)} under "${sessionId}"`);
  }
}
