/**
 * What the input promises cover, in one process (`createSession` with the fake engine and a store
 * whose writes the test can slow down, fail or inspect):
 * - send/decide/abort/switchMode resolve only once the input is in the store, and reject with a
 *   typed AseError when refused (also an `error` notice) or not stored; a caller that never awaits
 *   gets no unhandled rejection;
 * - write-ahead: the engine gets a message only after its delivery is stored;
 * - group commit: inputs made while a write runs share the next write;
 * - a host whose lease another host took is fenced on its next write: its engine stops, it writes
 *   nothing more, its pending promises reject with LEASE_LOST;
 * - restore after a crash: the turn in flight ends `interrupted` (with its notice), the agent is
 *   asked whether it got the message, no timer of the dead host is armed, a state file of another
 *   session is STORE_CORRUPT.
 * Real processes (SIGKILL, SIGSTOP, two hosts): ownership.test.ts and crash-soak.test.ts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AseError,
  createSession,
  EngineRegistry,
  FakeEngine,
  FileStore,
  isAseError,
  MemoryJournal,
  MemoryStore,
  SimulatedClock,
  type FakeScript,
  type PersistedSession,
  type SaveResult,
  type Session,
  type SessionNotice,
  type SessionOptions,
  type UserMessage,
} from '../../src/index.js';
import { rejection } from '../support/async.js';

const T0 = 1_700_000_000_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

let tmp: string;
let open: { session: Session; clock: SimulatedClock }[] = [];
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-durable-'));
});
afterEach(async () => {
  for (const { session, clock } of open) if (!session.snapshot().done) await stopNow(session, clock);
  open = [];
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A MemoryStore whose saves wait for the test (`release()`), or fail, and are counted. */
class GatedStore extends MemoryStore {
  saves: PersistedSession[] = [];
  gated = false;
  failing = false;
  readonly #waiting: (() => void)[] = [];

  override async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    if (this.gated) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    if (this.failing) throw new AseError('STORE_IO', 'disk full (simulated)');
    const result = await super.save(sessionId, state, expectedVersion, fence);
    if (result.ok) this.saves.push(structuredClone(state));
    return result;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Lets the oldest waiting save go on. */
  letGo(): void {
    this.#waiting.shift()?.();
  }
}

/** The fake engine, recording what it was handed and optionally able to say what it received before. */
function agents(script: FakeScript = {}, received?: (message: UserMessage) => boolean | undefined) {
  const engines: FakeEngine[] = [];
  class Agent extends FakeEngine {
    async wasReceived(message: UserMessage): Promise<boolean | undefined> {
      return received?.(message);
    }
  }
  const registry = new EngineRegistry().register({
    name: 'fake',
    capabilities: FakeEngine.capabilities,
    create: (context) => {
      const engine = received ? new Agent(context, script) : new FakeEngine(context, script);
      engines.push(engine);
      return engine;
    },
  });
  return { engines, registry };
}

async function start(options: Partial<SessionOptions> = {}) {
  const clock = (options.clock as SimulatedClock | undefined) ?? new SimulatedClock(T0);
  const notices: SessionNotice[] = [];
  const session = await createSession({
    agent: 'fake',
    workDir: tmp,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    ...options,
    clock,
    onNotice: (n) => notices.push(n),
  });
  open.push({ session, clock });
  return { session, clock, notices };
}

