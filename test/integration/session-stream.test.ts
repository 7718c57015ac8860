/**
 * The stream and the turn helpers of the session handle, end to end (handle, SessionActor, runtime,
 * fake engine, SimulatedClock): `events()` buffering from the call, its bounded buffer with a
 * consumer that stalls, AbortSignal; `run()` for every way a turn can end; `waitFor()`; and the
 * up-front workDir check of `createSession`.
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
  isAseError,
  MemoryJournal,
  MemoryStore,
  SimulatedClock,
  type AgentEventBody,
  type EngineFactory,
  type FakeScript,
  type Session,
  type SessionNotice,
  type SessionOptions,
  type StreamNotice,
  type TurnResult,
} from '../../src/index.js';
import { runTurn } from '../../src/session/turn-runner.js';

const T0 = 1_700_000_000_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Moves simulated time in small steps until `predicate` holds (bounded in both times). */
async function advanceUntil(clock: SimulatedClock, predicate: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  const end = clock.now() + maxMs;
  const realDeadline = Date.now() + 5_000;
  await tick();
  while (!predicate()) {
    if (clock.now() >= end || Date.now() > realDeadline) throw new Error(`timed out waiting for ${what}`);
    clock.advance(5);
    await tick();
  }
}

/** Settles `promise` while moving simulated time; fails when it does not settle. */
async function settled<T>(clock: SimulatedClock, promise: Promise<T>, what: string): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  await advanceUntil(clock, () => outcome !== undefined, what);
  return outcome!;
}

/** The Nth engine of this factory plays `scripts[N]` (the last repeats); engines are kept for inspection. */
function scripted(...scripts: FakeScript[]) {
  const engines: FakeEngine[] = [];
  const factory: EngineFactory = {
    name: 'fake',
    capabilities: FakeEngine.capabilities,
    create: (context) => {
      const engine = new FakeEngine(context, scripts[Math.min(engines.length, scripts.length - 1)] ?? {});
      engines.push(engine);
      return engine;
    },
  };
  return { engines, registry: new EngineRegistry().register(factory) };
}

let tmp: string;
let open: { session: Session; clock: SimulatedClock; engines: FakeEngine[] }[] = [];

beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-stream-it-'));
});

afterEach(async () => {
  for (const { session, clock, engines } of open) {
    if (session.snapshot().done) continue;
    const stopping = session.stop();
    // A manual engine exits only when told to.
    for (const e of engines) if (e.stopped && !e.exitedEmitted) e.inject({ type: 'exited', code: 0, signal: null, reason: 'stopped' });
    await advanceUntil(clock, () => session.snapshot().done, 'teardown stop');
    await stopping;
  }
  open = [];
  await fs.rm(tmp, { recursive: true, force: true });
});

async function start(scripts: FakeScript[], options: Partial<SessionOptions> = {}) {
  const clock = new SimulatedClock(T0);
  const { engines, registry } = scripted(...scripts);
  const session = await createSession({ agent: 'fake', workDir: tmp, store: new MemoryStore(), journal: new MemoryJournal(), clock, registry, ...options });
  open.push({ session, clock, engines });
  const notices: SessionNotice[] = [];
  session.on('*', (n) => notices.push(n));
  return { session, clock, engines, notices };
}

async function stop(session: Session, clock: SimulatedClock) {
  const stopping = session.stop();
  await advanceUntil(clock, () => session.snapshot().done, 'the session to stop');
  return stopping;
}

async function drain(stream: AsyncIterable<StreamNotice>): Promise<{ items: StreamNotice[]; error?: unknown }> {
  const items: StreamNotice[] = [];
  try {
    for await (const n of stream) items.push(n);
  } catch (error) {
    return { items, error };
  }
  return { items };
}

