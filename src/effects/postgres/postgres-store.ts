/**
 * A SessionStore in PostgreSQL, shared by every host that points at the same database.
 *
 * One row per session in `ase_session` (compare-and-set on `version`), one lease row per session in
 * `ase_lease` (its `fence` only grows, its expiry is on the database clock). Every write that must be
 * fenced checks the fence in the same statement that writes, and that statement locks the lease row,
 * so a takeover (itself an UPDATE of the row) and a write by the old owner can never interleave: the
 * write either commits before the takeover or sees the new fence and writes nothing (`LEASE_LOST`).
 * See docs/multi-host.md for the statements and why they are shaped this way.
 */
import os from 'node:os';
import type { PersistedSession, VersionedSession } from '../../events/session-state.js';
import { PersistedSessionSchema } from '../../events/session-state.js';
import { AseError, isAseError } from '../../errors.js';
import { assertAcquireOptions, assertCurrentLease, assertLease, takeLease, toLease, type LeaseRecord } from '../store/lease.js';
import { assertExpectedVersion, assertStateOf } from '../store/memory-store.js';
import { currentProcess, liveness, type ProcessIdentity } from '../store/process-identity.js';
import type { AcquireOptions, Lease, LeaseOwner, SaveResult, SessionOwnerInfo, SessionStore } from '../store/session-store.js';
import { PostgresPool, type PostgresConnectionOptions } from './pool.js';
import { migrate, quoteSchema } from './schema.js';

export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** This host's name in leases (default `os.hostname()`); an owner on the same host whose process is dead is taken over at once. */
  hostId?: string;
  /**
   * For tests only: the lease clock in epoch ms instead of the database's. In production leave it
   * unset: expiry must be judged on one clock for every host, the database's.
   */
  now?: () => number;
}

interface LeaseRow {
  fence: string;
  owner: string | null;
  expires_at: string;
  ttl_ms: number;
}

/** The epoch ms of a timestamptz, exact to the millisecond. */
/** A timestamp column as epoch milliseconds, rounded in SQL: every reader of a lease's expiry gets the same number (pg's Date drops the microseconds instead). */
export const EPOCH_MS = (column: string): string => `round(extract(epoch FROM ${column}) * 1000)::bigint`;
/** The lease clock: the test clock when one is given ($n not null), else the database's. */
const NOW = (param: string): string => `coalesce(${param}::timestamptz, clock_timestamp())`;

export class PostgresStore implements SessionStore {
  readonly #db: PostgresPool;
  readonly #me: ProcessIdentity;
  readonly #now: (() => number) | undefined;
  readonly #ready: Promise<void>;
  readonly #sql: ReturnType<typeof statements>;

  constructor(options: PostgresStoreOptions) {
    this.#db = new PostgresPool(options, 'PostgresStore');
    this.#me = currentProcess(options.hostId ?? os.hostname());
    this.#now = options.now;
    this.#sql = statements(quoteSchema(this.#db.schema));
    this.#ready = migrate(this.#db, this.#db.schema);
    // Reported by the first call that awaits it; never an unhandled rejection on its own.
    this.#ready.catch(() => {});
  }

  /** The schema the tables live in. */
  get schema(): string {
    return this.#db.schema;
  }

  async #query<R extends object>(name: keyof ReturnType<typeof statements>, values: unknown[]): Promise<R[]> {
    try {
      await this.#ready;
      return (await this.#db.query(this.#sql[name], values, `store.${name}`)) as R[];
    } catch (error) {
      if (isAseError(error)) throw error;
      throw new AseError('STORE_IO', `PostgresStore ${name}: ${(error as Error).message}`, { cause: error });
    }
  }

