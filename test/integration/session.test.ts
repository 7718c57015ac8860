/**
 * `createSession` end to end: the public handle, the SessionActor, the effect runtime, the fake
 * engine, a SimulatedClock, and both the in-memory and the on-disk store/journal.
 *
 * Time only moves when a test moves it. Engine calls and store writes are promise chains, so the
 * helpers below interleave clock steps with event-loop turns (`advance`) or wait on real I/O
 * without moving simulated time (`eventually`).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AseError,
  createSession,
  EngineRegistry,
  FakeEngine,
  FileJournal,
  FileStore,
  MemoryJournal,
  MemoryStore,
  SimulatedClock,
  type EngineFactory,
  type EngineStartSpec,
  type FakeScript,
  type Session,
  type SessionNotice,
  type SessionOptions,
  type SessionStore,
  type StreamNotice,
  type TranscriptEntry,
  type TranscriptJournal,
} from '../../src/index.js';

const T0 = 1_700_000_000_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Moves simulated time forward by `ms` in small steps, letting promise chains run between steps. */
async function advance(clock: SimulatedClock, ms: number, step = 5): Promise<void> {
  const end = clock.now() + ms;
  await tick();
  while (clock.now() < end) {
    clock.advance(Math.min(step, end - clock.now()));
    await tick();
  }
  await tick();
}

/**
 * Waits in real time until `predicate` holds: for file I/O. With a clock, simulated time also moves
 * 5 ms per round, so debounced writes queued behind a slow one get their turn.
 */
async function eventually(predicate: () => boolean | Promise<boolean>, what: string, clock?: SimulatedClock, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    clock?.advance(5);
    await sleep(2);
  }
}

/**
 * Moves simulated time in small steps until `predicate` holds (bounded in both times). With `io`,
 * each step also gives real I/O a millisecond: a message reaches the engine only once its delivery
 * is on disk (write-ahead), which on a file store takes real time.
 */
async function advanceUntil(clock: SimulatedClock, predicate: () => boolean, what: string, maxMs = 5_000, io = false): Promise<void> {
  const end = clock.now() + maxMs;
  const realDeadline = Date.now() + 5_000;
  await tick();
  while (!predicate()) {
    if (clock.now() >= end || Date.now() > realDeadline) throw new Error(`timed out waiting for ${what}`);
    if (io) await sleep(1);
    if (predicate()) break;
    clock.advance(5);
    await tick();
  }
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Fails (instead of hanging the test) when `promise` does not settle within `ms` of real time. */
async function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: did not settle within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function rejection(promise: Promise<unknown>): Promise<AseError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AseError);
    return error as AseError;
  }
  throw new Error('expected a rejection');
}

/**
 * A `fake` factory whose Nth engine (= Nth generation of this factory) plays `scripts[N]` (the
 * last one repeats), recording every engine and the spec it was started with.
 */
function scriptedEngines(...scripts: FakeScript[]) {
  const engines: FakeEngine[] = [];
  const specs: EngineStartSpec[] = [];
  class RecordingEngine extends FakeEngine {
    override async start(spec: EngineStartSpec): Promise<void> {
      specs.push(structuredClone(spec));
      return super.start(spec);
    }
  }
  const factory: EngineFactory = {
    name: 'fake',
    capabilities: FakeEngine.capabilities,
    create: (context) => {
      const engine = new RecordingEngine(context, scripts[Math.min(engines.length, scripts.length - 1)] ?? {});
      engines.push(engine);
      return engine;
    },
  };
  return { factory, engines, specs, registry: () => new EngineRegistry().register(factory) };
}

interface Backend {
  name: string;
  make(dir: string): { store: SessionStore; journal: TranscriptJournal & { close?(): Promise<void> } };
}

const BACKENDS: Backend[] = [
  { name: 'MemoryStore + MemoryJournal', make: () => ({ store: new MemoryStore(), journal: new MemoryJournal() }) },
  {
    // A third party's journal, written before `appendMany` existed: the runtime appends one entry at a time to it.
    name: 'MemoryStore + a journal without appendMany',
    make: () => {
      const inner = new MemoryJournal();
      const plain: TranscriptJournal = { append: (entry) => inner.append(entry), read: (id, range) => inner.read(id, range), flush: () => inner.flush() };
      return { store: new MemoryStore(), journal: plain };
    },
  },
  {
    name: 'FileStore + FileJournal',
    make: (dir) => ({ store: new FileStore({ dir: path.join(dir, 'sessions') }), journal: new FileJournal({ dir: path.join(dir, 'transcripts') }) }),
  },
];

let tmp: string;
/** Sessions a test opened, stopped afterwards so no engine or timer outlives its test. */
let open: { session: Session; clock: SimulatedClock }[] = [];
let journals: { close?(): Promise<void> }[] = [];

beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-session-it-'));
});

afterEach(async () => {
  for (const { session, clock } of open) {
    if (session.snapshot().done) continue;
    const stopped = session.stop();
    await advanceUntil(clock, () => session.snapshot().done, `${session.id} to stop in teardown`);
    await stopped;
  }
  open = [];
  for (const journal of journals) await journal.close?.();
  journals = [];
  await fs.rm(tmp, { recursive: true, force: true });
});

interface StartOptions extends Partial<Omit<SessionOptions, 'clock'>> {
  clock?: SimulatedClock;
}

/** createSession with a SimulatedClock, recording every notice from the moment it returns. */
async function start(options: StartOptions) {
  const clock = options.clock ?? new SimulatedClock(T0);
  const session = await createSession({ agent: 'fake', workDir: tmp, store: new MemoryStore(), journal: new MemoryJournal(), ...options, clock });
  open.push({ session, clock });
  if (options.journal) journals.push(options.journal);
  const notices: SessionNotice[] = [];
  session.on('*', (notice) => notices.push(notice));
  const phases = () => notices.flatMap((n) => (n.type === 'status' ? [n.phase] : []));
  return { session, clock, notices, phases };
}

