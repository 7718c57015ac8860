/**
 * Issue 22, what postgres-serve.test.ts leaves out: two `ase serve` processes (the built CLI) on one
 * PostgreSQL, A owning the sessions and B driving and watching them.
 *
 * - B switches the mode of A's session and stops it: the commands go to A through the command
 *   table, A performs them, B's stream shows it.
 * - B's stream of A's session is cut while A's agent keeps writing, and reconnected with
 *   `Last-Event-ID`, twice: every entry arrives exactly once, in order, as the table holds it.
 * - A is SIGKILLed with messages in flight (one accepted `200 queued` behind a turn waiting on a
 *   prompt, one still in the command table, unclaimed): B takes the session over, a restarted A
 *   takes back another; each message reaches an agent exactly once, fences only grow.
 *
 * One cluster (the suite's), one schema, one A and one B for the file; the SIGKILL test starts its
 * own A. The agents are the fake engine (`--script`).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { isAseError } from '../../src/errors.js';
import { PostgresJournal } from '../../src/postgres.js';
import { startAseServe, type AseServeProcess } from '../support/ase-serve-process.js';
import { rejection } from '../support/async.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { journalEntry } from '../support/journal-conformance.js';
import { describePostgres, PG_URL, testDatabase } from '../support/postgres.js';
import { openSse, type SseConnection, type SseFrame } from '../support/sse-client.js';

const db = PG_URL ? testDatabase(4) : undefined;
const schema = db?.schema('xhost') ?? '';
let tmp: string;
let a: AseServeProcess;
let b: AseServeProcess;
const started: AseServeProcess[] = [];

/** Each turn writes 20 assistant messages, 10 ms apart: an agent that keeps the journal busy. */
const BUSY = { turns: [Array.from({ length: 20 }, (_, i) => ({ text: `part ${i}`, afterMs: 10 }))] };

async function serve(name: string, script: unknown, extra: string[] = []): Promise<AseServeProcess> {
  const scriptFile = path.join(tmp, `${name}-${started.length}.json`);
  await fs.writeFile(scriptFile, JSON.stringify(script));
  const server = await startAseServe({
    dataDir: path.join(tmp, name),
    env: { HOME: tmp, NO_COLOR: '1' },
    args: ['--store', `${PG_URL}?schema=${schema}`, '--script', scriptFile, ...extra],
  });
  started.push(server);
  return server;
}

beforeAll(async () => {
  if (!PG_URL) return;
  await ensureBuiltCli();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-pg-xhost-'));
  [a, b] = await Promise.all([serve('a', BUSY), serve('b', BUSY)]);
}, 180_000);
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop('SIGTERM').catch(() => s.stop('SIGKILL').catch(() => undefined))));
  await db?.dropAll();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
}, 60_000);

interface Entry {
  seq: number;
  type: string;
  payload: Record<string, unknown> | null;
}
const entriesOf = (frames: readonly SseFrame[]): Entry[] => frames.filter((f) => f.event === 'entry').map((f) => JSON.parse(f.data) as Entry);
const stream = (server: AseServeProcess, id: string, lastEventId?: number): Promise<SseConnection> =>
  openSse(`${server.url}/api/sessions/${id}/events`, { authorization: `Bearer ${server.token}`, ...(lastEventId !== undefined && { 'last-event-id': String(lastEventId) }) });

/** Polls `check` (async) every 100 ms until it returns a value other than undefined. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The journal as the table holds it. */
async function journalRows(id: string): Promise<{ seq: number; fence: number; type: string; localId: string | null }[]> {
  const { rows } = await db!.pool.query<{ seq: string; fence: string; type: string; local_id: string | null }>(
    `SELECT seq, fence, entry::jsonb->>'type' AS type, entry::jsonb->'payload'->>'localId' AS local_id FROM "${schema}".ase_journal WHERE session_id = $1 ORDER BY seq`,
    [id],
  );
  return rows.map((r) => ({ seq: Number(r.seq), fence: Number(r.fence), type: r.type, localId: r.local_id }));
}

async function leaseFence(id: string): Promise<number> {
  const { rows } = await db!.pool.query<{ fence: string }>(`SELECT fence FROM "${schema}".ase_lease WHERE session_id = $1`, [id]);
  return Number(rows[0]!.fence);
}

/** The pid of the server that runs `id`, as `server` lists it (its own sessions are `running`, another's `elsewhere`). */
async function ownerPid(server: AseServeProcess, id: string): Promise<number | undefined> {
  const { sessions } = (await server.api('GET', '/api/sessions')).body as { sessions: { sessionId: string; status: string; owner?: { pid: number } }[] };
  const row = sessions.find((s) => s.sessionId === id);
  if (row?.status === 'running') return server.child.pid;
  return row?.status === 'elsewhere' ? row.owner?.pid : undefined;
}

