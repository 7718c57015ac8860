/**
 * What one owner process knows of the leases it holds in one FileStore dir: each lease's fence,
 * owner, ttl and the lease file's own expiry, and when (on the store's clock) that was last read
 * from the lease file or written to it. A renewal of a live lease trusts this instead of reading the
 * lease file while the knowledge is younger than the lease's ttl, so an idle session's renewal does
 * no file I/O of its own (issue 24: idle is free); the renewal after that reads the file again.
 *
 * Why that is safe: a lease file changes only through acquire, release, delete and a renewal of an
 * expired lease. In this process (for the same owner identity) each of those updates this record,
 * so only another process (or another host id) can change the lease behind it, and only by
 * `acquire({ force: true })` or `delete`: an unforced acquire takes a lease only after its expiry,
 * and the renewal checks the expiry it knows (heartbeat included) before it extends anything. What
 * catches those two: the holder's next state write (`save` checks the fence under the lock, always),
 * and otherwise the first renewal more than one ttl after the last check. Shared by every FileStore
 * instance of the process with the same dir and owner identity, like the owner heartbeat.
 */
import type { LeaseRecord } from './lease.js';
import type { LeaseOwner } from './session-store.js';

type HeldRecord = LeaseRecord & { owner: LeaseOwner };

interface Held {
  record: HeldRecord;
  /** Store clock when the record was last read from (or written to) the lease file. */
  checkedAt: number;
}

export class HeldLeases {
  readonly #leases = new Map<string, Held>();

  /**
   * The record of `sessionId` at `fence` when it was checked less than one ttl ago (and not, on a
   * clock that moved back, in the future); otherwise undefined: read the lease file.
   */
  trusted(sessionId: string, fence: number, now: number): HeldRecord | undefined {
    const held = this.#leases.get(sessionId);
    if (!held || held.record.fence !== fence) return undefined;
    const age = now - held.checkedAt;
    return age >= 0 && age < held.record.ttlMs ? held.record : undefined;
  }

  /** The lease file holds `record` as of `now` (just read or written by this owner). */
  checked(sessionId: string, record: HeldRecord, now: number): void {
    this.#leases.set(sessionId, { record: { ...record, owner: { ...record.owner } }, checkedAt: now });
  }

  /** The lease at `fence` (any fence when omitted) ended here: released, deleted or found lost. */
  forget(sessionId: string, fence?: number): void {
    const held = this.#leases.get(sessionId);
    if (held && (fence === undefined || held.record.fence === fence)) this.#leases.delete(sessionId);
  }
}

/** Per owner and dir (keyed by the owner's heartbeat file), process-wide. */
const registry = new Map<string, HeldLeases>();

export function heldLeases(key: string): HeldLeases {
  let held = registry.get(key);
  if (!held) registry.set(key, (held = new HeldLeases()));
  return held;
}