const entryTypes = (entries: TranscriptEntry[]) => entries.map((e) => e.type);
const stateOf = (session: Session) => session.snapshot().state;

const ASK_TURN: FakeScript = {
  startDelayMs: 10,
  resumeToken: 'tok-1',
  turns: [
    [
      { ask: { requestId: 'perm-1', toolName: 'Bash', input: { command: 'ls' }, callId: 'call-1' }, afterMs: 5 },
      { text: 'listed', afterMs: 5 },
      { complete: { usage: { inputTokens: 100, outputTokens: 7, costUsd: 0.25 } } },
    ],
  ],
};

describe.each(BACKENDS)('a remote tool turn on $name', (backend) => {
  // On disk a message reaches the engine only after its delivery is written: give real I/O its time.
  const io = backend.name.startsWith('File');
  const until = (clock: SimulatedClock, predicate: () => boolean, what: string) => advanceUntil(clock, predicate, what, 5_000, io);
  it('prompts, delivers the allow (with updatedInput) to the engine, completes, and journals every entry in order', async () => {
    const { store, journal } = backend.make(tmp);
    const fake = scriptedEngines(ASK_TURN);
    const { session, clock, notices, phases } = await start({ sessionId: 'tool-turn', registry: fake.registry(), store, journal });
    const prompts: SessionNotice[] = [];
    session.on('permission_prompt', (p) => prompts.push(p));

    expect(session.id).toBe('tool-turn');
    expect(session.snapshot()).toMatchObject({ phase: 'starting', mode: 'remote', gen: 1, liveGen: 1, state: { remote: 'launching' }, done: false });
    expect(session.send('please list', { localId: 'L1' }).localId).toBe('L1');
    await until(clock, () => prompts.length > 0, 'the permission prompt');

    // The engine is ready at +10 and asks 5 ms after it got the message (in memory: at once; on disk: once written).
    const askedAt = session.snapshot().requests['perm-1']!.createdAt;
    if (!io) expect(askedAt).toBe(T0 + 15);
    expect(prompts).toEqual([
      { type: 'permission_prompt', requestId: 'perm-1', toolName: 'Bash', input: { command: 'ls' }, callId: 'call-1', deadline: askedAt + 600_000 },
    ]);
    expect(session.snapshot().requests).toEqual({
      'perm-1': { toolName: 'Bash', input: { command: 'ls' }, gen: 1, createdAt: askedAt, callId: 'call-1', deadline: askedAt + 600_000 },
    });
    expect(stateOf(session)).toEqual({ remote: 'running' });
    expect(fake.engines[0]!.answers).toEqual([]);

    const decided = session.decide('perm-1', 'allow', { updatedInput: { command: 'ls -la' } });
    expect(fake.engines[0]!.answers).toEqual([{ requestId: 'perm-1', decision: { behavior: 'allow', updatedInput: { command: 'ls -la' } } }]);
    expect(session.snapshot().requests).toEqual({});
    expect(session.snapshot().completed).toEqual({ 'perm-1': { status: 'approved', decidedAt: askedAt, gen: 1 } });
    // The promise resolves once the decision is stored.
    await within(decided, 'the decision to be stored');
    expect((await store.load('tool-turn'))?.state.completed['perm-1']).toMatchObject({ status: 'approved' });

    await until(clock, () => session.snapshot().phase === 'idle', 'the turn to complete');
    expect(phases()).toEqual(['running', 'idle']);
    expect(session.snapshot().usage).toEqual({ inputTokens: 100, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.25, turns: 1 });
    expect(notices.filter((n) => n.type === 'permission_resolved')).toEqual([{ type: 'permission_resolved', requestId: 'perm-1', status: 'approved' }]);
    expect(fake.specs).toEqual([{ gen: 1, mode: 'remote', workDir: tmp, options: {} }]);
    expect(fake.engines[0]!.sent).toEqual([{ localId: 'L1', text: 'please list' }]);

    const final = await stopSession(session, clock);
    expect(final.phase).toBe('stopped');
    // Every transcript notice reached the journal, in the same order, numbered without gaps
    // (the journal's seq 1, 2, 3, ... on each).
    const entries = await journal.read('tool-turn');
    const noticed = notices.flatMap((n) => (n.type === 'transcript' ? [n.entry] : []));
    expect(entries).toEqual(noticed.map((entry, index) => ({ ...entry, seq: index + 1 })));
    // `<instance>.<gen>-<seq>`: one instance tag for this run, then gen and a gapless counter.
    const tags = new Set(entries.map((e) => e.eventId.split('.')[0]));
    expect(tags.size).toBe(1);
    expect([...tags][0]).toMatch(/^[0-9a-f]{8}$/);
    expect(entries.map((e) => [e.eventId.split('.')[1], e.type])).toEqual([
      ['1-1', 'session_identified'],
      ['1-2', 'user_message'],
      ['1-3', 'permission_request'],
      ['1-4', 'permission_resolved'],
      ['1-5', 'tool_result'],
      ['1-6', 'message'],
      ['1-7', 'turn_complete'],
      ['1-8', 'exited'],
    ]);
    expect(entries.every((e) => e.sessionId === 'tool-turn' && e.agent === 'fake' && e.gen === 1)).toBe(true);
    expect(entries[1]!.payload).toEqual({ localId: 'L1', text: 'please list' });
    expect(entries[3]!.payload).toEqual({ requestId: 'perm-1', status: 'approved' });
    expect(entries[4]!.payload).toEqual({ callId: 'call-1', status: 'completed', output: 'ok', isError: false });
    expect(entries[6]!.payload).toEqual({
      localId: 'L1',
      status: 'completed',
      usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.25 },
    });
    expect(entries.map((e) => e.ts)).toEqual([...entries.map((e) => e.ts)].sort((a, b) => a - b));
  });

  it('deciding from inside the permission_prompt listener (the documented pattern) reaches the engine', async () => {
    const { store, journal } = backend.make(tmp);
    const fake = scriptedEngines(ASK_TURN);
    const { session, clock } = await start({ sessionId: 'inline', registry: fake.registry(), store, journal });
    session.on('permission_prompt', (p) => session.decide(p.requestId, 'allow'));
    session.send('list', { localId: 'L1' });
    await until(clock, () => session.snapshot().usage.turns === 1, 'the turn');
    expect(fake.engines[0]!.answers).toEqual([{ requestId: 'perm-1', decision: { behavior: 'allow' } }]);
    expect(session.snapshot().completed['perm-1']?.status).toBe('approved');
    await stopSession(session, clock); // the runtime hands entries to the journal one at a time; stop settles them
    const entries = await journal.read('inline');
    expect(entries.find((e) => e.type === 'tool_result')?.payload).toEqual({ callId: 'call-1', status: 'completed', output: 'ok', isError: false });
  });

  it('stop() resolves with the final snapshot, cancels what is open, and the store holds phase stopped', async () => {
    const { store, journal } = backend.make(tmp);
    const fake = scriptedEngines(ASK_TURN);
    const { session, clock, notices } = await start({ sessionId: 'stopper', registry: fake.registry(), store, journal });
    session.send('list', { localId: 'L1' });
    await until(clock, () => 'perm-1' in session.snapshot().requests, 'the permission request');

    const stopping = session.stop();
    expect(session.snapshot().phase).toBe('stopping');
    expect(fake.engines[0]!.stopped).toBe(true);
    expect((await rejection(session.send('too late', { localId: 'L2' }))).code).toBe('SESSION_STOPPED');
    await until(clock, () => session.snapshot().done, 'the stop');
    const final = await stopping;

    expect(final).toMatchObject({
      sessionId: 'stopper',
      phase: 'stopped',
      state: 'stopped',
      gen: 1,
      liveGen: null,
      resumeToken: 'tok-1',
      queue: [],
      requests: {},
      done: true,
    });
    expect(final.completed).toEqual({ 'perm-1': { status: 'cancelled', decidedAt: expect.any(Number), gen: 1, reason: 'session stopped' } });
    if (!io) expect(final.completed['perm-1']!.decidedAt).toBe(T0 + 15);
    expect(final).toEqual(session.snapshot());
    expect(await session.done).toBe(final);
    expect(await session.stop()).toBe(final); // idempotent
    expect(notices.at(-1)).toEqual({ type: 'done', snapshot: final });
    expect(notices.filter((n) => n.type === 'done')).toHaveLength(1);
    expect((await rejection(session.send('after', { localId: 'L3' }))).code).toBe('SESSION_STOPPED');

    const stored = await store.load('stopper');
    expect(stored?.state).toMatchObject({
      sessionId: 'stopper',
      phase: 'stopped',
      gen: 1,
      resumeToken: 'tok-1',
      queue: [],
      requests: {},
      completed: { 'perm-1': { status: 'cancelled', gen: 1, reason: 'session stopped' } },
      deliveredIds: ['L1'],
    });
    const entries = await journal.read('stopper');
    expect(entryTypes(entries)).toEqual(['session_identified', 'user_message', 'permission_request', 'turn_ended', 'permission_resolved', 'exited']);
    expect(entries[3]!.payload).toEqual({ localId: 'L1', status: 'cancelled', reason: 'session stopped' });
    if (backend.name.startsWith('File')) {
      const text = await fs.readFile(path.join(tmp, 'transcripts', 'stopper.jsonl'), 'utf8');
      expect(text.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(entries);
      const file = JSON.parse(await fs.readFile(path.join(tmp, 'sessions', 'stopper.json'), 'utf8')) as { version: number; state: { phase: string } };
      expect(file.state.phase).toBe('stopped');
      expect(file.version).toBe(stored!.version);
    }
  });
});

