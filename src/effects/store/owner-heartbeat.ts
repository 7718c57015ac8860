/**
 * The FileStore's per-process lease heartbeat: one file per owner process,
 * `<dir>/.owners/<owner>.json`, holding `{ leases: { [sessionId]: { fence, expiresAt } } }` for
 * every lease that process renews. Renewing a lease only records its new expiry here, and the
 * process writes the file once for every renewal that arrived within a batch window (a tenth of the
 * ttl, at most 3 s: one write every 3 s with the default 30 s ttl), instead of a locked write of each
 * session's lease file: an idle supervisor with 100 sessions costs one small file write every 3 s,
 * not ten locked writes a second.
 *
 * Whoever judges a lease (`acquire`) takes its expiry as the later of the lease file's own
 * `expiresAt` and the entry for the same fence in its owner's heartbeat. The heartbeat is written
 * only by its own process (so its temp file needs no unique name: writes are serialized here), with
 * rename (readers never see a torn file) but without fsync: it only
 * ever matters while that process lives, and a machine crash kills it (a lost or torn heartbeat
 * only makes its leases expire sooner, which is then right).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { AseError } from '../../errors.js';
import { errno } from '../fs-durable.js';

interface Extension {
  fence: number;
  expiresAt: number;
}

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The heartbeat folder of a store dir. */
export function heartbeatDir(storeDir: string): string {
  return path.join(storeDir, '.owners');
}

/**
 * The expiry a lease's owner's heartbeat gives `sessionId` at `fence`, or undefined (no heartbeat,
 * no entry for that fence, or an unreadable file: the lease file's own expiry is all there is).
 */
export async function readHeartbeatExpiry(file: string, sessionId: string, fence: number): Promise<number | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw new AseError('STORE_IO', `reading ${file} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  try {
    const entry = (JSON.parse(text) as { leases?: Record<string, Partial<Extension>> }).leases?.[sessionId];
    return entry && entry.fence === fence && typeof entry.expiresAt === 'number' ? entry.expiresAt : undefined;
  } catch {
    return undefined; // Torn only by a machine crash, which killed its writer: its leases expire on their own.
  }
}

/** One process's heartbeat file, shared by every FileStore instance of the process that writes it. */
export class OwnerHeartbeat {
  readonly file: string;
  /** What the next write holds. */
  readonly #wanted = new Map<string, Extension>();
  /** What the last completed write holds. */
  #written = new Map<string, Extension>();
  #next: Batch | undefined;
  /** The store clock as of the last renewal, to drop entries that expired (a lease its holder stopped renewing without a release). */
  #now = 0;
  #writing: Promise<void> = Promise.resolve();

  /** The one temp file a write goes through (only this process writes this heartbeat, one write at a time). */
  readonly #tmp: string;

  constructor(file: string) {
    this.file = file;
    this.#tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  }

  /** The expiry the heartbeat on disk gives this lease now (0 when none). */
  writtenExpiry(sessionId: string, fence: number): number {
    const entry = this.#written.get(sessionId);
    return entry && entry.fence === fence ? entry.expiresAt : 0;
  }

  /** Records a new expiry (asked at `now` on the store's clock) and resolves once a heartbeat holding it is on disk. */
  extend(sessionId: string, fence: number, expiresAt: number, now: number, batchMs: number): Promise<void> {
    this.#now = Math.max(this.#now, now);
    const entry = this.#wanted.get(sessionId);
    if (!entry || entry.fence !== fence || entry.expiresAt < expiresAt) this.#wanted.set(sessionId, { fence, expiresAt });
    return this.#schedule(batchMs);
  }

  /**
   * The lease at `fence` (any fence when omitted) ended here (released, deleted, lost): the next
   * write leaves it out; the last one removes the file. A stale fence never drops the entry of the
   * lease this process holds now.
   */
  forget(sessionId: string, fence?: number): void {
    const entry = this.#wanted.get(sessionId);
    if (!entry || (fence !== undefined && entry.fence !== fence)) return;
    this.#wanted.delete(sessionId);
    if (this.#wanted.size === 0) void this.#schedule(0).catch(() => undefined);
  }

  #schedule(batchMs: number): Promise<void> {
    if (this.#next) return this.#next.promise;
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const batch: Batch = { promise, resolve, reject };
    this.#next = batch;
    setTimeout(() => {
      // One write at a time: a batch starts after the previous write finished, with what is wanted then.
      this.#writing = this.#writing.then(async () => {
        this.#next = undefined;
        for (const [id, entry] of this.#wanted) if (entry.expiresAt <= this.#now) this.#wanted.delete(id);
        const snapshot = new Map(this.#wanted);
        try {
          await this.#write(snapshot);
          this.#written = snapshot;
          batch.resolve();
        } catch (error) {
          batch.reject(error);
        }
      });
    }, batchMs);
    return promise;
  }

  async #write(leases: Map<string, Extension>): Promise<void> {
    if (leases.size === 0) {
      // The folder too when no other process has a heartbeat in it (a data dir left as it was found).
      await fs.rm(this.file, { force: true }).catch(() => undefined);
      await fs.rmdir(path.dirname(this.file)).catch(() => undefined);
      return;
    }
    const body = JSON.stringify({ leases: Object.fromEntries(leases) });
    try {
      for (let tries = 0; ; tries++) {
        try {
          await fs.writeFile(this.#tmp, body);
          break;
        } catch (error) {
          // No folder yet, or another process's last lease just removed it: create it and try again.
          if (errno(error) !== 'ENOENT' || tries === 3) throw error;
          await fs.mkdir(path.dirname(this.file), { recursive: true });
        }
      }
      await fs.rename(this.#tmp, this.file);
    } catch (error) {
      await fs.rm(this.#tmp, { force: true }).catch(() => undefined);
      throw new AseError('STORE_IO', `writing the lease heartbeat ${this.file} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/** Per heartbeat file, process-wide, so two FileStore instances on one dir write one heartbeat. */
const heartbeats = new Map<string, OwnerHeartbeat>();

export function ownerHeartbeat(file: string): OwnerHeartbeat {
  let heartbeat = heartbeats.get(file);
  if (!heartbeat) heartbeats.set(file, (heartbeat = new OwnerHeartbeat(file)));
  return heartbeat;
}