/** Lets promise chains run and simulated time move until `predicate` holds. */
async function until(clock: SimulatedClock, predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    await tick();
    if (predicate()) return;
    clock.advance(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function stopNow(session: Session, clock: SimulatedClock): Promise<void> {
  const stopping = session.stop();
  await until(clock, () => session.snapshot().done, 'the stop');
  await stopping;
}

const errorCodes = (notices: SessionNotice[]) => notices.flatMap((n) => (n.type === 'error' ? [n.error.code] : []));
const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  for (let i = 0; i < 5; i++) await tick();
  return state;
};

describe('send() resolves once the message is stored', () => {
  it('is pending while its write is, resolves with the localId after, and the store then holds the message', async () => {
    const store = new GatedStore();
    const { session, clock } = await start({ store, sessionId: 'd1', registry: agents({ startDelayMs: 10 }).registry });
    await until(clock, () => store.saves.length >= 1 || store.waiting === 0, 'the first write');
    store.gated = true;
    const receipt = session.send('hello', { localId: 'L1' });
    expect(receipt.localId).toBe('L1');
    expect(await settled(receipt)).toBe('pending');
    expect((await store.load('d1'))?.state.queue ?? []).toEqual([]);
    while (store.waiting > 0) {
      store.letGo();
      await tick();
    }
    store.gated = false;
    expect(await receipt).toBe('L1');
    const stored = (await store.load('d1'))!.state;
    expect([...stored.queue.map((q) => q.localId), ...stored.deliveredIds]).toContain('L1');
  });

  it('group-commits: three sends made while a write runs share the next write', async () => {
    const store = new GatedStore();
    const { session, clock } = await start({ store, sessionId: 'd2', registry: agents({ startDelayMs: 1_000 }).registry });
    await until(clock, () => store.waiting === 0 && !session.snapshot().done, 'quiet');
    for (let i = 0; i < 5; i++) await tick();
    store.gated = true;
    const first = session.send('one', { localId: 'L1' });
    await tick();
    expect(store.waiting).toBe(1); // L1's write is in flight
    const rest = [session.send('two', { localId: 'L2' }), session.send('three', { localId: 'L3' })];
    const before = store.saves.length;
    store.letGo();
    await first;
    expect(await settled(Promise.all(rest))).toBe('pending'); // their write is the next one
    expect(store.waiting).toBe(1);
    store.letGo();
    store.gated = false;
    expect(await Promise.all(rest)).toEqual(['L2', 'L3']);
    expect(store.saves.length - before).toBe(2); // one write for L1, one for L2 + L3
    expect(store.saves.at(-1)!.queue.map((q) => q.localId)).toEqual(['L1', 'L2', 'L3']);
  });

  it('rejects with PERSIST_FAILED when the write fails (the message stays queued in memory)', async () => {
    const store = new GatedStore();
    const { session, clock, notices } = await start({ store, sessionId: 'd3', registry: agents({ startDelayMs: 1_000 }).registry });
    await until(clock, () => store.saves.length >= 1, 'the first write');
    store.failing = true;
    const error = await rejection(session.send('hello', { localId: 'L1' }));
    expect(isAseError(error, 'PERSIST_FAILED')).toBe(true);
    expect(errorCodes(notices)).toContain('PERSIST_FAILED');
    expect(session.snapshot().queue.map((q) => q.localId)).toEqual(['L1']);
    store.failing = false;
  });

  it('write-ahead: the engine gets the message only once its delivery is stored', async () => {
    const store = new GatedStore();
    const fake = agents({});
    const { session, clock } = await start({ store, sessionId: 'd4', registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    await until(clock, () => store.waiting === 0, 'writes to settle');
    store.gated = true;
    const sending = session.send('hello', { localId: 'L1' });
    expect(session.snapshot().phase).toBe('running'); // delivered in the statechart at once...
    for (let i = 0; i < 10; i++) await tick();
    expect(fake.engines[0]!.sent).toEqual([]); // ...but not to the agent before it is on record
    store.letGo();
    store.gated = false;
    await sending;
    await until(clock, () => fake.engines[0]!.sent.length === 1, 'the engine to get it');
    expect(store.saves.find((s) => s.turn?.localId === 'L1')).toMatchObject({ deliveredIds: ['L1'], queue: [] });
  });

  it('decide, abort and switchMode resolve once stored too', async () => {
    const store = new GatedStore();
    const fake = agents({ turns: [[{ ask: { requestId: 'p1', toolName: 'Bash', input: {} } }, { stall: true }]] });
    const { session, clock } = await start({ store, sessionId: 'd5', registry: fake.registry });
    await session.send('go', { localId: 'L1' });
    await until(clock, () => 'p1' in session.snapshot().requests, 'the request');
    await session.decide('p1', 'allow');
    expect((await store.load('d5'))!.state.completed['p1']).toMatchObject({ status: 'approved' });
    await session.abort();
    await session.switchMode('local');
    expect((await store.load('d5'))!.state.mode).toBe('local');
  });
});

describe('refusals reject, are emitted as error notices, and never go unhandled', () => {
  it('INVALID_INPUT and the statechart refusals reject with their code and appear as error notices', async () => {
    const { session, notices } = await start({ registry: agents({ startDelayMs: 1_000 }).registry });
    const invalid = await rejection(session.send(''));
    expect(isAseError(invalid, 'INVALID_INPUT')).toBe(true);
    expect(isAseError(await rejection(session.abort()), 'NOTHING_TO_ABORT')).toBe(true);
    expect(isAseError(await rejection(session.decide('nope', 'allow')), 'PERMISSION_NOT_FOUND')).toBe(true);
    expect(isAseError(await rejection(session.switchMode('sideways' as 'local')), 'INVALID_INPUT')).toBe(true);
    await session.send('x', { localId: 'L1' });
    const duplicate = await rejection(session.send('x', { localId: 'L1' }));
    expect(duplicate).toMatchObject({ code: 'DUPLICATE_SEND', details: { localId: 'L1' } });
    expect(errorCodes(notices)).toEqual(['INVALID_INPUT', 'NOTHING_TO_ABORT', 'PERMISSION_NOT_FOUND', 'INVALID_INPUT', 'DUPLICATE_SEND']);
  });

  it('SESSION_STOPPED while stopping and after: rejected; a notice until done, nothing after done', async () => {
    const { session, clock, notices } = await start({ registry: agents({ stopDelayMs: 50 }).registry });
    const stopping = session.stop();
    expect(isAseError(await rejection(session.send('late')), 'SESSION_STOPPED')).toBe(true);
    expect(errorCodes(notices)).toEqual(['SESSION_STOPPED']);
    await stopNow(session, clock);
    await stopping;
    expect(isAseError(await rejection(session.send('after')), 'SESSION_STOPPED')).toBe(true);
    expect(isAseError(await rejection(session.decide('x', 'allow')), 'SESSION_STOPPED')).toBe(true);
    expect(errorCodes(notices)).toEqual(['SESSION_STOPPED']); // nothing follows done
    expect(notices.at(-1)?.type).toBe('done');
  });

  it('setOnline after the session is done: nothing happens, nothing is thrown (a server grace timer may fire then)', async () => {
    const { session, clock, notices } = await start({ registry: agents({ stopDelayMs: 50 }).registry });
    const stopping = session.stop();
    await stopNow(session, clock);
    await stopping;
    const before = notices.length;
    expect(() => session.setOnline(false)).not.toThrow();
    expect(() => session.setOnline(true)).not.toThrow();
    expect(notices.length).toBe(before);
  });

  it('a caller that never awaits (the README way) gets no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { session, clock, notices } = await start({ registry: agents({ startDelayMs: 1_000 }).registry });
      session.send('');
      session.send('fine', { localId: 'L1' });
      session.send('again', { localId: 'L1' });
      session.abort();
      session.decide('nope', 'deny');
      await stopNow(session, clock);
      session.send('after the end');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
      expect(errorCodes(notices)).toEqual(['INVALID_INPUT', 'DUPLICATE_SEND', 'NOTHING_TO_ABORT', 'PERMISSION_NOT_FOUND']);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an input given inside a listener is applied right after the event and its promise tells the outcome', async () => {
    const fake = agents({ turns: [[{ ask: { requestId: 'p1', toolName: 'Bash', input: {} } }, { complete: {} }]] });
    const { session, clock } = await start({ registry: fake.registry });
    const outcomes: Promise<void>[] = [];
    session.on('permission_prompt', (p) => {
      outcomes.push(session.decide(p.requestId, 'allow'), session.decide(p.requestId, 'deny'));
    });
    await session.send('go', { localId: 'L1' });
    await until(clock, () => outcomes.length === 2, 'the prompt');
    const [first, second] = outcomes;
    await first;
    expect(isAseError(await rejection(second!), 'PERMISSION_ALREADY_DECIDED')).toBe(true);
    expect(fake.engines[0]!.answers).toEqual([{ requestId: 'p1', decision: { behavior: 'allow' } }]);
  });
});

describe('a host whose lease another host took', () => {
  it('finds out on its next write: LEASE_LOST, its engine stops, it writes nothing more', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const fakeA = agents({ turns: [[{ stall: true }]] });
    const a = await start({ store, journal, sessionId: 'owned', registry: fakeA.registry });
    await a.session.send('first', { localId: 'L1' });
    await until(a.clock, () => fakeA.engines[0]?.sent.length === 1, 'A to deliver');
    const refused = await rejection(createSession({ agent: 'fake', workDir: tmp, sessionId: 'owned', store, journal, clock: new SimulatedClock(T0) }));
    expect(refused).toMatchObject({ code: 'SESSION_OWNED', details: { sessionId: 'owned', owner: { pid: process.pid } } });

    const b = await start({ store, journal, sessionId: 'owned', registry: agents({}).registry, takeOver: true, clock: new SimulatedClock(T0 + 1_000) });
    await until(b.clock, () => b.session.snapshot().phase === 'idle' || b.session.snapshot().phase === 'running', 'B to start');
    const storedByB = await store.load('owned');
    const entriesBefore = (await journal.read('owned')).length;

    const late = await rejection(a.session.send('second', { localId: 'L2' }));
    expect(isAseError(late, 'LEASE_LOST')).toBe(true);
    expect(errorCodes(a.notices)).toContain('LEASE_LOST');
    await until(a.clock, () => a.session.snapshot().done, 'A to wind down');
    expect(fakeA.engines[0]!.stopped).toBe(true);
    expect(await store.load('owned')).toEqual(storedByB); // A wrote nothing more
    const journaledAfter = (await journal.read('owned')).slice(entriesBefore);
    expect(journaledAfter.filter((e) => (e.payload as { localId?: string }).localId === 'L2')).toEqual([]);
    // Wound down, but it did not stop on its own: every input but stop says why.
    expect(isAseError(await rejection(a.session.decide('x', 'allow')), 'LEASE_LOST')).toBe(true);
  });

  it('an idle host whose renewal finds the lease gone refuses the next send with LEASE_LOST, not SESSION_STOPPED', async () => {
    // The FileStore's lease clock is the session's clock; "another host" is another owner id on the dir.
    const clock = new SimulatedClock(T0);
    const dir = path.join(tmp, 'sessions');
    const { session, notices } = await start({ store: new FileStore({ dir, now: () => clock.now() }), sessionId: 'idle-owned', leaseTtlMs: 1_000, clock });
    await until(clock, () => session.snapshot().phase === 'idle', 'A to start');
    await session.send('first', { localId: 'L1' });
    const other = new FileStore({ dir, hostId: 'another-host', now: () => clock.now() });
    const taken = await other.acquire('idle-owned', { ttlMs: 60_000, force: true });
    const storedByA = await other.load('idle-owned');
    // Nothing is written from here on: only the renewal timer can find out (within one ttl of the
    // last check, and a renewal interval). A heartbeat batch waits on the real clock, so time moves both ways.
    for (const deadline = Date.now() + 30_000; !errorCodes(notices).includes('LEASE_LOST'); ) {
      if (Date.now() > deadline) throw new Error(`A never noticed: notices ${JSON.stringify(errorCodes(notices))}`);
      clock.advance(50);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(clock.now() - T0).toBeLessThan(1_000 + 1_000 / 3 + 500);
    const late = await rejection(session.send('second', { localId: 'L2' }));
    expect(isAseError(late, 'LEASE_LOST'), String(late)).toBe(true);
    expect((late as AseError).message).toContain('another host took over');
    await until(clock, () => session.snapshot().done, 'A to wind down');
    expect(isAseError(await rejection(session.send('third', { localId: 'L3' })), 'LEASE_LOST')).toBe(true);
    expect(isAseError(await rejection(session.setModel('other')), 'LEASE_LOST')).toBe(true);
    expect(errorCodes(notices).filter((code) => code !== 'LEASE_LOST')).toEqual([]);
    expect(await other.load('idle-owned')).toEqual(storedByA); // A wrote nothing more
    expect(JSON.parse(await fs.readFile(path.join(dir, 'idle-owned.lease'), 'utf8'))).toMatchObject({ fence: taken.fence });
  });
});

describe('restore after a crash', () => {
  /** A stored session whose host died mid-turn: L1 handed to the engine, L2 queued behind it. */
  async function crashed(store: MemoryStore | FileStore, sessionId: string): Promise<void> {
    const state: PersistedSession = {
      schemaVersion: 1,
      sessionId,
      agent: 'fake',
      workDir: tmp,
      mode: 'remote',
      phase: 'running',
      gen: 3,
      resumeToken: 'tok-3',
      queue: [{ localId: 'L2', text: 'second', queuedAt: T0 - 50 }],
      requests: { p1: { toolName: 'Bash', input: {}, gen: 3, createdAt: T0 - 40, deadline: T0 + 1_000 } },
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
      deliveredIds: ['L1'],
      turn: { localId: 'L1', text: 'first', gen: 3, startedAt: T0 - 60, eventId: 'dead.3-4' },
      updatedAt: T0 - 30,
    };
    expect(await store.save(sessionId, state, 0)).toMatchObject({ ok: true });
  }

  for (const received of [false, true, undefined]) {
    it(`ends the turn in flight interrupted (with a notice), asks the agent, ${received === false ? 'sends it again since it never arrived' : 'does not send it again'}`, async () => {
      const store = new MemoryStore();
      await crashed(store, 'c1');
      const fake = agents({}, () => received);
      const { session, clock, notices } = await start({ store, sessionId: 'c1', registry: fake.registry });
      const transcript = notices.flatMap((n) => (n.type === 'transcript' ? [[n.entry.type, n.entry.payload]] : []));
      expect(transcript).toEqual([
        // The journal (empty here) lacks the dead host's user_message: it is written first.
        ['user_message', { localId: 'L1', text: 'first', recovered: true }],
        ['turn_ended', { localId: 'L1', status: 'interrupted', reason: 'the host stopped during the turn' }],
        ['permission_resolved', { requestId: 'p1', status: 'cancelled', reason: 'session restarted before a decision' }],
      ]);
      expect(session.snapshot()).toMatchObject({ gen: 4, requests: {} });
      // No timer of the dead host is armed: its request (and deadline) ended; only this generation's timers run.
      expect(clock.nextDue()).not.toBe(T0 + 1_000);
      await until(clock, () => session.snapshot().phase === 'idle' && session.snapshot().queue.length === 0, 'the queue to go out');
      expect(fake.engines[0]!.sent.map((m) => m.localId)).toEqual(received === false ? ['L1', 'L2'] : ['L2']);
      const checked = notices.flatMap((n) => (n.type === 'transcript' && n.entry.type === 'delivery_checked' ? [n.entry.payload] : []));
      expect(checked).toEqual([{ localId: 'L1', received: received ?? null }]);
    });
  }

  it('a state file holding another session is STORE_CORRUPT, and no lease is left held', async () => {
    const dir = path.join(tmp, 'sessions');
    const store = new FileStore({ dir });
    await crashed(store, 'other');
    await fs.copyFile(path.join(dir, 'other.json'), path.join(dir, 'mine.json'));
    const error = await rejection(createSession({ agent: 'fake', workDir: tmp, sessionId: 'mine', store, journal: new MemoryJournal(), clock: new SimulatedClock(T0) }));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain('holds session "other", not "mine"');
    // The stored state is read before the lease is taken (to find the agent it runs), so no lease is held: none was taken, or it was given back.
    const lease = await fs.readFile(path.join(dir, 'mine.lease'), 'utf8').then((text) => JSON.parse(text) as { owner: unknown }, () => ({ owner: null }));
    expect(lease.owner).toBeNull();
  });
});