async function stopSession(session: Session, clock: SimulatedClock) {
  const stopping = session.stop();
  await advanceUntil(clock, () => session.snapshot().done, 'the session to stop');
  return stopping;
}

describe('stopping or switching before the engine started', () => {
  it('stop() right after createSession never starts the engine and ends at once, without errors', async () => {
    const fake = scriptedEngines({});
    const journal = new MemoryJournal();
    const { session, clock, notices } = await start({ sessionId: 'early', registry: fake.registry(), journal });
    const stopping = session.stop();
    await advance(clock, 5);
    const final = await within(stopping, 'the early stop');
    expect(final).toMatchObject({ phase: 'stopped', gen: 1, liveGen: null, done: true });
    expect(clock.now()).toBe(T0 + 5); // not the 10 s stop timeout
    expect(fake.specs).toEqual([]); // engine.start() was never called
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);
    expect((await journal.read('early')).map((e) => [e.type, e.payload])).toEqual([
      ['exited', { code: null, signal: null, reason: 'stopped before it started' }],
    ]);
  });

  it("switchMode('local') before the first engine started skips it and starts the local one", async () => {
    const fake = scriptedEngines({});
    const { session, clock, notices } = await start({ registry: fake.registry() });
    session.switchMode('local');
    await advanceUntil(clock, () => session.snapshot().phase === 'local', 'local');
    expect(fake.specs.map((s) => [s.gen, s.mode])).toEqual([[2, 'local']]);
    expect(fake.engines).toHaveLength(2);
    expect(fake.engines[0]!.exitedEmitted).toBe(false);
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);
  });
});

