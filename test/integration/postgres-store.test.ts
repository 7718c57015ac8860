/**
 * The PostgreSQL store and journal on a real PostgreSQL (a throwaway cluster the suite starts,
 * test/support/postgres-setup.ts): the same conformance suites the file and memory stores pass, then
 * what only a shared database is for: two hosts (two pools) racing to acquire, an owner fenced while
 * it keeps appending, migrations started by many hosts at once, and a session run on it end to end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSession } from '../../src/index.js';
import { isAseError } from '../../src/errors.js';
import { PostgresCommandRouter, PostgresJournal, PostgresStore, SCHEMA_VERSION } from '../../src/postgres.js';
import { channelName } from '../../src/effects/postgres/schema.js';
import { rejection } from '../support/async.js';
import { describeJournalConformance, journalEntry } from '../support/journal-conformance.js';
import { describePostgres, PG_URL, testDatabase } from '../support/postgres.js';
import { describeStoreConformance, session } from '../support/store-conformance.js';

const db = PG_URL ? testDatabase(24) : undefined;
afterAll(async () => db?.dropAll());

describePostgres('PostgreSQL store and journal', () => {
  const closing: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const c of closing.splice(0)) await c.close();
  });
  const track = <T extends { close(): Promise<void> }>(x: T): T => (closing.push(x), x);

  describeStoreConformance(
    'PostgresStore',
    (now) => track(new PostgresStore({ pool: db!.pool, schema: db!.schema('st'), now })),
    (store, now) => track(new PostgresStore({ pool: db!.pool, schema: (store as PostgresStore).schema, now })),
  );
  describeJournalConformance('PostgresJournal', () => track(new PostgresJournal({ pool: db!.pool, schema: db!.schema('jn') })));

  it('refuses bad options with INVALID_OPTIONS, before any connection', () => {
    for (const bad of [{}, { connectionString: PG_URL!, pool: db!.pool }, { connectionString: PG_URL!, schema: 'Drop"Table' }, { connectionString: PG_URL!, schema: '1abc' }]) {
      let caught: unknown;
      try {
        new PostgresStore(bad as never);
      } catch (error) {
        caught = error;
      }
      expect(isAseError(caught, 'INVALID_OPTIONS'), String(caught)).toBe(true);
    }
  });

  it('ten hosts creating the schema at once: all succeed, one schema at the current version', async () => {
    const schema = db!.schema('mig');
    const stores = Array.from({ length: 10 }, () => new PostgresStore({ connectionString: PG_URL!, schema, maxConnections: 2 }));
    await Promise.all(stores.map((s) => s.list()));
    await Promise.all(stores.map((s) => s.close()));
    const { rows } = await db!.pool.query(`SELECT value FROM "${schema}".ase_meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
  });

  it('two hosts racing to acquire one session: exactly one wins, 100 rounds out of 100; the loser is told who', async () => {
    const schema = db!.schema('race');
    const a = new PostgresStore({ connectionString: PG_URL!, schema, hostId: 'host-a', maxConnections: 2 });
    const b = new PostgresStore({ connectionString: PG_URL!, schema, hostId: 'host-b', maxConnections: 2 });
    try {
      for (let round = 0; round < 100; round++) {
        const id = `race-${round}`;
        const results = await Promise.allSettled([a.acquire(id, { ttlMs: 60_000, label: 'a' }), b.acquire(id, { ttlMs: 60_000, label: 'b' })]);
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won, `round ${round}`).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(isAseError(lost.reason, 'SESSION_OWNED')).toBe(true);
        const winner = (won[0] as PromiseFulfilledResult<{ owner: { label?: string } }>).value.owner.label;
        expect((lost.reason as { details: { owner: { label: string } } }).details.owner.label).toBe(winner);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a stalled owner taken over keeps appending: 0 appends accepted after the takeover, seqs without a gap', async () => {
    const schema = db!.schema('fence');
    const storeA = new PostgresStore({ connectionString: PG_URL!, schema, hostId: 'host-a', maxConnections: 2 });
    const storeB = new PostgresStore({ connectionString: PG_URL!, schema, hostId: 'host-b', maxConnections: 2 });
    const journalA = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4 });
    const journalB = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 2 });
    try {
      const leaseA = await storeA.acquire('s1', { ttlMs: 60_000 });
      await storeA.save('s1', session(), 0, leaseA.fence);
      let stop = false;
      let tookOverAt = Number.POSITIVE_INFINITY;
      const acceptedAfter: number[] = [];
      let refused = 0;
      let n = 0;
      // A keeps appending (as a stalled host that woke up would), several in flight at once.
      const writer = (async () => {
        while (!stop) {
          const batch = Array.from({ length: 4 }, () => {
            const issued = performance.now();
            return journalA.append(journalEntry(++n), { fence: leaseA.fence }).then(
              (seq) => {
                if (issued > tookOverAt) acceptedAfter.push(seq);
              },
              (error: unknown) => {
                if (!isAseError(error, 'LEASE_LOST')) throw error;
                refused++;
              },
            );
          });
          await Promise.all(batch);
        }
      })();
      while (n < 60) await new Promise((r) => setTimeout(r, 5));
      const leaseB = await storeB.acquire('s1', { ttlMs: 60_000, force: true });
      tookOverAt = performance.now();
      const afterB = await journalB.append(journalEntry(10_000), { fence: leaseB.fence });
      while (refused < 20) await new Promise((r) => setTimeout(r, 5));
      stop = true;
      await writer;
      expect(acceptedAfter, 'appends issued by A after B took over and still accepted').toEqual([]);
      const entries = await journalB.read('s1');
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
      expect(entries.at(-1)?.eventId).toBe('1-10000');
      expect(afterB).toBe(entries.length);
      // And A's state writes are refused too.
      expect(isAseError(await rejection(storeA.save('s1', session({ updatedAt: 5 }), 1, leaseA.fence)), 'LEASE_LOST')).toBe(true);
    } finally {
      for (const c of [storeA, storeB, journalA, journalB]) await c.close();
    }
  });

  it('a released or never-taken lease fences journal appends; an unfenced append still numbers on', async () => {
    const schema = db!.schema('rel');
    const store = track(new PostgresStore({ pool: db!.pool, schema }));
    const journal = track(new PostgresJournal({ pool: db!.pool, schema }));
    expect(isAseError(await rejection(journal.append(journalEntry(1), { fence: 1 })), 'LEASE_LOST')).toBe(true);
    const lease = await store.acquire('s1', { ttlMs: 60_000 });
    expect(await journal.append(journalEntry(1), { fence: lease.fence })).toBe(1);
    await store.release(lease);
    expect(isAseError(await rejection(journal.append(journalEntry(2), { fence: lease.fence })), 'LEASE_LOST')).toBe(true);
    expect(await journal.append(journalEntry(3))).toBe(2);
    expect((await journal.read('s1')).map((e) => e.eventId)).toEqual(['1-1', '1-3']);
  });

  it('appendMany is fenced as a whole: a stale fence writes none of its entries and rejects with LEASE_LOST', async () => {
    const schema = db!.schema('many');
    const store = track(new PostgresStore({ pool: db!.pool, schema }));
    const journal = track(new PostgresJournal({ pool: db!.pool, schema }));
    const lease = await store.acquire('s1', { ttlMs: 60_000 });
    expect(await journal.appendMany([journalEntry(1), journalEntry(2)], { fence: lease.fence })).toEqual([1, 2]);
    await store.release(lease);
    expect(isAseError(await rejection(journal.appendMany([journalEntry(3), journalEntry(4)], { fence: lease.fence })), 'LEASE_LOST')).toBe(true);
    expect(isAseError(await rejection(journal.appendMany([journalEntry(5)], { fence: 0 })), 'INVALID_INPUT')).toBe(true);
    expect((await journal.read('s1')).map((e) => e.eventId)).toEqual(['1-1', '1-2']);
  });

  it('a restarted host takes its own session back at once when its old process is dead', async () => {
    const schema = db!.schema('dead');
    const store = track(new PostgresStore({ pool: db!.pool, schema }));
    await store.list(); // the schema exists
    // A lease written by a process of this host that is gone (pid 2^22 + 1 cannot exist on Linux).
    await db!.pool.query(
      `INSERT INTO "${schema}".ase_lease (session_id, fence, owner, host_id, expires_at, ttl_ms) VALUES ('s1', 3, $1, $2, clock_timestamp() + interval '1 hour', 60000)`,
      [JSON.stringify({ host: os.hostname(), pid: 4_194_305 }), os.hostname()],
    );
    const lease = await store.acquire('s1', { ttlMs: 60_000 });
    expect(lease.fence).toBe(4);
    // Another host's live-looking owner is not taken.
    await db!.pool.query(`UPDATE "${schema}".ase_lease SET owner = $1, fence = 9 WHERE session_id = 's1'`, [JSON.stringify({ host: 'elsewhere', pid: 4_194_305 })]);
    expect(isAseError(await rejection(store.acquire('s1', { ttlMs: 60_000 })), 'SESSION_OWNED')).toBe(true);
  });

  it('a session runs on it end to end and is continued by the next host', async () => {
    const schema = db!.schema('e2e');
    const make = () => ({ store: new PostgresStore({ connectionString: PG_URL!, schema, maxConnections: 4 }), journal: new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4 }) });
    const first = make();
    const s = await createSession({ agent: 'fake', workDir: os.tmpdir(), mode: 'remote', ...first });
    const turn = await s.run('hello');
    expect(turn.status).toBe('completed');
    await s.stop();
    await first.store.close();
    await first.journal.close();
    const second = make();
    try {
      const again = await createSession({ agent: 'fake', workDir: os.tmpdir(), mode: 'remote', sessionId: s.id, ...second });
      expect((await again.run('and again')).status).toBe('completed');
      await again.stop();
      const entries = await second.journal.read(s.id);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
      expect(entries.filter((e) => e.type === 'user_message').map((e) => (e.payload as { text: string }).text)).toEqual(['hello', 'and again']);
      const { rows } = await db!.pool.query(`SELECT DISTINCT fence FROM "${schema}".ase_journal WHERE session_id = $1 ORDER BY fence`, [s.id]);
      expect(rows.map((r) => Number(r.fence)), 'every append of the session carried its lease fence').toEqual([1, 2]);
    } finally {
      await second.store.close();
      await second.journal.close();
    }
  });
});

describePostgres('PostgreSQL journal across hosts', () => {
  it('watchStarted waits for the watch to read where the session is: appended after it, heard; not before', async () => {
    const schema = db!.schema('started');
    const writer = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4 });
    const reader = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4, pollMs: 60_000 });
    const locker = await db!.pool.connect();
    try {
      await writer.append(journalEntry(0)); // the schema exists, and one entry is before the watch
      // Hold the watch's head read (a query of the lease table) until we let it go.
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}".ase_lease IN ACCESS EXCLUSIVE MODE`);
      const heard: number[] = [];
      const stop = reader.watch('s1', (e) => heard.push(e.seq!));
      let started = false;
      const whenStarted = reader.watchStarted('s1').then(() => (started = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(started).toBe(false);
      await locker.query('COMMIT');
      await whenStarted;
      for (let i = 1; i <= 5; i++) await writer.append(journalEntry(i));
      const deadline = Date.now() + 20_000;
      while (heard.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stop();
      expect(heard).toEqual([2, 3, 4, 5, 6]);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await writer.close();
      await reader.close();
    }
  });

  it('a watch on another host hears every append after it began in seq order, once, including a burst and entries from before LISTEN took effect', async () => {
    const schema = db!.schema('feed');
    const writer = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4 });
    const reader = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4, pollMs: 60_000 });
    try {
      await writer.append(journalEntry(0)); // before the watch: not heard
      const heard: number[] = [];
      const stop = reader.watch('s1', (e) => heard.push(e.seq!));
      // A watch begins where the session's head is when it reads it: another host's appends cannot
      // wait for that read as this host's own do, so the burst waits until the watch has begun.
      // Its LISTEN is being set up on a connection of its own meanwhile: the burst's first appends
      // may commit before it takes effect, and the catch-up after LISTEN hears those.
      await reader.watchStarted('s1');
      const all = Array.from({ length: 300 }, (_, i) => writer.append(journalEntry(i + 1)));
      await Promise.all(all);
      const deadline = Date.now() + 20_000;
      while (heard.length < 300 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stop();
      expect(heard).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('lost hints are made up by the poll: a reader whose LISTEN connection is killed still hears everything', async () => {
    const schema = db!.schema('poll');
    const writer = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 2, acrossHosts: false });
    const reader = new PostgresJournal({ connectionString: PG_URL!, schema, maxConnections: 4, pollMs: 200 });
    try {
      await writer.append(journalEntry(0));
      const heard: number[] = [];
      const stop = reader.watch('s1', (e) => heard.push(e.seq!));
      await reader.watchStarted('s1');
      // The writer notifies nobody (acrossHosts false), and the reader's LISTEN connection is cut.
      await db!.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${channelName('ase_journal', schema)}"`]);
      for (let i = 1; i <= 20; i++) await writer.append(journalEntry(i));
      const deadline = Date.now() + 20_000;
      while (heard.length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stop();
      expect(heard).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});

describePostgres('PostgresCommandRouter', () => {
  it('carries a command to the owner and its answer back; no owner: undefined; silent owner: TIMEOUT; expired owner: orphaned', async () => {
    const schema = db!.schema('cmd');
    const ownerStore = new PostgresStore({ connectionString: PG_URL!, schema, hostId: 'host-a', maxConnections: 2 });
    const owner = new PostgresCommandRouter({ connectionString: PG_URL!, schema, hostId: 'host-a', maxConnections: 3, pollMs: 100 });
    const caller = new PostgresCommandRouter({ connectionString: PG_URL!, schema, hostId: 'host-b', maxConnections: 3, pollMs: 100, timeoutMs: 1_500 });
    try {
      expect(await caller.route('nobody', { kind: 'abort' })).toBeUndefined();
      const lease = await ownerStore.acquire('s1', { ttlMs: 60_000 });
      // Owned, but the owner does not serve yet: the caller times out and the command stays queued.
      expect(isAseError(await rejection(caller.route('s1', { kind: 'send', text: 'hi', localId: 'm1' })), 'TIMEOUT')).toBe(true);
      const applied: string[] = [];
      owner.serve(async (sessionId, command) => {
        applied.push(`${sessionId}:${command.kind}:${command.kind === 'send' ? command.localId : ''}`);
        return command.kind === 'abort' ? { ok: false, error: { code: 'NOTHING_TO_ABORT', message: 'idle' } } : { ok: true, value: { done: command.kind } };
      });
      // The queued message is applied once the owner serves; its retry is the same command.
      expect(await caller.route('s1', { kind: 'send', text: 'hi', localId: 'm1' })).toEqual({ ok: true, value: { done: 'send' } });
      expect(await caller.route('s1', { kind: 'abort' })).toEqual({ ok: false, error: { code: 'NOTHING_TO_ABORT', message: 'idle' } });
      expect(applied).toEqual(['s1:send:m1', 's1:abort:']);
      // The message's row stays (a retry is the same command); the abort's was dropped once answered.
      const { rows: left } = await db!.pool.query(`SELECT local_id FROM "${schema}".ase_command ORDER BY id`);
      expect(left).toEqual([{ local_id: 'm1' }]);
      // Its lease expires (the owner stalled): orphaned, refused at once.
      await db!.pool.query(`UPDATE "${schema}".ase_lease SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 's1'`);
      const orphaned = await rejection(caller.route('s1', { kind: 'abort' }));
      expect(isAseError(orphaned, 'SESSION_OWNED')).toBe(true);
      expect((orphaned as { details: { orphaned: boolean } }).details.orphaned).toBe(true);
      // What a server checks before it opens a session: the same refusal (adopted only when asked).
      expect(isAseError(await rejection(caller.refuseOrphaned('s1')), 'SESSION_OWNED')).toBe(true);
      await expect(caller.refuseOrphaned('nobody')).resolves.toBeUndefined();
      // Held by a dead process of the caller's own host (a server that was SIGKILLed there): not
      // orphaned, not routed to the dead: the caller drives it (its store takes the lease at once).
      await db!.pool.query(`UPDATE "${schema}".ase_lease SET owner = $1 WHERE session_id = 's1'`, [JSON.stringify({ host: 'host-b', pid: 2 ** 22 + 7 })]);
      expect(await caller.route('s1', { kind: 'abort' })).toBeUndefined();
      await expect(caller.refuseOrphaned('s1')).resolves.toBeUndefined();
      await db!.pool.query(`UPDATE "${schema}".ase_lease SET owner = $1 WHERE session_id = 's1'`, [JSON.stringify(lease.owner)]);
      await ownerStore.release(lease);
    } finally {
      await owner.close();
      await caller.close();
      await ownerStore.close();
    }
  });

  it('an owner that dies (on this host) or loses the lease before answering: the command is withdrawn at once, not after the timeout; a live owner that took it is waited for', { timeout: 90_000 }, async () => {
    const schema = db!.schema('cmddead');
    const caller = new PostgresCommandRouter({ connectionString: PG_URL!, schema, hostId: 'host-b', maxConnections: 3, pollMs: 100, timeoutMs: 20_000 });
    const impatient = new PostgresCommandRouter({ connectionString: PG_URL!, schema, hostId: 'host-b', maxConnections: 2, pollMs: 100, timeoutMs: 1_500 });
    const children: ChildProcess[] = [];
    /** A live process of the caller's host (a server that will be SIGKILLed), which serves nothing. */
    const process_ = () => {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      children.push(child);
      return { pid: child.pid!, kill: async () => (child.kill('SIGKILL'), await new Promise((r) => child.once('exit', r))) }; // reaped: its pid reads dead
    };
    const lease = (owner: object) => db!.pool.query(`UPDATE "${schema}".ase_lease SET owner = $1 WHERE session_id = 's1'`, [JSON.stringify(owner)]);
    const rows = async () => (await db!.pool.query<{ local_id: string }>(`SELECT local_id FROM "${schema}".ase_command ORDER BY id`)).rows.map((r) => r.local_id);
    const queued = async (localId: string) => {
      while (!(await rows()).includes(localId)) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      await caller.refuseOrphaned('s1'); // the schema exists
      await db!.pool.query(`INSERT INTO "${schema}".ase_lease (session_id, fence, owner, host_id, expires_at, ttl_ms) VALUES ('s1', 1, NULL, 'host-b', clock_timestamp() + interval '1 hour', 3600000)`);

      // Dies before it takes the command.
      const first = process_();
      await lease({ host: 'host-b', pid: first.pid });
      let routed = caller.route('s1', { kind: 'send', text: 'hi', localId: 'm1' });
      await queued('m1');
      let killedAt = Date.now();
      await first.kill();
      await expect(routed).resolves.toBeUndefined();
      expect(Date.now() - killedAt, 'answered within a few polls, not at the 20 s timeout').toBeLessThan(10_000);
      expect(await rows(), 'withdrawn: a retry by the host that takes over is a new row').toEqual([]);

      // Dies after it took the command, before answering: withdrawn too (a message it had accepted
      // is known by its localId to whoever takes the session over).
      const second = process_();
      await lease({ host: 'host-b', pid: second.pid });
      routed = caller.route('s1', { kind: 'send', text: 'hi', localId: 'm2' });
      await queued('m2');
      await db!.pool.query(`UPDATE "${schema}".ase_command SET claimed_at = clock_timestamp() WHERE local_id = 'm2'`);
      killedAt = Date.now();
      await second.kill();
      await expect(routed).resolves.toBeUndefined();
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(await rows()).toEqual([]);

      // Another host's owner (its liveness unknown here) loses the lease before taking the command: withdrawn.
      await lease({ host: 'host-c', pid: 11 });
      routed = caller.route('s1', { kind: 'abort' });
      while ((await rows()).length === 0) await new Promise((r) => setTimeout(r, 20)); // its row (an abort has no localId)
      await lease({ host: 'host-c', pid: 12 });
      await expect(routed).resolves.toBeUndefined();
      expect(await rows()).toEqual([]);

      // ... but once that owner took it, it is still applying it: the caller waits for its answer.
      await lease({ host: 'host-c', pid: 13 });
      const waited = impatient.route('s1', { kind: 'send', text: 'hi', localId: 'm3' });
      await queued('m3');
      await db!.pool.query(`UPDATE "${schema}".ase_command SET claimed_at = clock_timestamp() WHERE local_id = 'm3'`);
      await lease({ host: 'host-c', pid: 14 });
      expect(isAseError(await rejection(waited), 'TIMEOUT')).toBe(true);
      expect(await rows()).toEqual(['m3']);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await caller.close();
      await impatient.close();
    }
  });

  it('an owner on another machine that does not answer (stalled, or dead with its lease valid): an untaken abort is withdrawn at the timeout, said so, never applied later; once its lease expires, a waiting command is withdrawn then', { timeout: 60_000 }, async () => {
    const schema = db!.schema('cmdgone');
    const conn = { connectionString: PG_URL!, schema, maxConnections: 2 };
    const ownerStore = new PostgresStore({ ...conn, hostId: 'host-a' });
    const goneStore = new PostgresStore({ ...conn, hostId: 'host-c' });
    const owner = new PostgresCommandRouter({ ...conn, hostId: 'host-a', pollMs: 100 });
    const caller = new PostgresCommandRouter({ ...conn, hostId: 'host-b', pollMs: 100, timeoutMs: 1_500 });
    const patient = new PostgresCommandRouter({ ...conn, hostId: 'host-b', pollMs: 100, timeoutMs: 30_000 });
    const rows = async (sessionId: string) => (await db!.pool.query(`SELECT id FROM "${schema}".ase_command WHERE session_id = $1`, [sessionId])).rows;
    try {
      // host-a's pid cannot be checked from host-b: only its answers (none: it serves nothing yet) and its lease tell.
      const lease = await ownerStore.acquire('s1', { ttlMs: 60_000 });
      const timedOut = await rejection(caller.route('s1', { kind: 'abort' }));
      expect(isAseError(timedOut, 'TIMEOUT'), String(timedOut)).toBe(true);
      expect((timedOut as { details: unknown }).details).toMatchObject({ sessionId: 's1', withdrawn: true, owner: { host: 'host-a', pid: process.pid }, expiresAt: lease.expiresAt });
      expect((timedOut as Error).message).toMatch(/did not answer within 1500 ms: the command was withdrawn: nothing was done; .*orphaned .*adopt/);
      expect(await rows('s1'), 'withdrawn').toEqual([]);
      // The owner wakes and serves: it never applies the abort its caller was told was not done.
      const applied: string[] = [];
      owner.serve(async (_id, command) => (applied.push(command.kind), { ok: true, value: { done: command.kind } }));
      expect(await caller.route('s1', { kind: 'mode', to: 'remote' })).toEqual({ ok: true, value: { done: 'mode' } });
      expect(applied).toEqual(['mode']);

      // An owner that died: its lease runs out while a command waits for it. The command is withdrawn
      // then (the caller applies it or, asked again, is refused: orphaned), not at the 30 s timeout.
      await goneStore.acquire('s2', { ttlMs: 1_500 });
      const started = Date.now();
      await expect(patient.route('s2', { kind: 'abort' })).resolves.toBeUndefined();
      expect(Date.now() - started, 'at the lease expiry, not the timeout').toBeLessThan(15_000);
      expect(await rows('s2')).toEqual([]);
      const orphaned = await rejection(patient.route('s2', { kind: 'abort' }));
      expect(isAseError(orphaned, 'SESSION_OWNED') && orphaned.details?.orphaned, String(orphaned)).toBe(true);
    } finally {
      await Promise.all([owner.close(), caller.close(), patient.close(), ownerStore.close(), goneStore.close()]);
    }
  });
});
