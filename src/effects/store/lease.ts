/**
 * The lease rules every built-in store applies to its stored lease record, kept in one place so
 * the memory and file stores cannot drift: who may take a session, what a fence proves, and how
 * an owner is named in errors.
 */
import { AseError } from '../../errors.js';
import type { Liveness } from './process-identity.js';
import type { AcquireOptions, Lease, LeaseOwner } from './session-store.js';

/** What a store keeps per session. `owner: null` = released (the fence counter stays). */
export interface LeaseRecord {
  fence: number;
  owner: LeaseOwner | null;
  expiresAt: number;
  ttlMs: number;
}

export function assertAcquireOptions(options: AcquireOptions): void {
  if (typeof options !== 'object' || options === null || !Number.isSafeInteger(options.ttlMs) || options.ttlMs <= 0) {
    throw new AseError('INVALID_INPUT', `lease ttlMs must be a positive integer, got ${String((options as { ttlMs?: unknown } | null)?.ttlMs)}`);
  }
}

/**
 * The record after `owner` takes the session, or `SESSION_OWNED` while a live owner holds it: an
 * unexpired lease whose owner is not known to be dead (a dead one is taken at once). `extendedUntil`
 * is a later expiry the store knows of besides the record's own (the FileStore's owner heartbeat).
 */
export function takeLease(
  sessionId: string,
  current: LeaseRecord | undefined,
  owner: LeaseOwner,
  options: AcquireOptions,
  now: number,
  ownerLiveness: (owner: LeaseOwner) => Liveness,
  extendedUntil = 0,
): LeaseRecord {
  const holder = current?.owner;
  const expiresAt = Math.max(current?.expiresAt ?? 0, extendedUntil);
  if (holder && !options.force && expiresAt > now && ownerLiveness(holder) !== 'dead') {
    throw new AseError('SESSION_OWNED', `session "${sessionId}" is owned by ${describeOwner(holder)} (lease valid until ${new Date(expiresAt).toISOString()})`, {
      details: { sessionId, owner: holder, expiresAt },
    });
  }
  return { fence: (current?.fence ?? 0) + 1, owner, expiresAt: now + options.ttlMs, ttlMs: options.ttlMs };
}

/** Throws `LEASE_LOST` unless `fence` is the session's current, unreleased lease. */
export function assertCurrentLease(sessionId: string, current: LeaseRecord | undefined, fence: number): asserts current is LeaseRecord & { owner: LeaseOwner } {
  if (!current || current.owner === null || current.fence !== fence) {
    const now = current?.owner ? `it is held by ${describeOwner(current.owner)} (fence ${current.fence})` : 'it was released or never taken';
    throw new AseError('LEASE_LOST', `the lease on session "${sessionId}" with fence ${fence} is no longer current: ${now}`, {
      details: { sessionId, fence, currentFence: current?.fence, owner: current?.owner ?? undefined },
    });
  }
}

export function toLease(sessionId: string, record: LeaseRecord & { owner: LeaseOwner }): Lease {
  return { sessionId, fence: record.fence, owner: { ...record.owner }, expiresAt: record.expiresAt, ttlMs: record.ttlMs };
}

export function describeOwner(owner: LeaseOwner): string {
  return `${owner.label ? `"${owner.label}" (` : ''}pid ${owner.pid} on ${owner.host}${owner.label ? ')' : ''}`;
}

export function assertLease(lease: Lease): void {
  if (typeof lease !== 'object' || lease === null || typeof lease.sessionId !== 'string' || !Number.isSafeInteger(lease.fence) || lease.fence < 1) {
    throw new AseError('INVALID_INPUT', 'not a lease: expected {sessionId, fence, owner, expiresAt, ttlMs} as acquire() returned it');
  }
}
