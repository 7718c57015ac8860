/**
 * The Postgres schema of the store and journal, created and migrated by the library itself.
 *
 * Migrations are numbered and applied in order inside one transaction that holds a transaction-level
 * advisory lock on the schema's name, so two hosts starting at once never race: the second waits, then
 * finds the version already current. The version lives in `ase_meta`.
 *
 * JSON is kept as `text`, not `jsonb`: byte for byte what the library wrote (jsonb would reorder keys
 * and refuses `\u0000` inside strings, which an agent's output may hold), and the server never needs
 * to look inside an entry.
 */
import type { Queryable } from './pool.js';

/** Each entry moves the schema from version `index` to `index + 1`; never edit one that shipped. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.ase_lease (
      session_id text PRIMARY KEY,
      fence      bigint NOT NULL,          -- +1 per acquire, never reused; 0 = never leased
      owner      text,                     -- LeaseOwner as JSON; NULL = released
      host_id    text,                     -- the owner's host (routing key); NULL = released
      expires_at timestamptz NOT NULL,     -- on the database clock
      ttl_ms     integer NOT NULL,
      last_seq   bigint NOT NULL DEFAULT 0 -- the journal's head
    );
    CREATE TABLE ${s}.ase_session (
      session_id text PRIMARY KEY,
      version    bigint NOT NULL,
      state      text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE TABLE ${s}.ase_journal (
      session_id text NOT NULL,
      seq        bigint NOT NULL,
      fence      bigint NOT NULL,
      entry      text NOT NULL,
      PRIMARY KEY (session_id, seq)
    );`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** `"name"`: safe because PostgresPool accepts only names matching SCHEMA_NAME. */
export function quoteSchema(schema: string): string {
  return `"${schema}"`;
}

/** Creates or migrates `schema` to SCHEMA_VERSION; safe to call from many hosts at once. */
export async function migrate(db: Queryable, schema: string): Promise<void> {
  const s = quoteSchema(schema);
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agent-session-engine:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.ase_meta (key text PRIMARY KEY, value text NOT NULL)`);
    const rows = await tx.query<{ value: string }>(`SELECT value FROM ${s}.ase_meta WHERE key = 'schema_version'`);
    const current = rows[0] ? Number(rows[0].value) : 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(`schema ${schema} is at version ${current}, newer than this library's ${SCHEMA_VERSION}: upgrade agent-session-engine`);
    }
    for (let version = current; version < SCHEMA_VERSION; version++) await tx.query(MIGRATIONS[version]!(s));
    await tx.query(
      `INSERT INTO ${s}.ase_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [String(SCHEMA_VERSION)],
    );
  });
}