describe('refused inputs reject with typed errors and change nothing', () => {
  it('decide: PERMISSION_NOT_FOUND for an unknown id, PERMISSION_ALREADY_DECIDED for a second answer', async () => {
    const fake = scriptedEngines(ASK_TURN);
    const { session, clock, notices } = await start({ registry: fake.registry() });
    session.send('list', { localId: 'L1' });
    await advanceUntil(clock, () => 'perm-1' in session.snapshot().requests, 'the permission request');

    const before = session.snapshot();
    const unknown = await rejection(session.decide('nope', 'allow'));
    expect(unknown.code).toBe('PERMISSION_NOT_FOUND');
    expect(unknown.message).toBe('no permission request "nope" is known');
    expect(session.snapshot()).toEqual(before);
    expect(fake.engines[0]!.answers).toEqual([]);

    session.decide('perm-1', 'deny', { message: 'not today' });
    expect(fake.engines[0]!.answers).toEqual([{ requestId: 'perm-1', decision: { behavior: 'deny', message: 'not today', interrupt: false } }]);
    const again = await rejection(session.decide('perm-1', 'allow'));
    expect(again.code).toBe('PERMISSION_ALREADY_DECIDED');
    expect(again.message).toBe('permission request "perm-1" already ended as denied');
    expect(fake.engines[0]!.answers).toHaveLength(1);
    expect(session.snapshot().completed['perm-1']?.status).toBe('denied');

    // A refusal rejects the caller's promise and is also reported to every listener.
    expect(notices.filter((n) => n.type === 'error').map((n) => n.type === 'error' && n.error.code)).toEqual([
      'PERMISSION_NOT_FOUND',
      'PERMISSION_ALREADY_DECIDED',
    ]);

    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'the denied turn to end');
    expect(fake.engines[0]!.sent).toHaveLength(1);
  });

  it('send: a repeated localId is DUPLICATE_SEND, whether queued, running or delivered long ago', async () => {
    const fake = scriptedEngines({ turns: [[{ text: 'slow', afterMs: 100 }, { complete: {} }]] });
    const { session, clock } = await start({ registry: fake.registry() });
    session.send('one', { localId: 'L1' });
    expect((await rejection(session.send('one again', { localId: 'L1' }))).code).toBe('DUPLICATE_SEND'); // queued
    await advanceUntil(clock, () => session.snapshot().phase === 'running', 'the turn');
    session.send('two', { localId: 'L2' });
    const running = await rejection(session.send('one', { localId: 'L1' }));
    expect(running.code).toBe('DUPLICATE_SEND');
    expect(running.message).toBe('a message with localId "L1" was already accepted');
    expect((await rejection(session.send('two', { localId: 'L2' }))).code).toBe('DUPLICATE_SEND');
    expect(session.snapshot().queue.map((q) => q.localId)).toEqual(['L2']);

    await advanceUntil(clock, () => session.snapshot().phase === 'idle' && session.snapshot().usage.turns === 2, 'both turns');
    expect((await rejection(session.send('one', { localId: 'L1' }))).code).toBe('DUPLICATE_SEND'); // delivered
    expect(fake.engines[0]!.sent).toEqual([
      { localId: 'L1', text: 'one' },
      { localId: 'L2', text: 'two' },
    ]);
    // Without a localId every send gets a fresh one.
    const a = session.send('free 1');
    const b = session.send('free 2');
    expect(a.localId).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.localId).not.toBe(a.localId);
    // The promise resolves with the same id once the message is stored.
    expect(await a).toBe(a.localId);
    expect(await b).toBe(b.localId);
  });

  it('abort: NOTHING_TO_ABORT while launching or idle; during a turn it cancels it', async () => {
    const fake = scriptedEngines({ startDelayMs: 10, turns: [[{ stall: true }]] });
    const { session, clock, phases, notices } = await start({ registry: fake.registry() });
    const launching = await rejection(session.abort());
    expect(launching.code).toBe('NOTHING_TO_ABORT');
    expect(launching.message).toBe('no turn is running');
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    expect((await rejection(session.abort())).code).toBe('NOTHING_TO_ABORT');
    expect(fake.engines[0]!.aborts).toBe(0);

    session.send('hang', { localId: 'L1' });
    await advance(clock, 50);
    expect(session.snapshot().phase).toBe('running');
    session.abort();
    // The fake engine answers an interrupt at once with turn_complete(cancelled).
    expect(fake.engines[0]!.aborts).toBe(1);
    expect(phases()).toEqual(['idle', 'running', 'interrupting', 'idle']);
    const ends = notices.flatMap((n) => (n.type === 'transcript' && n.entry.type === 'turn_complete' ? [n.entry.payload] : []));
    expect(ends).toEqual([{ localId: 'L1', status: 'cancelled', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } }]);
    expect((await rejection(session.abort())).code).toBe('NOTHING_TO_ABORT');
    expect(fake.engines[0]!.aborts).toBe(1);
  });

  it('abort while the agent ignores the interrupt: a second abort is accepted, the grace timer restarts the engine', async () => {
    const fake = scriptedEngines({ ignoreAbort: true, turns: [[{ stall: true }]] }, {});
    const { session, clock, phases } = await start({ registry: fake.registry(), config: { interruptGraceMs: 1_000 } });
    session.send('hang', { localId: 'L1' });
    await advance(clock, 20);
    session.abort();
    expect(session.snapshot().phase).toBe('interrupting');
    session.abort(); // accepted and ignored while interrupting
    expect(fake.engines[0]!.aborts).toBe(1);
    await advance(clock, 999);
    expect(session.snapshot().phase).toBe('interrupting');
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'the restarted engine');
    expect(phases()).toEqual(['running', 'interrupting', 'switching', 'starting', 'idle']);
    expect(session.snapshot()).toMatchObject({ gen: 2, liveGen: 2 });
    expect(fake.engines[0]!.exitedEmitted).toBe(true);
    expect(fake.engines[1]!.sent).toEqual([]); // the aborted message is not replayed
  });

  it('malformed inputs (a bad decision, an empty message) are INVALID_INPUT', async () => {
    const { session } = await start({});
    expect((await rejection(session.decide('x', 'maybe' as 'allow'))).code).toBe('INVALID_INPUT');
    expect((await rejection(session.send(''))).code).toBe('INVALID_INPUT');
  });
});

