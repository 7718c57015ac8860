/**
 * The embedded default SessionStore: one JSON file per session, `<dir>/<sessionId>.json`, holding
 * `{ version, state }`, and its lease in `<dir>/<sessionId>.lease`. Writes go to a temp file that is
 * fsynced and renamed over the target, so a crash leaves either the old or the new file, never a
 * torn one.
 *
 * Every read-check-write (save, delete, acquire, renew, release) runs under a per-session lock, so
 * compare-and-set and the fence check are exact across processes on a local filesystem:
 * - in one process, operations on a session are serialized through a promise chain shared by every
 *   FileStore instance of the process;
 * - across processes, a holder creates its own uniquely named file in `<dir>/.locks/<sessionId>/`
 *   and then lists the folder: it holds the lock when no other live holder's file is there, and
 *   otherwise removes its file and tries again (of two that create at once, at least the later
 *   lister sees the other, so never both hold it). A file names its holder (host, boot, pid,
 *   process start time): one left by a dead process on this host is removed at once (a reused pid is
 *   told apart by its start time); one from another host counts until it is `staleLockMs` old.
 *   Holders never remove another's file unless its process is dead, so breaking a dead lock cannot
 *   break a live one.
 * Network filesystems without coherent directory listings are not supported for several writers.
 *
 * Liveness of a lease: the lease file's `expiresAt` is written by acquire and by a renewal of an
 * already expired lease. A renewal of a live lease writes nothing per session: it checks the fence in
 * the lease file (read without the lock: files are only ever replaced whole; skipped when this
 * process checked it less than one ttl ago, see held-leases.ts) and records the new
 * expiry in its process's heartbeat, `<dir>/.owners/<owner>.json` (named like the owner's lock files;
 * one write, batched over a tenth of the ttl (at most 3 s), for every lease the process renewed meanwhile: see
 * owner-heartbeat.ts). A lease's expiry, wherever it is judged (acquire), is the later of the lease
 * file's `expiresAt` and its owner's heartbeat entry for the same fence, on the store's clock, the
 * same rule for every host sharing the dir. So a stalled process (SIGSTOP) writes no heartbeat and
 * loses its leases after the ttl; a dead one on this host loses them at once (pid liveness, as
 * before); and a renewal that lands only after its lease had expired is redone under the lock in the
 * lease file, so it never succeeds after another host took the session.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PersistedSessionSchema, type PersistedSession, type VersionedSession } from '../../events/session-state.js';
import { AseError } from '../../errors.js';
import { assertExpectedVersion, assertStateOf } from './memory-store.js';
import { assertAcquireOptions, assertCurrentLease, assertLease, takeLease, toLease, type LeaseRecord } from './lease.js';
import { heldLeases, type HeldLeases } from './held-leases.js';
import { oneAtATime } from '../one-at-a-time.js';
import { heartbeatDir, ownerHeartbeat, readHeartbeatExpiry, type OwnerHeartbeat } from './owner-heartbeat.js';
import { currentProcess, liveness, type ProcessIdentity } from './process-identity.js';
import type { AcquireOptions, Lease, LeaseOwner, SaveResult, SessionStore } from './session-store.js';
import { errno, syncDir } from '../fs-durable.js';

export interface FileStoreOptions {
  dir: string;
  /** How long an operation waits for another process's lock before failing with STORE_IO (default 2000 ms). */
  lockTimeoutMs?: number;
  /**
   * A lock of a process on another host (whose liveness cannot be checked) older than this is taken
   * to be left by a dead process and ignored (default 30000 ms). Locks of this host's processes are
   * judged by their pid and start time instead, at once.
   */
  staleLockMs?: number;
  /** This host's name in locks and leases (default `os.hostname()`): set it when containers share a name but not a pid namespace. */
  hostId?: string;
  /** The lease clock (epoch ms). Default `Date.now`. */
  now?: () => number;
}

