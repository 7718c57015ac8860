/**
 * `createSupervisor()` end to end on the real clock, with the fake engine and the default file
 * store and journal in a temp data dir: create / open / get / list / stop, the `maxSessions` limit,
 * subscriptions (a snapshot first, then tagged notices, across re-opens), `shutdown()` stopping
 * every session in parallel, and two supervisors on one data dir (one owner per session).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSupervisor, fakeEngine, isAseError, MemoryJournal, MemoryStore, type Session, type Supervisor, type SupervisedNotice } from '../../src/index.js';

let dir: string;
let dataDir: string;
let workDir: string;
const supervisors: Supervisor[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-supervisor-'));
  dataDir = path.join(dir, 'data');
  workDir = path.join(dir, 'work');
  await fs.mkdir(workDir);
});

afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.shutdown()));
  await fs.rm(dir, { recursive: true, force: true });
});

function supervisor(options: Parameters<typeof createSupervisor>[0] = {}): Supervisor {
  const created = createSupervisor({ dataDir, engines: [fakeEngine({ startDelayMs: 0 })], ...options });
  supervisors.push(created);
  return created;
}

const codeOf = (error: unknown) => (isAseError(error) ? error.code : String(error));

/** Resolves once the session is idle (at once if it is already). */
async function idle(session: Session): Promise<void> {
  if (session.snapshot().phase === 'idle') return;
  await session.waitFor('status', (n) => n.phase === 'idle', { timeoutMs: 5_000 });
}