describe('mode switches', () => {
  it("switchMode('local') then send hands control back to remote and delivers the message exactly once", async () => {
    const fake = scriptedEngines({});
    const journal = new MemoryJournal();
    const { session, clock, phases } = await start({ sessionId: 'switcher', registry: fake.registry(), journal });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');

    session.switchMode('local');
    expect(session.snapshot()).toMatchObject({ phase: 'switching', mode: 'local' });
    await advanceUntil(clock, () => session.snapshot().phase === 'local', 'local');
    expect(session.snapshot()).toMatchObject({ mode: 'local', gen: 2, liveGen: 2, state: { local: 'active' } });
    expect(fake.engines[0]!.exitedEmitted).toBe(true);

    session.send('from the phone', { localId: 'P1' });
    expect(session.snapshot()).toMatchObject({ phase: 'switching', mode: 'remote' });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle' && session.snapshot().usage.turns === 1, 'the remote turn');

    expect(fake.specs.map((s) => [s.gen, s.mode])).toEqual([
      [1, 'remote'],
      [2, 'local'],
      [3, 'remote'],
    ]);
    expect(fake.engines.map((e) => e.sent)).toEqual([[], [], [{ localId: 'P1', text: 'from the phone' }]]);
    expect(phases()).toEqual(['idle', 'switching', 'starting', 'local', 'switching', 'starting', 'running', 'idle']);
    expect(session.snapshot()).toMatchObject({ mode: 'remote', gen: 3, liveGen: 3, queue: [] });
    // A repeated switch to the current mode is a no-op.
    session.switchMode('remote');
    expect(session.snapshot().phase).toBe('idle');

    const entries = await journal.read('switcher');
    expect(entries.filter((e) => e.type === 'user_message').map((e) => e.payload)).toEqual([{ localId: 'P1', text: 'from the phone' }]);
    expect(entries.filter((e) => e.type === 'mode_changed').map((e) => [e.gen, e.payload])).toEqual([
      [1, { to: 'local' }],
      [2, { to: 'remote' }],
    ]);
  });
});

describe('crash and restart', () => {
  it('restarts the next generation with the resume token and delivers the messages queued meanwhile', async () => {
    const fake = scriptedEngines(
      { resumeToken: 'tok-crash', turns: [[{ text: 'partial', afterMs: 5 }, { crash: { code: 137, reason: 'boom' }, afterMs: 5 }]] },
      { startDelayMs: 10 },
    );
    const journal = new MemoryJournal();
    const { session, clock, phases, notices } = await start({ sessionId: 'crashy', registry: fake.registry(), journal, config: { restartBaseMs: 100 } });
    session.send('first', { localId: 'L1' });
    await advanceUntil(clock, () => session.snapshot().phase === 'recovering', 'the crash');
    expect(session.snapshot()).toMatchObject({ gen: 1, liveGen: null, resumeToken: 'tok-crash', state: 'recovering' });

    session.send('second', { localId: 'L2' });
    session.send('third', { localId: 'L3' });
    expect(session.snapshot().queue.map((q) => q.localId)).toEqual(['L2', 'L3']);
    await advance(clock, 90);
    expect(fake.specs).toHaveLength(1); // still backing off
    await advanceUntil(clock, () => fake.specs.length === 2, 'the restart');
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'the queued turns');

    expect(fake.specs.map((s) => ({ gen: s.gen, mode: s.mode, resumeToken: s.resumeToken }))).toEqual([
      { gen: 1, mode: 'remote', resumeToken: undefined },
      { gen: 2, mode: 'remote', resumeToken: 'tok-crash' },
    ]);
    expect(fake.engines[0]!.sent).toEqual([{ localId: 'L1', text: 'first' }]);
    expect(fake.engines[1]!.sent).toEqual([
      { localId: 'L2', text: 'second' },
      { localId: 'L3', text: 'third' },
    ]);
    expect(phases()).toEqual(['running', 'recovering', 'starting', 'running', 'running', 'idle']);
    expect(session.snapshot()).toMatchObject({ gen: 2, liveGen: 2, resumeToken: 'tok-crash', queue: [], lastError: null });
    expect(session.snapshot().usage.turns).toBe(2);
    expect(notices.filter((n) => n.type === 'error')).toEqual([]); // same agent session: no RESUME_FORKED

    const entries = await journal.read('crashy');
    const ends = entries.filter((e) => e.type === 'turn_ended' || e.type === 'turn_complete').map((e) => [e.gen, e.type, e.payload]);
    expect(ends).toEqual([
      [1, 'turn_ended', { localId: 'L1', status: 'failed', reason: 'boom' }],
      [2, 'turn_complete', expect.objectContaining({ localId: 'L2', status: 'completed' })],
      [2, 'turn_complete', expect.objectContaining({ localId: 'L3', status: 'completed' })],
    ]);
    expect(entries.find((e) => e.type === 'exited')?.payload).toEqual({ code: 137, signal: null, reason: 'boom' });
  });

  it('a restart that comes back with a different agent session reports RESUME_FORKED', async () => {
    const fake = scriptedEngines({ resumeToken: 'tok-a', turns: [[{ crash: {} }]] }, { resumeToken: 'tok-b' });
    const { session, clock, notices } = await start({ registry: fake.registry(), config: { restartBaseMs: 10 } });
    session.send('x', { localId: 'L1' });
    await advanceUntil(clock, () => session.snapshot().gen === 2 && session.snapshot().phase === 'idle', 'the restart');
    expect(fake.specs[1]?.resumeToken).toBe('tok-a');
    const errors = notices.flatMap((n) => (n.type === 'error' ? [[n.error.code, n.error.message]] : []));
    expect(errors).toEqual([['RESUME_FORKED', 'resuming "tok-a" started a different agent session "tok-b"']]);
    expect(session.snapshot().resumeToken).toBe('tok-b');
  });
});

