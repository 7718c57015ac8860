/**
 * The one door to PostgreSQL for the store and the journal: a `pg` Pool behind a small `Queryable`
 * (`query(text, values) -> rows`, `transaction(fn)`), so the rest never touches the driver and another
 * client could be put behind it.
 *
 * `pg` is an optional peer dependency: it is loaded on first use, and a missing driver is a clear
 * `STORE_IO` naming the package to install, not a crash at import.
 *
 * Statements are named prepared statements where the caller gives a name (the store's fixed set:
 * the fastest round trip measured, 0.06 ms p50, see docs/multi-host.md); the name carries the schema,
 * since a name is bound to one text per connection.
 */
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { AseError } from '../../errors.js';

/** A schema name the library will quote: lower-case letters, digits and `_`, not starting with a digit. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** How the store and journal reach PostgreSQL. */
export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database`; the store opens a pool of its own. */
  connectionString?: string;
  /** A pool of yours (`new pg.Pool(...)`); the store never ends it. */
  pool?: Pool;
  /** Pool size when the store opens its own pool. Default 10. */
  maxConnections?: number;
  /** The schema the tables live in, created if missing. Default `ase`. */
  schema?: string;
}

export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[], name?: string): Promise<R[]>;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** A pool-backed Queryable, opened lazily; `end()` closes a pool it opened (not a caller's). */
export class PostgresPool implements Queryable {
  readonly schema: string;
  readonly #options: PostgresConnectionOptions;
  #pool: Promise<Pool> | undefined;
  #ownsPool: boolean;

  constructor(options: PostgresConnectionOptions, who: string) {
    if (typeof options !== 'object' || options === null || (options.pool === undefined) === (options.connectionString === undefined)) {
      throw new AseError('INVALID_OPTIONS', `${who}: give exactly one of connectionString or pool`);
    }
    const schema = options.schema ?? 'ase';
    if (!SCHEMA_NAME.test(schema)) {
      throw new AseError('INVALID_OPTIONS', `${who}: schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (not starting with a digit), at most 63 characters`);
    }
    this.schema = schema;
    this.#options = options;
    this.#ownsPool = options.pool === undefined;
    if (options.pool) this.#pool = Promise.resolve(options.pool);
  }

  #open(): Promise<Pool> {
    this.#pool ??= (async () => {
      let driver: typeof import('pg');
      try {
        driver = await import('pg');
      } catch (error) {
        throw new AseError('STORE_IO', 'the PostgreSQL store needs the driver "pg": npm install pg', { cause: error });
      }
      const PoolClass = driver.default?.Pool ?? driver.Pool;
      const config: PoolConfig = { connectionString: this.#options.connectionString, max: this.#options.maxConnections ?? 10 };
      const pool = new PoolClass(config);
      // An idle client's error (the server restarted) must not crash the host; the next query reconnects.
      pool.on('error', () => {});
      return pool;
    })();
    return this.#pool;
  }

  /** A connection of its own (LISTEN needs one); the caller releases it. */
  async connect(): Promise<PoolClient> {
    return (await this.#open()).connect();
  }

  async query<R extends QueryResultRow = QueryResultRow>(text: string, values: unknown[] = [], name?: string): Promise<R[]> {
    const pool = await this.#open();
    const result = await pool.query<R>(name === undefined ? { text, values } : { name: `${this.schema}.${name}`, text, values });
    return result.rows;
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connect();
    const tx: Queryable = {
      query: async <R extends QueryResultRow>(text: string, values: unknown[] = [], name?: string) =>
        (await client.query<R>(name === undefined ? { text, values } : { name: `${this.schema}.${name}`, text, values })).rows,
      transaction: (inner) => inner(tx),
    };
    try {
      await client.query('BEGIN');
      const result = await fn(tx);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      // A connection whose rollback failed is in an unknown state: destroy it rather than reuse it.
      const broken = await client.query('ROLLBACK').then(() => false, () => true);
      client.release(broken);
      throw error;
    }
  }

  async end(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool && this.#ownsPool) await (await pool).end();
  }
}