describePostgres('B drives and watches sessions A owns (one PostgreSQL)', () => {
  it("B switches the mode of A's session and stops it: A performs both, B's stream shows them", { timeout: 120_000 }, async () => {
    const id = (await a.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    const onB = await stream(b, id);
    onTestFailed(() => console.error(onB.frames.filter((f) => f.event !== 'heartbeat').map((f) => `${f.id ?? ''} ${f.event} ${f.data.slice(0, 200)}`).join('\n')));
    await onB.waitFor((f) => f.event === 'live', 30_000);
    const fence = await leaseFence(id);

    const local = await b.api('POST', `/api/sessions/${id}/mode`, { to: 'local' });
    expect(local, JSON.stringify(local.body)).toMatchObject({ status: 200, body: { mode: 'local' } });
    // Performed on A (its live session), not taken over by B: the same lease, A's pid.
    expect((await a.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });
    expect(await ownerPid(b, id)).toBe(a.child.pid);
    await onB.waitFor((f) => f.event === 'entry' && f.data.includes('"mode_changed"') && f.data.includes('"local"'), 30_000);
    // A's live status (not journaled) reaches B's page too: the agent restarted in local mode there.
    await onB.waitFor((f) => f.event === 'status' && (JSON.parse(f.data) as { phase: string }).phase === 'local', 30_000);
    const remote = await b.api('POST', `/api/sessions/${id}/mode`, { to: 'remote' });
    expect(remote).toMatchObject({ status: 200, body: { mode: 'remote' } });
    await onB.waitFor((f) => f.event === 'entry' && f.data.includes('"mode_changed"') && f.data.includes('"remote"'), 30_000);
    expect((await a.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'remote' });

    // A bad mode is refused on B before anything is routed.
    expect((await b.api('POST', `/api/sessions/${id}/mode`, { to: 'sideways' })).status).toBe(400);

    const stopped = await b.api('POST', `/api/sessions/${id}/stop`, {});
    expect(stopped, JSON.stringify(stopped.body)).toMatchObject({ status: 200, body: { stopped: true, snapshot: { phase: 'stopped' } } });
    // A stopped it: no longer live there, stored stopped, the lease released (not taken by B).
    expect((await a.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, phase: 'stopped' });
    const { rows } = await db!.pool.query<{ owner: unknown; fence: string }>(`SELECT owner, fence FROM "${schema}".ase_lease WHERE session_id = $1`, [id]);
    expect(rows).toEqual([{ owner: null, fence: String(fence) }]);
    // B's stream shows the stop: A's status, then the stream's last word (`done`, the final snapshot).
    await onB.waitFor((f) => f.event === 'status' && (JSON.parse(f.data) as { phase: string }).phase === 'stopped', 30_000);
    const done = await onB.waitFor((f) => f.event === 'done', 30_000);
    expect(JSON.parse(done.data)).toMatchObject({ sessionId: id, phase: 'stopped', mode: 'remote' });
    const modes = entriesOf(onB.frames).filter((e) => e.type === 'mode_changed').map((e) => e.payload?.['to']);
    expect(modes, 'each switch once, in order').toEqual(['local', 'remote']);
    // Stopped again on B: nothing is live anywhere, the answer says so.
    expect(await b.api('POST', `/api/sessions/${id}/stop`, {})).toMatchObject({ status: 200, body: { stopped: true, live: false } });
    const seqs = entriesOf(onB.frames).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    onB.cut();
  });

  it("B's stream of A's session, cut twice while A keeps writing and resumed with Last-Event-ID: every entry once, in order", { timeout: 120_000 }, async () => {
    const id = (await a.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    const first = await stream(b, id);
    const connections: SseConnection[] = [first];
    onTestFailed(() =>
      console.error(
        `connections: ${connections.map((c, i) => `#${i + 1} ended ${c.endReason}, ${c.frames.map((f) => `${f.event}${f.id ? ` ${f.id}` : ''}`).join(',')}`).join(' | ')}\nB says:\n${b.output().slice(-4000)}\nA says:\n${a.output().slice(-2000)}`,
      ),
    );
    await first.waitFor((f) => f.event === 'live', 30_000);
    const send = async (n: number) => expect((await a.api('POST', `/api/sessions/${id}/messages`, { text: `m${n}`, localId: `m${n}` })).status).toBe(200);
    const turnDone = async (n: number) => ((await journalRows(id)).some((r) => r.type === 'turn_complete' && r.localId === `m${n}`) ? true : undefined);
    // Two messages (the second queues behind the first); A's agent writes 22 entries per turn.
    const firstTwo = (async () => {
      await send(1);
      await send(2);
    })();

    // Cut 1: while A writes (mid-turn, unless this loaded machine lets B fall behind).
    await first.waitFor(() => entriesOf(first.frames).length >= 15, 30_000);
    first.cut();
    await first.ended;
    const got: SseFrame[] = first.frames.filter((f) => f.event === 'entry');
    const lastId = () => Number(got.at(-1)!.id);
    // A writes two more turns while nobody on B listens: the resumed stream has a backlog to replay.
    await firstTwo;
    await send(3);
    await send(4);
    await until('the turn of m4 to end', () => turnDone(4), 60_000);

    // Cut 2: right after the first frame of the replay.
    const second = await stream(b, id, lastId());
    connections.push(second);
    expect(second.status).toBe(200);
    await second.waitFor((f) => f.event === 'entry', 30_000);
    second.cut();
    await second.ended;
    got.push(...second.frames.filter((f) => f.event === 'entry'));

    // Resumed again: replays the rest, goes live, and hears A's next turn as A writes it.
    const third = await stream(b, id, lastId());
    connections.push(third);
    await third.waitFor((f) => f.event === 'live', 30_000);
    await send(5);
    await third.waitFor((f) => f.event === 'entry' && f.data.includes('"turn_complete"') && f.data.includes('"m5"'), 60_000);
    got.push(...third.frames.filter((f) => f.event === 'entry'));
    third.cut();

    const seqs = got.map((f) => Number(f.id));
    const carried = [first, second, third].map((c) => c.frames.filter((f) => f.event === 'entry').length);
    expect(carried.every((n) => n > 0), `each connection carried entries: ${carried.join(', ')}`).toBe(true);
    expect(seqs, 'every entry once, in order').toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    // The same entries the table holds (up to the last one seen), not only the same numbers.
    const rows = (await journalRows(id)).slice(0, seqs.length);
    expect(got.map((f) => (JSON.parse(f.data) as Entry).type)).toEqual(rows.map((r) => r.type));
    const users = got.map((f) => JSON.parse(f.data) as Entry).filter((e) => e.type === 'user_message').map((e) => e.payload?.['localId']);
    expect(users).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  });

  it("A SIGKILLed with its session idle (its lease still valid): B's stop takes the session over and really stops it, never 'stopped' for a session stored live", { timeout: 120_000 }, async () => {
    const a5 = await serve('a5', {});
    const id = (await a5.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    await until("B to list it as A's", async () => ((await ownerPid(b, id)) === a5.child.pid ? true : undefined));
    await until('its agent to be up (stored idle)', async () => ((await b.api('GET', `/api/sessions/${id}`)).body.phase === 'idle' ? true : undefined));
    const fence = await leaseFence(id);
    expect(await a5.stop('SIGKILL')).toBe('SIGKILL');

    const stopped = await b.api('POST', `/api/sessions/${id}/stop`, {});
    expect(stopped, JSON.stringify(stopped.body)).toMatchObject({ status: 200, body: { stopped: true, snapshot: { phase: 'stopped' } } });
    // Stopped under B's fence, stored so (no server reopens it), the lease given up.
    expect((await b.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, phase: 'stopped' });
    expect(await leaseFence(id)).toBeGreaterThan(fence);
    const { rows } = await db!.pool.query<{ owner: string | null }>(`SELECT owner FROM "${schema}".ase_lease WHERE session_id = $1`, [id]);
    expect(rows[0]!.owner).toBeNull();
    expect((await journalRows(id)).at(-1)?.fence, 'the last entries are B\'s').toBe(await leaseFence(id));
  });

  it('A SIGKILLed with messages accepted and in flight: B takes one session over, a restarted A the other; each message reaches an agent once, fences only grow', { timeout: 180_000 }, async () => {
    // A's agent answers, then asks to run a command and waits: the turn stays running.
    const asking = { turns: [[{ text: 'Looking at the files.' }, { ask: { toolName: 'Bash', input: { command: 'rm -rf build' } } }]] };
    const a3 = await serve('a3', asking);
    const s1 = (await a3.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    const s2 = (await a3.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    const watch1 = await stream(b, s1);
    const watch2 = await stream(b, s2);
    onTestFailed(async () => console.error(JSON.stringify({ s1: await journalRows(s1), s2: await journalRows(s2) })));
    await Promise.all([watch1, watch2].map((w) => w.waitFor((f) => f.event === 'live', 30_000)));

    // Through B: the first message starts a turn on A that waits on a prompt; the second is
    // accepted by A behind it (200 queued), answered to B's caller.
    for (const [id, w] of [[s1, watch1], [s2, watch2]] as const) {
      expect((await b.api('POST', `/api/sessions/${id}/messages`, { text: 'clean the build', localId: 'L1' })).status).toBe(200);
      await w.waitFor((f) => f.event === 'entry' && f.data.includes('"permission_request"'), 30_000);
      const queued = await b.api('POST', `/api/sessions/${id}/messages`, { text: 'then run the tests', localId: 'L2' });
      expect(queued, JSON.stringify(queued.body)).toMatchObject({ status: 200, body: { localId: 'L2', status: 'queued' } });
    }
    const fences = { s1: await leaseFence(s1), s2: await leaseFence(s2) };

    // A third message to s1 goes into the command table while A is frozen (it cannot claim it),
    // then A is killed: the message is in flight, its caller on B still waiting.
    a3.child.kill('SIGSTOP');
    const inFlight = b.api('POST', `/api/sessions/${s1}/messages`, { text: 'and push', localId: 'L3' });
    await until('the command in the table', async () => {
      const { rows } = await db!.pool.query(`SELECT 1 FROM "${schema}".ase_command WHERE session_id = $1 AND local_id = 'L3'`, [s1]);
      return rows.length > 0 ? true : undefined;
    });
    expect(await a3.stop('SIGKILL')).toBe('SIGKILL');

    // B's caller gets its answer without a retry: B sees A is dead, withdraws the command, takes the
    // session over and delivers the message there (behind L2, which A had queued).
    const answer = await inFlight;
    expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 200, body: { localId: 'L3' } });
    expect(await ownerPid(b, s1)).toBe(b.child.pid);
    const done1 = await watch1.waitFor((f) => f.event === 'entry' && f.data.includes('"turn_complete"') && f.data.includes('"L3"'), 60_000);

    // A restarted on its data dir takes back s2 by itself, nobody asking: its queued message goes out there.
    const a4 = await serve('a3', {});
    await until('the restarted A to own s2', async () => ((await ownerPid(b, s2)) === a4.child.pid ? true : undefined));
    await watch2.waitFor((f) => f.event === 'entry' && f.data.includes('"turn_complete"') && f.data.includes('"L2"'), 60_000);
    expect(await ownerPid(b, s1), 's1 stays with B').toBe(b.child.pid);

    for (const [id, w, sent, before] of [[s1, watch1, ['L1', 'L2', 'L3'], fences.s1], [s2, watch2, ['L1', 'L2'], fences.s2]] as const) {
      const rows = await journalRows(id);
      // Each message accepted once, and reached an agent once: one turn started per message.
      expect(rows.filter((r) => r.type === 'user_message').map((r) => r.localId), `${id}: each message once`).toEqual(sent);
      expect(rows.filter((r) => r.type === 'turn_ended' && r.localId === 'L1'), `${id}: the killed turn ended once`).toHaveLength(1);
      for (const localId of sent.slice(1)) expect(rows.filter((r) => r.type === 'turn_complete' && r.localId === localId), `${id}: ${localId} ran once`).toHaveLength(1);
      // The fence only grows: along the journal, and the new owner's is above the killed one's.
      const after = await leaseFence(id);
      expect(after).toBeGreaterThan(before);
      expect(rows.map((r) => r.fence)).toEqual(rows.map((r) => r.fence).toSorted((x, y) => x - y));
      expect(rows.filter((r) => r.fence === before).length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.fence !== before && r.fence !== after), 'no write under another fence').toEqual([]);
      // B's stream of it: no gap, no repeat, across the kill and the takeover.
      const seqs = entriesOf(w.frames).map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    }
    // What a late write of the killed A would meet (it has none: SIGKILL): its fence is stale, refused, nothing written.
    const late = new PostgresJournal({ pool: db!.pool, schema });
    try {
      const before = (await journalRows(s1)).length;
      const refused = await rejection(late.append(journalEntry(1, { sessionId: s1, eventId: 'late-1' }), { fence: fences.s1 }));
      expect(isAseError(refused, 'LEASE_LOST'), String(refused)).toBe(true);
      expect((await journalRows(s1)).length).toBe(before);
    } finally {
      await late.close();
    }
    expect(Number(done1.id)).toBeGreaterThan(0);
    watch1.cut();
    watch2.cut();
  });
});