/**
 * What a session id may be, the one rule every layer checks: 1-128 of `[A-Za-z0-9._-]`, not starting
 * with `.`. Ids become file names (`<id>.json`): `.` and `..` would name directories, and `.hidden`
 * or `....` would be hidden files that listings skip (and the store's own temp files start with `.`).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Session ids become file names, so anything that could leave `dir` or hide in it is rejected. */
export function assertSessionId(sessionId: string): void {
  if (!isValidSessionId(sessionId)) {
    throw new AseError('INVALID_INPUT', `invalid session id ${JSON.stringify(sessionId)}: expected 1-128 of [A-Za-z0-9._-], not starting with '.'`);
  }
}

export function isValidSessionId(sessionId: string): boolean {
  return typeof sessionId === 'string' && SESSION_ID_PATTERN.test(sessionId);
}

/** Per session file, process-wide, so two FileStore instances on one dir also serialize. */
const serialize = oneAtATime();

/** What is on disk: `state` is undefined when the file has a readable version but a bad state. */
interface OnDisk {
  version: number;
  state: PersistedSession | undefined;
}

const hash8 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * How a lock file names its holder: `<host hash>.<boot hash>.<pid>.<start time or 0>.` (a random
 * suffix follows). Exported for tests that plant the lock a crashed process would leave.
 */
export function lockHolderPrefix(holder: ProcessIdentity): string {
  return `${hash8(holder.host)}.${hash8(holder.bootId)}.${holder.pid}.${holder.startTime || '0'}.`;
}

export class FileStore implements SessionStore {
  readonly dir: string;
  readonly #lockTimeoutMs: number;
  readonly #staleLockMs: number;
  readonly #now: () => number;
  readonly #me: ProcessIdentity;
  /** Lock file names start with `<host hash>.<boot hash>.<pid>.<start time>.`, so a holder is judged by its name. */
  readonly #lockPrefix: string;
  /** This process's lease heartbeat in this dir (`owner-heartbeat.ts`). */
  readonly #heartbeat: OwnerHeartbeat;
  /** What this process knows of the leases it holds in this dir (`held-leases.ts`). */
  readonly #held: HeldLeases;