/** A manual engine that is ready: the test injects every event. */
async function manualSession(options: Partial<SessionOptions> = {}) {
  const s = await start([{ manual: true }], options);
  await advanceUntil(s.clock, () => s.engines.length === 1, 'the engine');
  const engine = s.engines[0]!;
  engine.inject({ type: 'ready' });
  await advanceUntil(s.clock, () => s.session.snapshot().phase === 'idle', 'idle');
  return { ...s, engine };
}

const delta = (text: string, messageId = 'm1'): AgentEventBody => ({ type: 'text_delta', messageId, text });

describe('events(): subscribed from the call', () => {
  it('a stream made before send() and read after the whole turn has every notice of it, in order, then done', async () => {
    const { session, clock, notices } = await start([{ startDelayMs: 10 }]);
    const stream = session.events();
    const from = notices.length;
    session.send('hi', { localId: 'L1' });
    await advanceUntil(clock, () => session.snapshot().usage.turns === 1, 'the turn');
    await clock.advance(100); // the consumer comes late
    const final = await stop(session, clock);
    const { items, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(items).toEqual(notices.slice(from));
    // The message waited for the engine to be ready; the stream still has it (and everything before it).
    expect(items).toContainEqual({ type: 'transcript', entry: expect.objectContaining({ type: 'user_message', payload: { localId: 'L1', text: 'hi' } }) });
    expect(items.some((n) => n.type === 'status' && n.phase === 'idle')).toBe(true);
    expect(items.some((n) => n.type === 'agent' && n.event.type === 'text_delta')).toBe(true);
    expect(items.at(-1)).toEqual({ type: 'done', snapshot: final });
  });

  it('two streams are independent: breaking out of one does not end the other', async () => {
    const { session, clock } = await start([{}]);
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    const a = session.events();
    const b = session.events();
    session.send('hi', { localId: 'L1' });
    for await (const n of a) {
      expect(n.type).toBe('transcript');
      break;
    }
    expect(await a.next()).toEqual({ done: true, value: undefined });
    await advanceUntil(clock, () => session.snapshot().usage.turns === 1, 'the turn');
    await stop(session, clock);
    const { items } = await drain(b);
    expect(items.at(-1)?.type).toBe('done');
    expect(items.filter((n) => n.type === 'transcript' && n.entry.type === 'turn_complete')).toHaveLength(1);
  });

  it('next() called several times without awaiting resolves in order, one notice each; return() ends a parked next()', async () => {
    const { session, engine, notices } = await manualSession();
    const stream = session.events();
    const from = notices.length;
    const pending = [stream.next(), stream.next(), stream.next()];
    for (const id of ['a', 'b', 'c']) engine.inject({ type: 'tool_call', callId: id, toolName: 'Bash', input: {} });
    const got = await Promise.all(pending);
    expect(got).toEqual(notices.slice(from, from + 3).map((value) => ({ done: false, value })));
    for (let i = from + 3; i < notices.length; i++) expect((await stream.next()).value).toEqual(notices[i]);
    const parked = stream.next();
    await stream.return!();
    expect(await parked).toEqual({ done: true, value: undefined });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('refuses a maxBuffered that is not an integer >= 10', async () => {
    const { session } = await start([{}]);
    for (const maxBuffered of [0, 9, 10.5, Number.NaN]) {
      expect(() => session.events({ maxBuffered })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
  });
});

describe('events(): a consumer that stalls', () => {
  it('ephemeral notices are compacted behind one lagged marker; no text and no durable notice is lost', async () => {
    const { session, engine, notices } = await manualSession();
    const stream = session.events({ maxBuffered: 20 });
    const from = notices.length;
    // The consumer reads one notice, then stalls while the agent streams.
    engine.inject({ type: 'thinking', active: true });
    const first = await stream.next();
    let text = '';
    for (let i = 0; i < 300; i++) {
      const piece = `w${i} `;
      text += piece;
      engine.inject(delta(piece));
      if (i % 10 === 0) engine.inject({ type: 'activity' });
      if (i % 50 === 0) engine.inject({ type: 'thinking', active: i % 100 === 0 });
      if (i === 150) engine.inject({ type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } });
    }
    engine.inject({ type: 'message', role: 'assistant', id: 'm1', blocks: [{ type: 'text', text }] });
    const stalled = [];
    for (;;) {
      const next = await Promise.race([stream.next(), tick().then(() => undefined)]);
      if (next === undefined) break; // caught up
      stalled.push(next.value as StreamNotice);
    }
    // Everything the session said, taken once it said it all: the transcript entries of batched
    // agent output follow on the next turn of the event loop (src/actors/agent-output.ts).
    const all = notices.slice(from);
    const got = [first.value as StreamNotice, ...stalled];

    // Durable notices: every one, in the same order.
    const durable = (n: StreamNotice) =>
      n.type === 'transcript' || (n.type === 'agent' && !['text_delta', 'activity', 'thinking'].includes(n.event.type)) || n.type === 'status' || n.type === 'error';
    expect(got.filter(durable)).toEqual(all.filter(durable));
    // The text: all of it, in order, in fewer (merged) deltas.
    const deltas = got.flatMap((n) => (n.type === 'agent' && n.event.type === 'text_delta' ? [n.event.text] : []));
    expect(deltas.join('')).toBe(text);
    expect(deltas.length).toBeLessThan(300);
    // The markers say what happened: dropped + merged account for every missing notice.
    const markers = got.filter((n) => n.type === 'lagged');
    expect(markers.length).toBeGreaterThan(0);
    const dropped = markers.reduce((sum, m) => sum + (m.type === 'lagged' ? m.dropped : 0), 0);
    const merged = markers.reduce((sum, m) => sum + (m.type === 'lagged' ? m.merged : 0), 0);
    expect(got.length - markers.length + dropped + merged).toBe(all.length);
    // The newest thinking state survives.
    const lastThinking = (ns: StreamNotice[]) => ns.filter((n) => n.type === 'agent' && n.event.type === 'thinking').at(-1);
    expect(lastThinking(got)).toEqual(lastThinking(all));
    // Never more than maxBuffered held at once: what was read after the stall fits in it.
    expect(stalled.length).toBeLessThanOrEqual(20);
  });

  it('when durable notices alone overflow the buffer, it yields what it holds, then throws SLOW_CONSUMER (and stops listening)', async () => {
    const { session, engine, notices } = await manualSession();
    const stream = session.events({ maxBuffered: 20 });
    const from = notices.length;
    for (let i = 0; i < 40; i++) engine.inject({ type: 'tool_call', callId: `c${i}`, toolName: 'Bash', input: { i } });
    await tick(); // the batch of tool calls reaches the statechart: their transcript entries
    const all = notices.slice(from);
    // Each tool_call is an agent notice and a transcript entry (and the first turns the thinking indicator on).
    expect(all.filter((n) => n.type !== 'thinking')).toHaveLength(80);

    const { items, error } = await drain(stream);
    expect(error).toBeInstanceOf(AseError);
    expect(error).toMatchObject({ code: 'SLOW_CONSUMER', details: { maxBuffered: 20 } });
    // What it yielded is exactly the start of what happened (nothing ephemeral here to compact), then the gap is reported.
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThanOrEqual(20);
    expect(items).toEqual(all.slice(0, items.length));
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('a stream nobody reads holds at most maxBuffered notices, then lets go of the session', async () => {
    const { session, engine, clock } = await manualSession();
    const stream = session.events({ maxBuffered: 10 });
    for (let i = 0; i < 5_000; i++) engine.inject({ type: 'tool_call', callId: `c${i}`, toolName: 'Bash', input: {} });
    await stop(session, clock).catch(() => undefined);
    const { items, error } = await drain(stream);
    expect(isAseError(error, 'SLOW_CONSUMER')).toBe(true);
    expect(items.length).toBeLessThanOrEqual(10);
  });
});

describe('events(): AbortSignal', () => {
  it('a pending next() rejects at once with an AbortError carrying the reason', async () => {
    const { session } = await manualSession();
    const controller = new AbortController();
    const stream = session.events({ signal: controller.signal });
    const pending = stream.next();
    controller.abort('user left');
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORTED', cause: 'user left' });
    expect(error).toBeInstanceOf(AseError);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('aborting with notices buffered discards them: the next read rejects', async () => {
    const { session, engine } = await manualSession();
    const controller = new AbortController();
    const stream = session.events({ signal: controller.signal });
    engine.inject({ type: 'tool_call', callId: 'c1', toolName: 'Bash', input: {} });
    controller.abort();
    await expect(stream.next()).rejects.toMatchObject({ name: 'AbortError' });
  });
});

const TOOL_TURN: FakeScript = {
  turns: [
    [
      { text: 'Let me look.' },
      { emit: { type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } }, afterMs: 5 },
      { emit: { type: 'tool_result', callId: 'c1', status: 'completed', output: 'a b', isError: false }, afterMs: 5 },
      { text: 'Two files: a and b.', afterMs: 5 },
      { complete: { usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.0001 } } },
    ],
    [{ text: 'Second.' }, { complete: { usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.0002 } } }],
  ],
};

describe('run()', () => {
  it('resolves at the end of the turn with its answer, usage, exact cost, messages and entries', async () => {
    const { session, clock } = await start([TOOL_TURN]);
    const first = await settled(clock, session.run('what is here?', { localId: 'L1' }), 'the first turn');
    const result = first.value!;
    expect(result).toMatchObject({
      localId: 'L1',
      status: 'completed',
      text: 'Two files: a and b.',
      usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.0001 },
      costUsd: 0.0001,
    });
    expect(result.error).toBeUndefined();
    expect(result.messages.map((m) => m.blocks)).toEqual([[{ type: 'text', text: 'Let me look.' }], [{ type: 'text', text: 'Two files: a and b.' }]]);
    expect(result.entries.map((e) => e.type)).toEqual(['user_message', 'message', 'tool_call', 'tool_result', 'message', 'turn_complete']);
    const second = (await settled(clock, session.run('and?'), 'the second turn')).value!;
    expect(second).toMatchObject({ status: 'completed', text: 'Second.', costUsd: 0.0002 });
    expect(second.entries[0]!.type).toBe('user_message');
    // Exact in data: the session's sum is the plain float sum, not rounded.
    expect(session.snapshot().usage.costUsd).toBe(0.0001 + 0.0002);
  });

  it('two runs at once: each resolves with its own turn, in order', async () => {
    const { session, clock } = await start([TOOL_TURN]);
    const a = session.run('one');
    const b = session.run('two');
    const [ra, rb] = [(await settled(clock, a, 'a')).value!, (await settled(clock, b, 'b')).value!];
    expect(ra.text).toBe('Two files: a and b.');
    expect(rb.text).toBe('Second.');
  });

  it('a turn the agent fails resolves failed with ENGINE_ERROR naming the agent error', async () => {
    const { session, clock } = await start([
      { turns: [[{ emit: { type: 'error', kind: 'rate_limited', message: 'slow down', retryable: true } }, { complete: { status: 'failed' } }]] },
    ]);
    const result = (await settled(clock, session.run('hi'), 'the turn')).value!;
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'ENGINE_ERROR', message: 'the turn failed: slow down', details: { kind: 'rate_limited', retryable: true } });
  });

  it('an engine that dies mid-turn: the run resolves failed (the message is not re-sent)', async () => {
    const { session, clock, engines } = await start([{ turns: [[{ text: 'starting' }, { crash: { code: 137, reason: 'killed' }, afterMs: 5 }]] }, {}]);
    const result = (await settled(clock, session.run('hi'), 'the turn')).value!;
    expect(result).toMatchObject({ status: 'failed', text: 'starting', costUsd: 0, error: { code: 'ENGINE_ERROR' } });
    expect(result.entries.at(-1)).toMatchObject({ type: 'turn_ended', payload: { status: 'failed' } });
    await advanceUntil(clock, () => engines.length === 2 && session.snapshot().phase === 'idle', 'the restart');
    expect(engines[1]!.sent).toEqual([]);
  });

  it('aborting its signal mid-turn aborts the turn and rejects with an AbortError', async () => {
    const { session, clock, engines, notices } = await start([{ turns: [[{ text: 'working' }, { stall: true }]] }]);
    const controller = new AbortController();
    const running = session.run('hi', { signal: controller.signal });
    await advanceUntil(clock, () => notices.some((n) => n.type === 'agent' && n.event.type === 'message'), 'the turn to be under way');
    controller.abort();
    const { error } = await settled(clock, running, 'the run');
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORTED' });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'the turn to end');
    expect(engines[0]!.aborts).toBe(1);
    expect(notices.some((n) => n.type === 'transcript' && n.entry.type === 'turn_complete' && (n.entry.payload as { status: string }).status === 'cancelled')).toBe(true);
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);
  });

  it('aborted while still queued: rejects at once, and the turn is aborted as soon as it starts', async () => {
    const { session, clock, engines, notices } = await start([{ turns: [[{ text: 'first', afterMs: 50 }], [{ stall: true }]] }]);
    const first = session.run('first');
    const controller = new AbortController();
    const second = session.run('second', { signal: controller.signal, localId: 'L2' });
    controller.abort();
    const { error } = await settled(clock, second, 'the second run');
    expect(error).toMatchObject({ name: 'AbortError' });
    expect((await settled(clock, first, 'the first run')).value!.status).toBe('completed');
    await advanceUntil(clock, () => engines[0]!.aborts === 1 && session.snapshot().phase === 'idle', 'the second turn to be aborted');
    const ends = notices.flatMap((n) => (n.type === 'transcript' && n.entry.type === 'turn_complete' ? [n.entry.payload] : []));
    expect(ends).toEqual([expect.objectContaining({ status: 'completed' }), expect.objectContaining({ localId: 'L2', status: 'cancelled' })]);
  });

  it('an already aborted signal rejects without sending', async () => {
    const { session, engines, clock } = await start([{}]);
    await expect(session.run('hi', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    expect(engines[0]!.sent).toEqual([]);
  });

  it('the session failing before the message was delivered resolves failed with the root cause`s code (ENGINE_ERROR), not SESSION_FAILED', async () => {
    const { session, clock } = await start([{ failStart: { message: 'not logged in' } }], { config: { maxRestarts: 0 } });
    const result = (await settled(clock, session.run('hi'), 'the run')).value!;
    expect(result).toMatchObject({ status: 'failed', entries: [], error: { code: 'ENGINE_ERROR', cause: { code: 'SESSION_FAILED' } } });
    expect(result.error!.message).toContain('not logged in');
    expect(session.snapshot().queue.map((q) => q.text)).toEqual(['hi']);
  });

  it('stopping the session during the turn resolves cancelled with SESSION_STOPPED', async () => {
    const { session, clock } = await start([{ turns: [[{ stall: true }]] }]);
    const running = session.run('hi');
    await advanceUntil(clock, () => session.snapshot().phase === 'running', 'running');
    void session.stop();
    const result = (await settled(clock, running, 'the run')).value!;
    expect(result).toMatchObject({ status: 'cancelled', error: { code: 'SESSION_STOPPED' } });
  });

  it('a refused send rejects with its error (DUPLICATE_SEND, SESSION_STOPPED)', async () => {
    const { session, clock } = await start([{ turns: [[{ stall: true }]] }]);
    session.send('hi', { localId: 'L1' });
    await expect(session.run('again', { localId: 'L1' })).rejects.toMatchObject({ code: 'DUPLICATE_SEND' });
    await stop(session, clock);
    await expect(session.run('late')).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
  });

  it('works with a send that returns a promise (accepted once durable)', async () => {
    const { session, clock } = await start([TOOL_TURN]);
    const host = {
      on: (type: '*', listener: (n: SessionNotice) => void) => session.on(type, listener),
      send: async (text: string, options: { localId: string }) => {
        await tick();
        return session.send(text, options);
      },
      abort: async () => session.abort(),
    };
    const result: TurnResult = (await settled(clock, runTurn(host, 'hi'), 'the run')).value!;
    expect(result.status).toBe('completed');
    const refused = await settled(clock, runTurn(host, 'dup', { localId: result.localId }), 'the refused run');
    expect(refused.error).toMatchObject({ code: 'DUPLICATE_SEND' });
  });
});

describe('waitFor()', () => {
  it('resolves with the first matching notice from the call on, not an earlier one', async () => {
    const { session, clock } = await start([{ startDelayMs: 10 }]);
    await advanceUntil(clock, () => session.snapshot().phase === 'idle', 'idle');
    const idle = session.waitFor('status', (n) => n.phase === 'idle');
    const anyTranscript = session.waitFor('*', (n) => n.type === 'transcript');
    session.send('hi', { localId: 'L1' });
    const first = (await settled(clock, anyTranscript, 'a transcript entry')).value!;
    expect(first).toMatchObject({ type: 'transcript', entry: { type: 'user_message' } });
    const back = (await settled(clock, idle, 'idle again')).value!;
    expect(back).toMatchObject({ type: 'status', phase: 'idle' });
    expect(session.snapshot().usage.turns).toBe(1);
  });

  it('rejects with SESSION_STOPPED when the session ends first; waiting for done resolves, also after the end', async () => {
    const { session, clock } = await start([{}]);
    const never = expect(session.waitFor('permission_prompt')).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
    const done = session.waitFor('done');
    const final = await stop(session, clock);
    await never;
    expect(await done).toEqual({ type: 'done', snapshot: final });
    expect(await session.waitFor('done')).toEqual({ type: 'done', snapshot: final });
    await expect(session.waitFor('status')).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
  });

  it('timeoutMs rejects with TIMEOUT; an aborted signal with an AbortError; a throwing predicate with its error', async () => {
    const { session, engine } = await manualSession();
    await expect(session.waitFor('permission_prompt', undefined, { timeoutMs: 10 })).rejects.toMatchObject({ code: 'TIMEOUT', details: { timeoutMs: 10 } });
    const controller = new AbortController();
    const aborted = session.waitFor('permission_prompt', undefined, { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError', code: 'ABORTED' });
    await expect(session.waitFor('status', undefined, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    const boom = new TypeError('bad predicate');
    const throwing = session.waitFor('agent', () => {
      throw boom;
    });
    engine.inject({ type: 'activity' });
    await expect(throwing).rejects.toBe(boom);
    await expect(session.waitFor('status', undefined, { timeoutMs: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('createSession: workDir checked up front', () => {
  it.each([
    ['does not exist', (dir: string) => path.join(dir, 'missing'), 'does not exist'],
    ['is a file', (dir: string) => path.join(dir, 'file.txt'), 'is a file, not a directory'],
    ['is below a file', (dir: string) => path.join(dir, 'file.txt', 'sub'), 'does not exist (a part of the path is a file)'],
  ])('a workDir that %s is INVALID_OPTIONS, and nothing is written', async (_what, make, why) => {
    await fs.writeFile(path.join(tmp, 'file.txt'), 'x');
    const workDir = make(tmp);
    const dataDir = path.join(tmp, 'data');
    const error = await createSession({ agent: 'fake', workDir, dataDir }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', message: `createSession: workDir: ${workDir} ${why}` });
    await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
