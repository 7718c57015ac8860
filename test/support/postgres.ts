/**
 * The test PostgreSQL (started by test/support/postgres-setup.ts): its URL, a fresh schema per
 * test file, and `describePostgres`, which skips loudly where there is no Postgres and is never
 * skipped where Postgres is required (the setup fails the run there instead).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';

export const PG_URL = process.env.ASE_TEST_PG_URL;

export const describePostgres: typeof describe = (PG_URL ? describe : describe.skip) as typeof describe;

/** A schema name no other test uses. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A pool on the test database; `dropAll()` removes the schemas handed out and ends the pool. */
export function testDatabase(max = 16): { pool: pg.Pool; schema: (prefix?: string) => string; dropAll: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: PG_URL, max });
  pool.on('error', () => {});
  const made: string[] = [];
  return {
    pool,
    schema: (prefix) => {
      const name = freshSchema(prefix);
      made.push(name);
      return name;
    },
    dropAll: async () => {
      for (const name of made.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      await pool.end();
    },
  };
}
