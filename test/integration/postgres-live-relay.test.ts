/**
 * PostgresLiveRelay against a real PostgreSQL, two relays as two hosts: the owner sends a session's
 * ephemeral frames only once another host watches it, joins consecutive text deltas of one message,
 * keeps the order, and a watcher is told `resync` where frames were lost (a frame too big for a
 * NOTIFY payload, another publisher, a skipped counter) instead of silently missing them.
 */
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { PostgresLiveRelay } from '../../src/postgres.js';
import type { LiveFrame } from '../../src/effects/session-live-relay.js';
import { channelName } from '../../src/effects/postgres/schema.js';
import { describePostgres, PG_URL, testDatabase } from '../support/postgres.js';

const db = PG_URL ? testDatabase(4) : undefined;
afterAll(async () => {
  await db?.dropAll();
});

async function until(check: () => boolean, what: string, timeoutMs = 15_000, tick?: () => void): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    tick?.();
    await new Promise((r) => setTimeout(r, 30));
  }
}

describePostgres('PostgresLiveRelay', () => {
  it('carries frames only while watched, joined and in order; says resync where frames were lost', { timeout: 60_000 }, async () => {
    const schema = db!.schema('relay');
    const owner = new PostgresLiveRelay({ connectionString: PG_URL!, schema, announceMs: 200 });
    const watcher = new PostgresLiveRelay({ connectionString: PG_URL!, schema, announceMs: 200 });
    // What reaches the database on the session's channel, seen by a plain LISTEN.
    const spy = new pg.Client({ connectionString: PG_URL });
    const raw: string[] = [];
    try {
      await spy.connect();
      spy.on('notification', (m) => raw.push(m.payload ?? ''));
      await spy.query(`LISTEN "${channelName('ase_live', schema, 's1')}"`);

      // Nobody watches: nothing is sent.
      for (let i = 0; i < 50; i++) owner.publish('s1', 'status', { unwatched: i });

      const heard: LiveFrame[] = [];
      const stop = watcher.subscribe('s1', (frame) => heard.push(frame));
      let probe = 0;
      await until(() => heard.some(([e]) => e === 'status'), 'the owner to hear the watch', 15_000, () => owner.publish('s1', 'status', { probe: probe++ }));
      expect(raw.some((p) => p.includes('unwatched')), 'frames published before anyone watched never reached the database').toBe(false);
      heard.length = 0;

      // 200 deltas around a prompt, in one burst: joined into one frame per run, the order kept.
      for (let i = 0; i < 100; i++) owner.publish('s1', 'agent', { type: 'text_delta', gen: 1, at: i, messageId: 'm1', text: 'ab' });
      owner.publish('s1', 'permission_prompt', { requestId: 'r1', toolName: 'Bash', input: { command: 'ls' } });
      for (let i = 0; i < 100; i++) owner.publish('s1', 'agent', { type: 'text_delta', gen: 1, at: i, messageId: 'm1', text: 'cd' });
      owner.publish('s1', 'agent', { type: 'text_delta', gen: 1, at: 0, messageId: 'm2', text: 'other message' });
      await until(() => heard.some(([, d]) => (d as { messageId?: string }).messageId === 'm2'), 'the burst');
      const burst = heard.filter(([e, d]) => !(e === 'status' && 'probe' in (d as object)));
      expect(burst.map(([e, d]) => (e === 'agent' ? (d as { text: string }).text : e))).toEqual(['ab'.repeat(100), 'permission_prompt', 'cd'.repeat(100), 'other message']);
      heard.length = 0;

      // A frame no NOTIFY payload holds (8000 bytes): the watcher is told to resync (fetch the snapshot).
      owner.publish('s1', 'permission_prompt', { requestId: 'r2', toolName: 'Write', input: { content: 'x'.repeat(20_000) } });
      owner.publish('s1', 'status', { after: 'big' });
      await until(() => heard.some(([e, d]) => e === 'status' && (d as { after?: string }).after === 'big'), 'the frame after the big one');
      expect(heard.map(([e]) => e)).toEqual(['resync', 'status']);
      heard.length = 0;

      // Another publisher (the session moved to another host) or a skipped counter: resync first.
      const channel = channelName('ase_live', schema, 's1');
      await db!.pool.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ p: 'another-host', n: 7, f: [['status', { from: 'b' }]] })]);
      await db!.pool.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ p: 'another-host', n: 9, f: [['status', { from: 'b2' }]] })]);
      await until(() => heard.length >= 4, 'the other publisher');
      expect(heard).toEqual([['resync', null], ['status', { from: 'b' }], ['resync', null], ['status', { from: 'b2' }]]);

      // Unsubscribed: nothing more is heard.
      stop();
      heard.length = 0;
      const seen = raw.length;
      await db!.pool.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ p: 'another-host', n: 10, f: [['status', {}]] })]);
      await until(() => raw.length > seen, 'the spy to hear it');
      expect(heard).toEqual([]);
    } finally {
      await spy.end();
      await owner.close();
      await watcher.close();
    }
  });
});
