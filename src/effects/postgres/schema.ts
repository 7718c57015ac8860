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
import { createHash } from 'node:crypto';
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
  // Commands for a session another host owns (PostgresCommandRouter): durable, idempotent on local_id.
  (s) => `
    CREATE TABLE ${s}.ase_command (
      id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      session_id text NOT NULL,
      owner_key  text NOT NULL,               -- the owning process (its channel)
      local_id   text,                        -- a message's localId: one row per message
      body       text NOT NULL,               -- the SessionCommand as JSON
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      claimed_at timestamptz,
      done_at    timestamptz,
      result     text,                        -- the CommandOutcome as JSON
      UNIQUE (session_id, local_id)
    );
    CREATE INDEX ase_command_pending ON ${s}.ase_command (owner_key, id) WHERE done_at IS NULL;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * A LISTEN/NOTIFY channel for these parts (a schema, a process): hashed, since a channel is an
 * identifier of at most 63 bytes and a schema name alone may be that long.
 */
export function channelName(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 24)}`;
}

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