  constructor(options: FileStoreOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new AseError('INVALID_OPTIONS', 'FileStore: dir must be a non-empty string');
    }
    if (options.hostId !== undefined && (typeof options.hostId !== 'string' || options.hostId === '')) {
      throw new AseError('INVALID_OPTIONS', 'FileStore: hostId must be a non-empty string');
    }
    this.dir = path.resolve(options.dir);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 2000;
    this.#staleLockMs = options.staleLockMs ?? 30_000;
    this.#now = options.now ?? Date.now;
    this.#me = currentProcess(options.hostId ?? os.hostname());
    this.#lockPrefix = lockHolderPrefix(this.#me);
    this.#heartbeat = ownerHeartbeat(this.#heartbeatFile(this.#me));
    this.#held = heldLeases(this.#heartbeat.file);
  }

  async load(sessionId: string): Promise<VersionedSession | undefined> {
    assertSessionId(sessionId);
    const current = await this.#read(sessionId);
    if (!current) return undefined;
    if (!current.state) throw new AseError('STORE_CORRUPT', `${this.#file(sessionId)}: state does not match the session schema`);
    if (current.state.sessionId !== sessionId) {
      // A state file copied or renamed from another session: adopting it would take over that
      // session's agent (its resume token) and its generation.
      throw new AseError('STORE_CORRUPT', `${this.#file(sessionId)}: holds session "${current.state.sessionId}", not "${sessionId}"`);
    }
    return { version: current.version, state: current.state };
  }

  async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    assertSessionId(sessionId);
    assertExpectedVersion(expectedVersion);
    // Refuse to write what load would later reject as corrupt.
    const parsed = PersistedSessionSchema.safeParse(state);
    if (!parsed.success) {
      throw new AseError('INVALID_INPUT', `FileStore.save(${sessionId}): state does not match the session schema: ${parsed.error.message}`);
    }
    assertStateOf(sessionId, state);
    const body = JSON.stringify({ version: expectedVersion + 1, state });
    return this.#locked(sessionId, async (): Promise<SaveResult> => {
      // Both files are read at once (a write is on the path of every message sent: one wait, not
      // two), and judged in the order they always were: the lease first.
      const [leaseRead, currentRead] = await Promise.allSettled([fence === undefined ? undefined : this.#readLease(sessionId), this.#read(sessionId)]);
      if (fence !== undefined) {
        const lease = settledValue(leaseRead);
        this.#assertCurrent(sessionId, lease, fence);
        // Every fenced write checks the lease: the next renewal need not read it again.
        this.#checked(sessionId, lease);
      }
      // A file with a readable version but a bad state can still be overwritten by a writer that
      // names that version: that is how a caller repairs it.
      const current = settledValue(currentRead);
      const currentVersion = current?.version ?? 0;
      if (currentVersion !== expectedVersion) {
        return { ok: false, version: currentVersion, ...(current?.state && { stored: current.state }) };
      }
      await this.#writeAtomic(this.#file(sessionId), body);
      return { ok: true, version: expectedVersion + 1 };
    });
  }

  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (error) {
      if (errno(error) === 'ENOENT') return [];
      throw new AseError('STORE_IO', `listing ${this.dir} failed: ${message(error)}`, { cause: error });
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter(isValidSessionId)
      .sort();
  }

  async delete(sessionId: string): Promise<void> {
    assertSessionId(sessionId);
    try {
      await fs.stat(this.dir);
    } catch (error) {
      if (errno(error) === 'ENOENT') return; // Nothing was ever saved here.
      throw new AseError('STORE_IO', `reading ${this.dir} failed: ${message(error)}`, { cause: error });
    }
    await this.#locked(sessionId, async () => {
      const lease = await this.#readLease(sessionId);
      // The lease file stays (released) so the fence counter never starts over.
      if (lease?.owner) await this.#writeLease(sessionId, { ...lease, owner: null });
      this.#heartbeat.forget(sessionId);
      this.#held.forget(sessionId);
      await this.#io(`deleting ${this.#file(sessionId)}`, () => fs.rm(this.#file(sessionId), { force: true }));
      await syncDir(this.dir);
    });
    // Its lock folder too, unless someone is locking it right now (then it is not empty).
    await fs.rmdir(path.join(this.dir, '.locks', sessionId)).catch(() => undefined);
  }

  async acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    assertSessionId(sessionId);
    assertAcquireOptions(options);
    const { host, pid, startTime, bootId } = this.#me;
    const owner: LeaseOwner = {
      host,
      pid,
      ...(startTime && { startTime }),
      ...(bootId && { bootId }),
      ...(options.label !== undefined && { label: options.label }),
    };
    return this.#locked(sessionId, async () => {
      // At once, and both finished before the lock is let go: the temp files are judged under it.
      const [, leaseRead] = await Promise.allSettled([this.#removeLeftoverTemps(sessionId), this.#readLease(sessionId)]);
      const current = settledValue(leaseRead);
      const now = this.#now();
      // The holder's heartbeat matters only when the lease file alone says it expired.
      const extendedUntil =
        current?.owner && !options.force && current.expiresAt <= now
          ? await readHeartbeatExpiry(this.#heartbeatFile(current.owner), sessionId, current.fence)
          : undefined;
      const record = { ...takeLease(sessionId, current, owner, options, now, (o) => liveness(o, this.#me), extendedUntil), owner };
      await this.#writeLease(sessionId, record);
      this.#held.checked(sessionId, record, now);
      return toLease(sessionId, record);
    });
  }

  /**
   * A live lease of this process is extended through the owner heartbeat, and nothing is written per
   * session. Its fence is checked in the lease file (read without the lock: it is only ever replaced
   * whole) unless this process checked it less than one ttl ago (`held-leases.ts`: a fenced write or
   * the previous renewal did): so most renewals of an idle session read no file. A lease that already
   * expired, or whose heartbeat could not land before it would have, is renewed under the session's
   * lock in its own file, so a renewal never succeeds after another host took it unforced.
   */
  async renew(lease: Lease): Promise<Lease> {
    assertLease(lease);
    assertSessionId(lease.sessionId);
    const { sessionId, fence } = lease;
    let current = this.#held.trusted(sessionId, fence, this.#now());
    if (!current) {
      const read = await this.#readLease(sessionId);
      this.#assertCurrent(sessionId, read, fence);
      this.#checked(sessionId, read);
      current = read;
    }
    if (this.#isMe(current.owner)) {
      const now = this.#now();
      const liveUntil = Math.max(current.expiresAt, this.#heartbeat.writtenExpiry(sessionId, fence));
      if (liveUntil > now) {
        const expiresAt = now + current.ttlMs;
        // A heartbeat that could not be written (its folder unwritable, the disk full) extends
        // nothing: the renewal is then done in the lease file, under the lock, as below.
        const landed = await this.#heartbeat.extend(sessionId, fence, expiresAt, now, heartbeatBatchMs(current.ttlMs)).then(
          () => true,
          () => false,
        );
        // Still live when the heartbeat landed: nobody could have taken the lease in between.
        if (landed && this.#now() < liveUntil) return toLease(sessionId, { ...current, expiresAt });
      }
    }
    return this.#locked(sessionId, async () => {
      const locked = await this.#readLease(sessionId);
      this.#assertCurrent(sessionId, locked, fence);
      const record = { ...locked, expiresAt: this.#now() + locked.ttlMs };
      // No directory fsync: a renewal changes only the expiry. A rename lost to a machine crash leaves
      // the old record (same fence, an earlier expiry), and its owner died with the machine anyway.
      await this.#writeLease(sessionId, record, { syncDir: false });
      this.#checked(sessionId, record);
      return toLease(sessionId, record);
    });
  }

  /** `assertCurrentLease`, and a lost lease leaves this process's heartbeat and what it knows. */
  #assertCurrent(sessionId: string, current: LeaseRecord | undefined, fence: number): asserts current is LeaseRecord & { owner: LeaseOwner } {
    try {
      assertCurrentLease(sessionId, current, fence);
    } catch (error) {
      this.#heartbeat.forget(sessionId, fence);
      this.#held.forget(sessionId, fence);
      throw error;
    }
  }

  /** The lease file holds `record` now: remembered when this process is its owner. */
  #checked(sessionId: string, record: LeaseRecord & { owner: LeaseOwner }): void {
    if (this.#isMe(record.owner)) this.#held.checked(sessionId, record, this.#now());
  }

  async release(lease: Lease): Promise<void> {
    assertLease(lease);
    assertSessionId(lease.sessionId);
    await this.#locked(lease.sessionId, async () => {
      const current = await this.#readLease(lease.sessionId);
      if (current && current.owner !== null && current.fence === lease.fence) {
        await this.#writeLease(lease.sessionId, { ...current, owner: null });
        this.#heartbeat.forget(lease.sessionId, lease.fence);
        this.#held.forget(lease.sessionId, lease.fence);
      }
    });
  }

  #file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.json`);
  }

  /** `owner` is this process (as this store names it): the owner whose heartbeat this store writes. */
  #isMe(owner: LeaseOwner): boolean {
    const me = this.#me;
    return owner.pid === me.pid && owner.host === me.host && (owner.startTime ?? '') === me.startTime && (owner.bootId ?? '') === me.bootId;
  }

  /** Where the process `owner` names keeps its heartbeat in this dir: named like its lock files. */
  #heartbeatFile(owner: LeaseOwner | ProcessIdentity): string {
    const identity = { host: owner.host, pid: owner.pid, startTime: owner.startTime ?? '', bootId: owner.bootId ?? '' };
    return path.join(heartbeatDir(this.dir), `${lockHolderPrefix(identity)}json`);
  }

  #leaseFile(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.lease`);
  }

  /** Serialized in this process, then under the cross-process lock. */
  #locked<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    // No mkdir of `dir` here (it was one more syscall on every renewal): taking the lock creates
    // `<dir>/.locks/<id>` recursively when it is missing, and `dir` with it.
    return serialize(this.#file(sessionId), () => this.#withLock(sessionId, task));
  }

  async #read(sessionId: string): Promise<OnDisk | undefined> {
    const file = this.#file(sessionId);
    const data = await this.#readJson(file);
    if (data === undefined) return undefined;
    const { version, state } = data as { version?: unknown; state?: unknown };
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
      throw new AseError('STORE_CORRUPT', `${file}: missing or invalid version`);
    }
    const parsed = PersistedSessionSchema.safeParse(state);
    return { version, state: parsed.success ? parsed.data : undefined };
  }

  async #readLease(sessionId: string): Promise<LeaseRecord | undefined> {
    const file = this.#leaseFile(sessionId);
    const data = (await this.#readJson(file)) as Partial<LeaseRecord> | undefined;
    if (data === undefined) return undefined;
    const owner = data.owner as LeaseOwner | null | undefined;
    if (
      !Number.isSafeInteger(data.fence) ||
      typeof data.expiresAt !== 'number' ||
      typeof data.ttlMs !== 'number' ||
      (owner !== null && (typeof owner !== 'object' || owner === undefined || typeof owner.host !== 'string' || !Number.isSafeInteger(owner.pid)))
    ) {
      throw new AseError('STORE_CORRUPT', `${file}: not a lease record`);
    }
    return { fence: data.fence!, owner, expiresAt: data.expiresAt, ttlMs: data.ttlMs };
  }

  async #writeLease(sessionId: string, record: LeaseRecord, options?: { syncDir: boolean }): Promise<void> {
    await this.#writeAtomic(this.#leaseFile(sessionId), JSON.stringify(record), options);
  }

  async #readJson(file: string): Promise<unknown> {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if (errno(error) === 'ENOENT') return undefined;
      throw new AseError('STORE_IO', `reading ${file} failed: ${message(error)}`, { cause: error });
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new AseError('STORE_CORRUPT', `${file}: not valid JSON`, { cause: error });
    }
    if (typeof data !== 'object' || data === null) throw new AseError('STORE_CORRUPT', `${file}: not a JSON object`);
    return data;
  }

  /**
   * Removes the temp files of a write that never reached its rename (the host was killed between
   * `open` and `rename`). Called under the session's lock, which every write of the session holds, so
   * no temp file of this session can belong to a write still running, in this process or another.
   */
  async #removeLeftoverTemps(sessionId: string): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const leftover = new RegExp(`^\\.${sessionId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(json|lease)\\.\\d+\\.[0-9a-f]{12}\\.tmp$`);
    for (const name of names) {
      if (leftover.test(name)) await fs.rm(path.join(this.dir, name), { force: true }).catch(() => undefined);
    }
  }

  /** Temp file, fsync, rename: a crash leaves the old file or the new one (and at worst a temp file the next `acquire` removes). */
  async #writeAtomic(target: string, body: string, options: { syncDir: boolean } = { syncDir: true }): Promise<void> {
    const tmp = path.join(this.dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    let handle: FileHandle | undefined;
    try {
      handle = await fs.open(tmp, 'wx');
      await handle.writeFile(body, 'utf8');
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fs.rename(tmp, target);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw new AseError('STORE_IO', `writing ${target} failed: ${message(error)}`, { cause: error });
    }
    if (options.syncDir) await syncDir(this.dir);
  }

  async #withLock<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const lockDir = path.join(this.dir, '.locks', sessionId);
    const mine = `${this.#lockPrefix}${randomBytes(6).toString('hex')}`;
    const minePath = path.join(lockDir, mine);
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      await this.#createLockFile(lockDir, minePath);
      let contested: boolean;
      try {
        contested = await this.#otherLiveHolder(lockDir, mine);
      } catch (error) {
        await fs.rm(minePath, { force: true }).catch(() => undefined);
        throw error;
      }
      if (!contested) break;
      await fs.rm(minePath, { force: true }).catch(() => undefined);
      if (Date.now() >= deadline) {
        throw new AseError('STORE_IO', `timed out after ${this.#lockTimeoutMs} ms waiting for the lock on session "${sessionId}" (${lockDir}; held by another process?)`);
      }
      // Randomized, growing back-off: two contenders that saw each other do not collide forever.
      await sleep(1 + Math.random() * Math.min(25, 2 + attempt * 3));
    }
    try {
      return await task();
    } finally {
      await fs.rm(minePath, { force: true }).catch(() => undefined);
    }
  }

  async #createLockFile(lockDir: string, file: string): Promise<void> {
    for (let tries = 0; ; tries++) {
      try {
        await (await fs.open(file, 'wx')).close();
        return;
      } catch (error) {
        if (errno(error) === 'ENOENT' && tries === 0) {
          await this.#io(`creating ${lockDir}`, () => fs.mkdir(lockDir, { recursive: true }));
          continue;
        }
        throw new AseError('STORE_IO', `locking ${file} failed: ${message(error)}`, { cause: error });
      }
    }
  }

  /** True when another holder that may be alive has a file in the lock folder; dead holders' files are removed. */
  async #otherLiveHolder(lockDir: string, mine: string): Promise<boolean> {
    let names: string[];
    try {
      names = await fs.readdir(lockDir);
    } catch (error) {
      throw new AseError('STORE_IO', `listing ${lockDir} failed: ${message(error)}`, { cause: error });
    }
    let contested = false;
    for (const name of names) {
      if (name === mine) continue;
      if (await this.#holderIsDead(lockDir, name)) await fs.rm(path.join(lockDir, name), { force: true }).catch(() => undefined);
      else contested = true;
    }
    return contested;
  }

  async #holderIsDead(lockDir: string, name: string): Promise<boolean> {
    const [hostHash, bootHash, pid, startTime] = name.split('.');
    if (hostHash === hash8(this.#me.host)) {
      if (bootHash !== hash8(this.#me.bootId)) return true; // From before a reboot.
      return liveness({ host: this.#me.host, pid: Number(pid), startTime: startTime === '0' ? undefined : startTime }, this.#me) === 'dead';
    }
    // Another host's (or an unknown) file: only its age can tell.
    try {
      const stat = await fs.stat(path.join(lockDir, name));
      return Date.now() - stat.mtimeMs >= this.#staleLockMs;
    } catch (error) {
      if (errno(error) === 'ENOENT') return true;
      throw new AseError('STORE_IO', `inspecting ${lockDir}/${name} failed: ${message(error)}`, { cause: error });
    }
  }

  async #io<T>(what: string, task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } catch (error) {
      throw new AseError('STORE_IO', `${what} failed: ${message(error)}`, { cause: error });
    }
  }
}

/**
 * How long a renewal waits for others to share its heartbeat write: a tenth of the ttl, at most 3 s
 * (one write every 3 s at the default 30 s ttl, whatever the number of sessions). The runtime renews
 * every third of the ttl, so the write lands with more than half the ttl to spare; a renewal asked
 * late (after a stall) whose write does not land before the lease would have expired is redone
 * under the lock instead (`renew`).
 */
function heartbeatBatchMs(ttlMs: number): number {
  return Math.min(3000, Math.floor(ttlMs / 10));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The value of a settled promise, or its reason thrown. */
function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}