  #clock(): Date | null {
    return this.#now ? new Date(this.#now()) : null;
  }

  async load(sessionId: string): Promise<VersionedSession | undefined> {
    const [row] = await this.#query<{ version: string; state: string }>('load', [sessionId]);
    if (!row) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(row.state);
    } catch {
      throw new AseError('STORE_CORRUPT', `PostgresStore: the state of session "${sessionId}" is not JSON`);
    }
    const parsed = PersistedSessionSchema.safeParse(data);
    if (!parsed.success) throw new AseError('STORE_CORRUPT', `PostgresStore: the state of session "${sessionId}" does not match the session schema`);
    if (parsed.data.sessionId !== sessionId) {
      throw new AseError('STORE_CORRUPT', `PostgresStore: row "${sessionId}" holds session "${parsed.data.sessionId}"`);
    }
    return { version: Number(row.version), state: parsed.data };
  }

  async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    assertExpectedVersion(expectedVersion);
    assertStateOf(sessionId, state);
    const parsed = PersistedSessionSchema.safeParse(state);
    if (!parsed.success) throw new AseError('INVALID_INPUT', `PostgresStore.save(${sessionId}): state does not match the session schema: ${parsed.error.message}`);
    if (fence !== undefined && (!Number.isSafeInteger(fence) || fence < 1)) throw new AseError('INVALID_INPUT', `fence must be a positive integer, got ${String(fence)}`);
    const [row] = await this.#query<{ fenced: boolean; version: string | null }>('save', [sessionId, JSON.stringify(state), expectedVersion, fence ?? null]);
    if (!row!.fenced) {
      assertCurrentLease(sessionId, await this.#readLease(sessionId), fence!);
      // The lease was current again by the time we looked (a new acquire with the same fence cannot happen): report it lost all the same.
      throw new AseError('LEASE_LOST', `the lease on session "${sessionId}" with fence ${fence} was not current when the state was written`, { details: { sessionId, fence } });
    }
    if (row!.version !== null) return { ok: true, version: Number(row!.version) };
    const stored = await this.load(sessionId).catch(() => undefined);
    return { ok: false, version: stored?.version ?? 0, ...(stored && { stored: stored.state }) };
  }

  async list(): Promise<string[]> {
    return (await this.#query<{ session_id: string }>('list', [])).map((r) => r.session_id);
  }

  async delete(sessionId: string): Promise<void> {
    await this.#query('delete', [sessionId]);
  }

  async acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    assertAcquireOptions(options);
    const owner: LeaseOwner = {
      host: this.#me.host,
      pid: this.#me.pid,
      ...(this.#me.startTime && { startTime: this.#me.startTime }),
      ...(this.#me.bootId && { bootId: this.#me.bootId }),
      ...(options.label !== undefined && { label: options.label }),
    };
    // A holder on this host whose process is dead is taken at once, as the FileStore does; only that
    // very lease (its fence) is taken, so a live owner that acquired meanwhile is never overrun.
    const current = await this.#readLease(sessionId);
    const deadFence = current?.owner && liveness(current.owner, this.#me) === 'dead' ? current.fence : null;
    const [row] = await this.#query<{ fence: string; expires_at: string }>('acquire', [
      sessionId,
      JSON.stringify(owner),
      owner.host,
      options.ttlMs,
      options.force === true,
      deadFence,
      this.#clock(),
    ]);
    if (row) return { sessionId, fence: Number(row.fence), owner, expiresAt: Number(row.expires_at), ttlMs: options.ttlMs };
    // Refused: build SESSION_OWNED from what holds it now (takeLease throws it with the details).
    const holder = await this.#readLease(sessionId);
    takeLease(sessionId, holder, owner, { ...options, force: false }, this.#now?.() ?? Date.now(), () => 'alive');
    // It was released or expired between the statement and the read: try again.
    return this.acquire(sessionId, options);
  }

  async renew(lease: Lease): Promise<Lease> {
    assertLease(lease);
    const [row] = await this.#query<LeaseRow>('renew', [lease.sessionId, lease.fence, this.#clock()]);
    if (!row) {
      assertCurrentLease(lease.sessionId, await this.#readLease(lease.sessionId), lease.fence);
      throw new AseError('LEASE_LOST', `the lease on session "${lease.sessionId}" with fence ${lease.fence} is no longer current`, { details: { sessionId: lease.sessionId, fence: lease.fence } });
    }
    return toLease(lease.sessionId, toRecord(row) as LeaseRecord & { owner: LeaseOwner });
  }

  async release(lease: Lease): Promise<void> {
    assertLease(lease);
    await this.#query('release', [lease.sessionId, lease.fence]);
  }

  async owners(sessionIds: string[]): Promise<Map<string, SessionOwnerInfo>> {
    const rows = await this.#query<{ session_id: string; owner: string; expires_at: string; live: boolean }>('owners', [sessionIds]);
    const out = new Map<string, SessionOwnerInfo>();
    for (const row of rows) {
      const owner = toRecord({ fence: '0', owner: row.owner, expires_at: row.expires_at, ttl_ms: 0 }).owner!;
      // A process of this host that is gone holds nothing: acquire takes its lease at once, so the
      // session is as free as a released one (a restarted server reopens its own sessions).
      if (liveness(owner, this.#me) === 'dead') continue;
      out.set(row.session_id, { host: owner.host, pid: owner.pid, ...(owner.label !== undefined && { label: owner.label }), expiresAt: Number(row.expires_at), live: row.live });
    }
    return out;
  }

  /** Closes the pool the store opened (a pool passed in is the caller's to end). */
  async close(): Promise<void> {
    await this.#ready.catch(() => {});
    await this.#db.end();
  }

  async #readLease(sessionId: string): Promise<LeaseRecord | undefined> {
    const [row] = await this.#query<LeaseRow>('readLease', [sessionId]);
    return row && toRecord(row);
  }
}

function toRecord(row: LeaseRow): LeaseRecord {
  let owner: LeaseOwner | null = null;
  if (row.owner !== null) {
    try {
      owner = JSON.parse(row.owner) as LeaseOwner;
    } catch {
      throw new AseError('STORE_CORRUPT', 'PostgresStore: a lease owner is not JSON');
    }
  }
  return { fence: Number(row.fence), owner, expiresAt: Number(row.expires_at), ttlMs: row.ttl_ms };
}

/** The store's fixed statements, for one schema. */
function statements(s: string) {
  return {
    load: `SELECT version, state FROM ${s}.ase_session WHERE session_id = $1`,
    list: `SELECT session_id FROM ${s}.ase_session ORDER BY session_id`,
    readLease: `SELECT fence, owner, ${EPOCH_MS('expires_at')} AS expires_at, ttl_ms FROM ${s}.ase_lease WHERE session_id = $1`,
    // One statement: the fence check (a share lock on the lease row, so a takeover waits for us or we
    // see its fence) and the compare-and-set. fenced=false: lease lost; version null: conflict.
    save: `
      WITH lease AS (SELECT fence FROM ${s}.ase_lease WHERE session_id = $1 AND owner IS NOT NULL FOR SHARE),
      gate AS (SELECT $4::bigint IS NULL OR EXISTS (SELECT 1 FROM lease WHERE fence = $4::bigint) AS fenced),
      upd AS (UPDATE ${s}.ase_session SET version = version + 1, state = $2::text, updated_at = clock_timestamp()
               WHERE session_id = $1 AND version = $3::bigint AND $3::bigint > 0 AND (SELECT fenced FROM gate)
              RETURNING version),
      ins AS (INSERT INTO ${s}.ase_session (session_id, version, state)
              SELECT $1, 1, $2::text WHERE $3::bigint = 0 AND (SELECT fenced FROM gate)
              ON CONFLICT (session_id) DO NOTHING RETURNING version)
      SELECT (SELECT fenced FROM gate) AS fenced, coalesce((SELECT version FROM upd), (SELECT version FROM ins)) AS version`,
    delete: `
      WITH gone AS (DELETE FROM ${s}.ase_session WHERE session_id = $1)
      UPDATE ${s}.ase_lease SET owner = NULL, host_id = NULL WHERE session_id = $1`,
    // The next fence, only when the lease is free, expired, forced, or held by the dead owner we saw.
    acquire: `
      INSERT INTO ${s}.ase_lease AS l (session_id, fence, owner, host_id, expires_at, ttl_ms)
      VALUES ($1, 1, $2, $3, ${NOW('$7')} + make_interval(secs => $4::int / 1000.0), $4)
      ON CONFLICT (session_id) DO UPDATE
         SET fence = l.fence + 1, owner = EXCLUDED.owner, host_id = EXCLUDED.host_id,
             expires_at = EXCLUDED.expires_at, ttl_ms = EXCLUDED.ttl_ms
       WHERE l.owner IS NULL OR l.expires_at <= ${NOW('$7')} OR $5::boolean OR l.fence = $6::bigint
      RETURNING fence, ${EPOCH_MS('expires_at')} AS expires_at`,
    renew: `
      UPDATE ${s}.ase_lease SET expires_at = ${NOW('$3')} + make_interval(secs => ttl_ms / 1000.0)
       WHERE session_id = $1 AND fence = $2 AND owner IS NOT NULL
      RETURNING fence, owner, ${EPOCH_MS('expires_at')} AS expires_at, ttl_ms`,
    owners: `
      SELECT session_id, owner, ${EPOCH_MS('expires_at')} AS expires_at, expires_at > clock_timestamp() AS live
        FROM ${s}.ase_lease WHERE session_id = ANY($1::text[]) AND owner IS NOT NULL`,
    release: `UPDATE ${s}.ase_lease SET owner = NULL, host_id = NULL WHERE session_id = $1 AND fence = $2 AND owner IS NOT NULL`,
  };
}