describe('createSupervisor', () => {
  it('creates, gets, lists (open and stored), stops and opens again with the stored agent and directory', async () => {
    const sup = supervisor();
    const a = await sup.create({ agent: 'fake', workDir, sessionId: 'alpha' });
    const b = await sup.create({ agent: 'fake', workDir });
    expect(sup.get('alpha')).toBe(a);
    expect(sup.get(b.id)).toBe(b);
    expect(sup.size).toBe(2);
    const turn = await a.run('hello');
    expect(turn.text).toBe('echo: hello');

    const listed = await sup.list();
    expect(listed.map((i) => [i.sessionId, i.status]).sort()).toEqual([
      ['alpha', 'running'],
      [b.id, 'running'],
    ].sort());
    const alpha = listed.find((i) => i.sessionId === 'alpha')!;
    expect(alpha).toMatchObject({ agent: 'fake', workDir, phase: 'idle', mode: 'remote', queued: 0, openRequests: 0, usage: { turns: 1 } });
    expect(alpha.costUsd).toBe(alpha.usage.costUsd);
    expect(alpha.resumeToken).toEqual(expect.any(String));

    const final = await sup.stop('alpha');
    expect(final?.phase).toBe('stopped');
    expect(sup.get('alpha')).toBeUndefined();
    expect(await sup.stop('alpha')).toBeUndefined();
    const afterStop = await sup.list();
    expect(afterStop.find((i) => i.sessionId === 'alpha')).toMatchObject({ status: 'stored', phase: 'stopped', usage: { turns: 1 } });
    expect(afterStop.find((i) => i.sessionId === b.id)?.status).toBe('running');

    // open() takes agent and directory from the store, and continues the session.
    const again = await sup.open('alpha');
    expect(again).not.toBe(a);
    expect(await sup.open('alpha')).toBe(again);
    expect(again.snapshot()).toMatchObject({ sessionId: 'alpha', agent: 'fake', usage: { turns: 1 } });
    expect((await again.run('more')).text).toBe('echo: more');
    expect(again.snapshot().usage.turns).toBe(2);
    expect(again.snapshot().gen).toBe(2);
  });

  it('refuses an unknown id, an id already open, and options createSession refuses', async () => {
    const sup = supervisor();
    await expect(sup.open('nobody')).rejects.toSatisfy((e) => codeOf(e) === 'SESSION_NOT_FOUND');
    await sup.create({ agent: 'fake', workDir, sessionId: 'one' });
    await expect(sup.create({ agent: 'fake', workDir, sessionId: 'one' })).rejects.toSatisfy((e) => codeOf(e) === 'SESSION_OWNED');
    await expect(sup.create({ agent: 'nope', workDir })).rejects.toSatisfy((e) => codeOf(e) === 'UNKNOWN_ENGINE');
    await expect(sup.create({ agent: 'fake', workDir: path.join(dir, 'missing') })).rejects.toSatisfy((e) => codeOf(e) === 'INVALID_OPTIONS');
    // Refused creates hold no slot.
    expect(sup.size).toBe(1);
  });

  it('concurrent opens of one id share one session', async () => {
    const sup = supervisor();
    const first = await sup.create({ agent: 'fake', workDir, sessionId: 'shared' });
    await first.stop();
    const [x, y] = await Promise.all([sup.open('shared'), sup.open('shared')]);
    expect(x).toBe(y);
    expect(sup.size).toBe(1);
  });

  it('maxSessions: one more is SUPERVISOR_FULL (counting those still opening); stopping one frees its slot', async () => {
    const sup = supervisor({ maxSessions: 2 });
    const first = sup.create({ agent: 'fake', workDir });
    const second = sup.create({ agent: 'fake', workDir });
    // Both are still being created: the third is refused already.
    const third = sup.create({ agent: 'fake', workDir });
    await expect(third).rejects.toSatisfy((e) => codeOf(e) === 'SUPERVISOR_FULL' && isAseError(e) && (e.details as { maxSessions: number }).maxSessions === 2);
    const [a] = await Promise.all([first, second]);
    await expect(sup.create({ agent: 'fake', workDir })).rejects.toSatisfy((e) => codeOf(e) === 'SUPERVISOR_FULL');
    await sup.stop(a.id);
    expect(sup.size).toBe(1);
    await expect(sup.create({ agent: 'fake', workDir })).resolves.toBeDefined();
    expect(() => createSupervisor({ maxSessions: 0 })).toThrow(/maxSessions/);
  });

  it('subscribe: a snapshot first (a late client knows where the session stands), then its notices, tagged, across re-opens', async () => {
    const sup = supervisor();
    const session = await sup.create({ agent: 'fake', workDir, sessionId: 'watched' });
    await idle(session);
    const seen: SupervisedNotice[] = [];
    const off = sup.subscribe('watched', (n) => seen.push(n));
    expect(seen).toEqual([{ type: 'snapshot', sessionId: 'watched', session: expect.objectContaining({ sessionId: 'watched', status: 'running', phase: 'idle' }) }]);
    await session.run('hi');
    expect(seen.every((n) => n.sessionId === 'watched')).toBe(true);
    expect(seen.some((n) => n.type === 'agent' && n.event.type === 'turn_complete')).toBe(true);
    expect(seen.some((n) => n.type === 'transcript' && n.entry.type === 'user_message')).toBe(true);

    await sup.stop('watched');
    expect(seen.at(-1)?.type).toBe('done');
    // Still subscribed by id: the session opened again is heard from its first status on.
    const count = seen.length;
    const reopened = await sup.open('watched');
    expect(seen.slice(count).find((n) => n.type === 'status')).toMatchObject({ sessionId: 'watched', phase: 'starting' });
    off();
    const after = seen.length;
    await reopened.run('unheard');
    expect(seen.length).toBe(after);

    // A stored session: its snapshot comes from the store.
    await sup.stop('watched');
    const late: SupervisedNotice[] = [];
    sup.subscribe('watched', (n) => late.push(n));
    await expect.poll(() => late.length).toBe(1);
    expect(late[0]).toMatchObject({ type: 'snapshot', sessionId: 'watched', session: { status: 'stored', phase: 'stopped', usage: { turns: 2 } } });
  });

  it('subscribeAll: a snapshot per open session, then every session\'s notices tagged with its id; a throwing subscriber harms nobody', async () => {
    const sup = supervisor();
    const a = await sup.create({ agent: 'fake', workDir, sessionId: 'a' });
    const b = await sup.create({ agent: 'fake', workDir, sessionId: 'b' });
    sup.subscribeAll(() => {
      throw new Error('a buggy subscriber');
    });
    const all: SupervisedNotice[] = [];
    const off = sup.subscribeAll((n) => all.push(n));
    expect(all.map((n) => [n.type, n.sessionId])).toEqual([
      ['snapshot', 'a'],
      ['snapshot', 'b'],
    ]);
    await Promise.all([a.run('to a'), b.run('to b')]);
    const c = await sup.create({ agent: 'fake', workDir, sessionId: 'c' });
    await c.run('to c');
    for (const id of ['a', 'b', 'c']) {
      expect(all.some((n) => n.sessionId === id && n.type === 'transcript' && n.entry.type === 'turn_complete')).toBe(true);
    }
    expect(all.find((n) => n.sessionId === 'c')).toMatchObject({ type: 'status', phase: 'starting' });
    off();
    const count = all.length;
    await a.run('again');
    expect(all.length).toBe(count);
  });

  it('shutdown() stops every session in parallel, refuses new ones, and a supervisor signal triggers it', async () => {
    const STOP_MS = 300;
    const controller = new AbortController();
    const sup = supervisor({ engines: [fakeEngine({ startDelayMs: 0, stopDelayMs: STOP_MS })], signal: controller.signal });
    const sessions = await Promise.all(Array.from({ length: 6 }, () => sup.create({ agent: 'fake', workDir })));
    await Promise.all(sessions.map(idle));
    const t0 = performance.now();
    controller.abort();
    await sup.shutdown();
    const took = performance.now() - t0;
    for (const s of sessions) expect(s.snapshot().phase).toBe('stopped');
    // One after another would take 6 × 300 ms.
    expect(took).toBeLessThan(3 * STOP_MS);
    expect(sup.size).toBe(0);
    await expect(sup.create({ agent: 'fake', workDir })).rejects.toSatisfy((e) => codeOf(e) === 'SUPERVISOR_CLOSED');
    await expect(sup.open(sessions[0]!.id)).rejects.toSatisfy((e) => codeOf(e) === 'SUPERVISOR_CLOSED');
    expect((await sup.list()).every((i) => i.status === 'stored' && i.phase === 'stopped')).toBe(true);
  });

  it('two supervisors on one data dir: a session open in one is SESSION_OWNED in the other until it stops', async () => {
    const one = supervisor();
    const other = supervisor();
    const session = await one.create({ agent: 'fake', workDir, sessionId: 'contested' });
    await idle(session);
    await expect.poll(async () => (await other.list()).some((i) => i.sessionId === 'contested')).toBe(true);
    await expect(other.open('contested')).rejects.toSatisfy((e) => codeOf(e) === 'SESSION_OWNED');
    expect(other.size).toBe(0);
    expect((await other.list()).find((i) => i.sessionId === 'contested')?.status).toBe('stored');
    await one.stop(session.id);
    const taken = await other.open('contested');
    expect(taken.snapshot().gen).toBe(2);
  });

  it('works over a given store and journal, and lists what it cannot read through onUnreadable', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const sup = supervisor({ store, journal, defaults: { config: { persistDebounceMs: 5 } } });
    const s = await sup.create({ agent: 'fake', workDir, sessionId: 'mem' });
    await s.run('x');
    await sup.stop('mem');
    expect((await journal.read('mem')).some((e) => e.type === 'turn_complete')).toBe(true);
    expect((await store.load('mem'))?.state.phase).toBe('stopped');

    // A corrupt state file under a file store is reported, the rest listed.
    const files = supervisor();
    await (await files.create({ agent: 'fake', workDir, sessionId: 'fine' })).stop();
    await fs.writeFile(path.join(dataDir, 'sessions', 'broken.json'), '{not json');
    const unreadable: string[] = [];
    const listed = await files.list({ onUnreadable: (id, error) => unreadable.push(`${id}: ${error.code}`) });
    expect(listed.map((i) => i.sessionId)).toEqual(['fine']);
    expect(unreadable).toEqual(['broken: STORE_CORRUPT']);
  });

  it('hibernateAfterMs: an idle session stops its agent (status hibernated) and the next send resumes it with the same token', async () => {
    const sup = supervisor({ hibernateAfterMs: 150 });
    const seen: SupervisedNotice[] = [];
    sup.subscribeAll((n) => seen.push(n));
    const session = await sup.create({ agent: 'fake', workDir, sessionId: 'sleepy' });
    await session.run('before');
    const token = session.snapshot().resumeToken;
    await session.waitFor('status', (n) => n.phase === 'hibernated', { timeoutMs: 5_000 });
    await expect.poll(() => session.snapshot().liveGen).toBeNull();
    expect(session.snapshot().state).toEqual({ hibernated: 'asleep' });
    expect((await sup.list()).find((i) => i.sessionId === 'sleepy')).toMatchObject({ status: 'hibernated', phase: 'hibernated' });
    const late: SupervisedNotice[] = [];
    sup.subscribe('sleepy', (n) => late.push(n));
    expect(late[0]).toMatchObject({ type: 'snapshot', session: { status: 'hibernated' } });

    const turn = await session.run('after');
    expect(turn.text).toBe('echo: after');
    expect(session.snapshot()).toMatchObject({ gen: 2, resumeToken: token, usage: { turns: 2 } });
    expect(seen.filter((n) => n.type === 'error')).toEqual([]);
    // What a client saw of it: the phases, nothing else out of the ordinary.
    const phases = seen.filter((n) => n.type === 'status').map((n) => (n as { phase: string }).phase);
    expect(phases).toEqual(['starting', 'running', 'idle', 'hibernated', 'starting', 'running', 'idle']);
  });

  it('a session stored hibernated opens without an agent; its first send starts one with the stored token', async () => {
    const store = new MemoryStore();
    await store.save('stored-asleep', {
      schemaVersion: 1,
      sessionId: 'stored-asleep',
      agent: 'fake',
      workDir,
      mode: 'remote',
      phase: 'hibernated',
      gen: 3,
      resumeToken: 'tok-stored',
      queue: [],
      requests: {},
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 4 },
      deliveredIds: [],
      updatedAt: Date.now() - 1_000,
    }, 0);
    const starts: string[] = [];
    const sup = supervisor({ store, journal: new MemoryJournal() });
    const session = await sup.open('stored-asleep', { onNotice: (n) => n.type === 'agent' && n.event.type === 'ready' && starts.push(`gen ${n.event.gen}`) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(session.snapshot()).toMatchObject({ phase: 'hibernated', state: { hibernated: 'asleep' }, liveGen: null, gen: 3 });
    expect(starts).toEqual([]);
    expect((await sup.list())[0]).toMatchObject({ sessionId: 'stored-asleep', status: 'hibernated' });
    await session.run('wake up');
    expect(starts).toEqual(['gen 4']);
    expect(session.snapshot()).toMatchObject({ resumeToken: 'tok-stored', usage: { turns: 5 } });
  });

  it('list() reads many stored sessions with a bounded number of loads in flight', async () => {
    const store = new MemoryStore();
    const state = (sessionId: string, updatedAt: number) => ({
      schemaVersion: 1 as const,
      sessionId,
      agent: 'fake',
      workDir,
      mode: 'remote' as const,
      phase: 'stopped' as const,
      gen: 1,
      queue: [],
      requests: {},
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
      deliveredIds: [],
      updatedAt,
    });
    for (let i = 0; i < 500; i++) await store.save(`s${i}`, state(`s${i}`, i), 0);
    let inFlight = 0;
    let most = 0;
    const load = store.load.bind(store);
    store.load = async (id: string) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      try {
        return await load(id);
      } finally {
        inFlight -= 1;
      }
    };
    const listed = await supervisor({ store, journal: new MemoryJournal() }).list();
    expect(listed).toHaveLength(500);
    expect(listed[0]?.sessionId).toBe('s499'); // newest activity first
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(32);
  });
});