describe('restoring a session after the host died', () => {
  it('cancels the old open request, starts gen = old gen + 1 with the old resume token, and delivers the queue', async () => {
    const sessionsDir = path.join(tmp, 'sessions');
    const transcriptsDir = path.join(tmp, 'transcripts');
    const storeA = new FileStore({ dir: sessionsDir });
    const journalA = new FileJournal({ dir: transcriptsDir });
    const fakeA = scriptedEngines({ resumeToken: 'tok-restore', turns: [[{ ask: { requestId: 'perm-1', toolName: 'Edit', input: { file: 'a.ts' } } }]] });
    const clockA = new SimulatedClock(T0);
    const sessionA = await createSession({ agent: 'fake', workDir: tmp, sessionId: 'restore-1', registry: fakeA.registry(), store: storeA, journal: journalA, clock: clockA });
    journals.push(journalA);
    sessionA.send('first', { localId: 'L1' });
    await advanceUntil(clockA, () => 'perm-1' in sessionA.snapshot().requests, 'the permission request', 5_000, true);
    sessionA.send('second', { localId: 'L2' });
    await advance(clockA, 300); // past the persist debounce
    await eventually(async () => {
      const stored = (await storeA.load('restore-1'))?.state;
      return stored !== undefined && 'perm-1' in stored.requests && stored.queue.length === 1 && stored.resumeToken === 'tok-restore';
    }, 'the open request and the queue to be stored', clockA);
    await journalA.flush();
    // The host dies here: session A is abandoned (its clock never moves again, nothing stops it).
    const storedBefore = (await storeA.load('restore-1'))!;
    expect(storedBefore.state).toMatchObject({
      gen: 1,
      phase: 'running',
      deliveredIds: ['L1'],
      queue: [{ localId: 'L2', text: 'second' }],
      turn: { localId: 'L1', text: 'first', gen: 1 },
    });

    const clockB = new SimulatedClock(T0 + 60_000);
    const fakeB = scriptedEngines({ startDelayMs: 10 });
    const journalB = new FileJournal({ dir: transcriptsDir });
    // Host A is abandoned in this very process, so its lease looks alive: take the session over, as
    // an operator would (a dead process's lease is taken without it: test/integration/crash-soak.test.ts).
    await expect(createSession({ agent: 'fake', workDir: tmp, sessionId: 'restore-1', registry: fakeB.registry(), store: new FileStore({ dir: sessionsDir }), journal: journalB, clock: clockB })).rejects.toMatchObject({ code: 'SESSION_OWNED' });
    const { session, clock, phases } = await start({
      clock: clockB,
      sessionId: 'restore-1',
      registry: fakeB.registry(),
      store: new FileStore({ dir: sessionsDir }),
      journal: journalB,
      takeOver: true,
    });

    expect(session.snapshot()).toMatchObject({ gen: 2, liveGen: 2, resumeToken: 'tok-restore', requests: {}, state: { remote: 'launching' } });
    expect(session.snapshot().completed).toEqual({
      'perm-1': { status: 'cancelled', decidedAt: T0 + 60_000, gen: 1, reason: 'session restarted before a decision' },
    });
    // The turn in flight was ended; the agent had asked for a permission, so it had the message: not asked again.
    expect(phases()).toEqual([]);
    const stale = await rejection(session.decide('perm-1', 'allow'));
    expect(stale.code).toBe('PERMISSION_ALREADY_DECIDED');
    expect(stale.message).toBe('permission request "perm-1" already ended as cancelled');
    expect((await rejection(session.send('first', { localId: 'L1' }))).code).toBe('DUPLICATE_SEND'); // delivered before the crash

    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'the queued message', 5_000, true);
    expect(fakeB.specs).toEqual([{ gen: 2, mode: 'remote', workDir: tmp, resumeToken: 'tok-restore', options: {} }]);
    expect(fakeB.engines[0]!.sent).toEqual([{ localId: 'L2', text: 'second' }]);
    expect(phases()).toEqual(['running', 'idle']);
    expect(fakeA.engines[0]!.answers).toEqual([]); // the dead host's engine never got an answer

    const final = await stopSession(session, clock);
    expect(final).toMatchObject({ gen: 2, phase: 'stopped', queue: [] });
    const stored = (await storeA.load('restore-1'))!;
    expect(stored.version).toBeGreaterThan(storedBefore.version);
    expect(stored.state).toMatchObject({ phase: 'stopped', gen: 2, resumeToken: 'tok-restore', queue: [], deliveredIds: ['L1', 'L2'] });
    expect(stored.state.completed['perm-1']?.status).toBe('cancelled');

    // One journal file holds both lives of the session, in order.
    const entries = await journalB.read('restore-1');
    expect(entries.map((e) => [e.gen, e.type])).toEqual([
      [1, 'session_identified'],
      [1, 'user_message'],
      [1, 'permission_request'],
      [1, 'turn_ended'],
      [1, 'permission_resolved'],
      [2, 'session_identified'],
      [2, 'user_message'],
      [2, 'message'],
      [2, 'turn_complete'],
      [2, 'exited'],
    ]);
    expect(entries[3]!.payload).toEqual({ localId: 'L1', status: 'interrupted', reason: 'the host stopped during the turn' });
    expect(entries[4]!.payload).toEqual({ requestId: 'perm-1', status: 'cancelled', reason: 'session restarted before a decision' });
  });

  // Each run tags its event ids, so entries a restored run writes never repeat an earlier run's ids.
  it('transcript eventIds stay unique across a restore', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const fakeA = scriptedEngines({ turns: [[{ ask: { requestId: 'p', toolName: 'Bash', input: {} } }]] });
    const clockA = new SimulatedClock(T0);
    const a = await createSession({ agent: 'fake', workDir: tmp, sessionId: 'ids', registry: fakeA.registry(), store, journal, clock: clockA });
    a.send('x', { localId: 'L1' });
    await advanceUntil(clockA, () => 'p' in a.snapshot().requests, 'the request');
    await eventually(async () => 'p' in ((await store.load('ids'))?.state.requests ?? {}), 'the stored request');

    const { session, clock } = await start({ sessionId: 'ids', registry: scriptedEngines({}).registry(), store, journal, clock: new SimulatedClock(T0 + 1_000), takeOver: true });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    const ids = (await journal.read('ids')).map((e) => e.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('onNotice', () => {
  it('receives the notices emitted inside createSession, which on() cannot see', async () => {
    const seen: SessionNotice[] = [];
    const late: SessionNotice[] = [];
    const { session } = await start({ onNotice: (n) => seen.push(n) });
    session.on('*', (n) => late.push(n));
    expect(seen[0]).toEqual({ type: 'status', phase: 'starting', mode: 'remote', gen: 1 });
    expect(late.some((n) => n.type === 'status' && n.phase === 'starting')).toBe(false);
    session.setOnline(false);
    expect(seen.at(-1)).toEqual({ type: 'presence', online: false });
  });
});

describe('final write', () => {
  it('a write that failed just before stop cannot lose the final state (and the decision in it)', async () => {
    class FlakyStore extends MemoryStore {
      failNext = false;
      override async save(...args: Parameters<MemoryStore['save']>) {
        if (this.failNext) {
          this.failNext = false;
          await sleep(50); // Slow enough that the session reaches its final state meanwhile.
          throw new AseError('STORE_IO', 'disk hiccup (simulated)');
        }
        return super.save(...args);
      }
    }
    const store = new FlakyStore();
    const fake = scriptedEngines({ turns: [[{ ask: { requestId: 'p', toolName: 'Bash', input: {} } }, { stall: true }]] });
    const { session, clock } = await start({ sessionId: 'flaky', registry: fake.registry(), store });
    session.send('x', { localId: 'L1' });
    await advanceUntil(clock, () => 'p' in session.snapshot().requests, 'the request');
    await eventually(async () => 'p' in ((await store.load('flaky'))?.state.requests ?? {}), 'the stored request', clock);
    store.failNext = true;
    session.decide('p', 'allow'); // This urgent write fails...
    const stopping = session.stop(); // ...while the final write is already queued behind it.
    await advanceUntil(clock, () => session.snapshot().done, 'the stop');
    expect(store.failNext).toBe(false); // The failing write was attempted...
    await stopping;
    const stored = await store.load('flaky');
    expect(stored?.state.phase).toBe('stopped');
    expect(stored?.state.completed['p']).toMatchObject({ status: 'approved' });
    expect(stored?.state.requests).toEqual({});
  });
});

describe('AbortSignal', () => {
  it('aborting the signal stops the session and its engine', async () => {
    const controller = new AbortController();
    const fake = scriptedEngines({ turns: [[{ stall: true }]] });
    const { session, clock } = await start({ registry: fake.registry(), signal: controller.signal });
    session.send('hang', { localId: 'L1' });
    await advance(clock, 20);
    expect(session.snapshot().phase).toBe('running');

    controller.abort();
    expect(session.snapshot().phase).toBe('stopping');
    expect(fake.engines[0]!.stopped).toBe(true);
    await advanceUntil(clock, () => session.snapshot().done, 'the stop');
    const final = await session.done;
    expect(final).toMatchObject({ phase: 'stopped', done: true, liveGen: null });
    expect(fake.engines[0]!.exitedEmitted).toBe(true);
  });

  it('an already aborted signal rejects createSession with ABORTED and starts nothing', async () => {
    const fake = scriptedEngines({});
    const error = await rejection(createSession({ agent: 'fake', workDir: tmp, registry: fake.registry(), store: new MemoryStore(), journal: new MemoryJournal(), clock: new SimulatedClock(T0), signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORTED');
    expect(error.message).toBe('createSession: the signal was already aborted');
    expect(fake.engines).toEqual([]);
  });


  it('a signal aborted while createSession loads the stored session rejects with ABORTED and starts nothing', async () => {
    const controller = new AbortController();
    const memory = new MemoryStore();
    let saves = 0;
    const store: SessionStore = {
      load: async (id) => {
        controller.abort(); // e.g. the user hits Ctrl-C while a slow store is read
        return memory.load(id);
      },
      save: async (...args) => {
        saves++;
        return memory.save(...args);
      },
      list: () => memory.list(),
      delete: (id) => memory.delete(id),
      acquire: (id, options) => memory.acquire(id, options),
      renew: (lease) => memory.renew(lease),
      release: (lease) => memory.release(lease),
    };
    const fake = scriptedEngines({});
    const clock = new SimulatedClock(T0);
    const created = createSession({ agent: 'fake', workDir: tmp, registry: fake.registry(), store, journal: new MemoryJournal(), clock, signal: controller.signal });
    const outcome = await created.then(
      (session) => {
        open.push({ session, clock });
        return session;
      },
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(AseError);
    expect((outcome as AseError).code).toBe('ABORTED');
    expect((outcome as AseError).message).toBe('createSession: the signal was aborted while the session was loading');
    await advance(clock, 1_000);
    expect(fake.engines).toEqual([]);
    expect(saves).toBe(0);
  });
});

describe('events()', () => {
  it('yields every notice in order and ends after done', async () => {
    const { session, clock, notices } = await start({ registry: scriptedEngines({}).registry() });
    const seen: StreamNotice[] = [];
    const iterating = (async () => {
      for await (const notice of session.events()) seen.push(notice);
    })();
    session.send('hi', { localId: 'L1' });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle' && session.snapshot().usage.turns === 1, 'the turn');
    const final = await stopSession(session, clock);
    await iterating;

    expect(seen).toEqual(notices);
    expect(seen.at(-1)).toEqual({ type: 'done', snapshot: final });
    expect(new Set(seen.map((n) => n.type))).toEqual(new Set(['agent', 'transcript', 'status', 'thinking', 'done']));
    expect(seen.flatMap((n) => (n.type === 'agent' ? [n.event.type] : []))).toEqual([
      'session_identified',
      'ready',
      'thinking',
      'text_delta',
      'text_delta',
      'text_delta',
      'message',
      'turn_complete',
      'exited',
    ]);
  });

  it('rejects with an AbortError when its signal aborts; ends when the loop breaks (and unsubscribes)', async () => {
    const { session, clock } = await start({ registry: scriptedEngines({ startDelayMs: 10 }).registry() });
    const controller = new AbortController();
    const seen: string[] = [];
    const iterating = (async () => {
      for await (const notice of session.events({ signal: controller.signal })) seen.push(notice.type);
    })();
    await advance(clock, 10);
    controller.abort(new Error('client gone'));
    const aborted = await rejection(iterating);
    expect(aborted).toMatchObject({ name: 'AbortError', code: 'ABORTED', cause: new Error('client gone') });
    expect(seen).toEqual(['agent', 'transcript', 'agent', 'status']);

    // An already aborted signal rejects the first next().
    expect(await rejection(within(collect(session.events({ signal: AbortSignal.abort() })), 'an aborted iterator'))).toMatchObject({ name: 'AbortError' });

    // Breaking out of the loop ends it; the session carries on.
    const first: StreamNotice[] = [];
    const breaking = (async () => {
      for await (const notice of session.events()) {
        first.push(notice);
        break;
      }
    })();
    session.send('hi', { localId: 'L1' });
    await breaking;
    expect(first).toEqual([{ type: 'transcript', entry: expect.objectContaining({ type: 'user_message', payload: { localId: 'L1', text: 'hi' } }) }]);
    await advanceUntil(clock, () => session.snapshot().usage.turns === 1, 'the turn');
  });

  it('an iterator opened after the session reached its final state but before done still yields done', async () => {
    const { session, clock } = await start({ registry: scriptedEngines({}).registry() });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    const stopping = session.stop();
    clock.advance(5); // the engine exits synchronously; engines and writes settle on later ticks
    expect(session.snapshot()).toMatchObject({ done: true, phase: 'stopped' });
    const seen = await within(collect(session.events()), 'the iterator to end');
    const final = await stopping;
    expect(seen).toEqual([{ type: 'done', snapshot: final }]);
    // After done nothing follows: a new iterator ends at once.
    expect(await within(collect(session.events()), 'an iterator opened after done')).toEqual([]);
  });
});

describe('invalid options', () => {
  const base = () => ({ agent: 'fake', workDir: tmp, store: new MemoryStore(), journal: new MemoryJournal(), clock: new SimulatedClock(T0) });

  it.each([
    ['a missing agent', { agent: undefined }, 'INVALID_OPTIONS', 'createSession: agent: Invalid input: expected string, received undefined'],
    ['a path-like sessionId', { sessionId: '../x' }, 'INVALID_OPTIONS', 'createSession: sessionId: use letters, digits, ".", "_" or "-" (max 128), not starting with "."'],
    ['"." as sessionId', { sessionId: '.' }, 'INVALID_OPTIONS', 'createSession: sessionId: use letters, digits, ".", "_" or "-" (max 128), not starting with "."'],
    ['".." as sessionId', { sessionId: '..' }, 'INVALID_OPTIONS', 'createSession: sessionId: use letters, digits, ".", "_" or "-" (max 128), not starting with "."'],
    ['an unknown config key', { config: { permissionTimeoutMS: 5 } }, 'INVALID_OPTIONS', 'createSession: config: Unrecognized key: "permissionTimeoutMS"'],
    ['a negative config value', { config: { maxRestarts: -1 } }, 'INVALID_OPTIONS', 'createSession: config.maxRestarts: Too small: expected number to be >=0'],
    ['an unknown option', { agnet: 'fake' }, 'INVALID_OPTIONS', 'createSession: options: Unrecognized key: "agnet"'],
    ['a store without save', { store: { load: async () => undefined } }, 'INVALID_OPTIONS', 'createSession: store: store must implement SessionStore (load, save, acquire, renew, release)'],
    ['an unknown engine', { agent: 'claude-x' }, 'UNKNOWN_ENGINE', 'Unknown engine "claude-x"; known engines: fake, claude, codex, codex-mcp, acp, codex-exec, claude-print'],
  ])('rejects %s', async (_what, override, code, message) => {
    const error = await rejection(createSession({ ...base(), ...override } as SessionOptions));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('"..", with the default file store under dataDir, is refused as INVALID_OPTIONS before touching the disk', async () => {
    const dataDir = path.join(tmp, 'data');
    const error = await rejection(createSession({ agent: 'fake', workDir: tmp, sessionId: '..', dataDir, clock: new SimulatedClock(T0) }));
    expect(error.code).toBe('INVALID_OPTIONS');
    await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('lists every problem at once and writes nothing', async () => {
    const store = new MemoryStore();
    const error = await rejection(createSession({ workDir: '', sessionId: '..', store, mode: 'phone' } as unknown as SessionOptions));
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message.startsWith('createSession: ')).toBe(true);
    for (const key of ['agent:', 'workDir:', 'mode:', 'sessionId:']) expect(error.message).toContain(key);
    expect(await store.list()).toEqual([]);
  });
});

describe('listeners', () => {
  it('a listener that throws does not stop the other listeners or the session', async () => {
    const warnings: string[] = [];
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => void warnings.push(String(w)));
    try {
      const { session, clock, notices } = await start({ registry: scriptedEngines({}).registry() });
      const typed: string[] = [];
      const star: string[] = [];
      session.on('status', () => {
        throw new Error('client bug');
      });
      session.on('*', () => {
        throw new Error('star bug');
      });
      session.on('status', (n) => typed.push(n.phase));
      session.on('*', (n) => star.push(n.type));
      const off = session.on('transcript', () => {
        throw new Error('unsubscribed bug');
      });
      off();

      session.send('hi', { localId: 'L1' });
      await advanceUntil(clock, () => session.snapshot().phase === 'idle' && session.snapshot().usage.turns === 1, 'the turn');
      expect(typed).toEqual(['running', 'idle']);
      expect(star).toEqual(notices.map((n) => n.type));
      expect(star.length).toBeGreaterThan(5);
      expect(warnings).toContain('agent-session-engine: a session listener threw: client bug');
      expect(warnings).toContain('agent-session-engine: a session listener threw: star bug');
      expect(warnings).not.toContain('agent-session-engine: a session listener threw: unsubscribed bug');
      expect(warnings.filter((w) => w.endsWith('client bug'))).toHaveLength(2);
      const final = await stopSession(session, clock);
      expect(star.at(-1)).toBe('done');
      expect(typed.slice(-2)).toEqual(['stopping', 'stopped']);
      expect(final.phase).toBe('stopped');
    } finally {
      warn.mockRestore();
    }
  });
});
