/**
 * 6. The `events()` stream: what it adds per notice when the consumer keeps up, what compaction
 * costs when the consumer stalls during a long streamed answer, and that a stalled or never-read
 * stream holds a bounded amount of memory (heap after a full GC, node --expose-gc).
 */
import { describe, expect, inject, it } from 'vitest';
import {
  createSession,
  EngineRegistry,
  FakeEngine,
  MemoryStore,
  SimulatedClock,
  type AgentEventBody,
  type EngineFactory,
  type Session,
  type StreamNotice,
} from '../src/index.js';
import { median, settledHeapUsed } from './support/measure.js';
import { CountingJournal } from './support/runtime.js';
import { bytes, count, duration, si, size, writeSection, type Row } from './support/report.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A session on a manual fake engine that is ready: the benchmark injects every event. */
async function readySession(): Promise<{ session: Session; engine: FakeEngine; clock: SimulatedClock }> {
  const clock = new SimulatedClock(1_700_000_000_000);
  let engine: FakeEngine | undefined;
  const factory: EngineFactory = { name: 'fake', capabilities: FakeEngine.capabilities, create: (c) => (engine = new FakeEngine(c, { manual: true })) };
  const session = await createSession({
    agent: 'fake',
    workDir: process.cwd(),
    clock,
    store: new MemoryStore(),
    journal: new CountingJournal(), // discards entries: the heap shows what the stream keeps
    registry: new EngineRegistry().register(factory),
  });
  // The runtime starts the engine a few promise turns after createSession returns.
  for (let i = 0; ; i++) {
    await tick();
    try {
      engine?.inject({ type: 'ready' });
      if (engine) break;
    } catch (error) {
      if (i > 100) throw error;
    }
  }
  await tick();
  session.send('go');
  return { session, engine: engine!, clock };
}

const delta = (i: number): AgentEventBody => ({ type: 'text_delta', messageId: 'm1', text: `token${i % 97} ` });

/** Reads a stream to its end; how many notices it yielded and the code it failed with. */
async function drainCount(stream: AsyncIterable<StreamNotice>): Promise<{ items: number; error?: string }> {
  let items = 0;
  try {
    for await (const _ of stream) items++;
  } catch (error) {
    return { items, error: (error as { code?: string }).code ?? String(error) };
  }
  return { items };
}

async function stop(s: { session: Session; engine: FakeEngine; clock: SimulatedClock }): Promise<void> {
  const stopping = s.session.stop();
  if (!s.engine.exitedEmitted) s.engine.inject({ type: 'exited', code: 0, signal: null, reason: 'stopped' });
  for (let i = 0; i < 100 && !s.session.snapshot().done; i++) {
    s.clock.advance(10);
    await tick();
  }
  await stopping;
}

describe('events() stream', () => {
  it('measures delivery, compaction under a stalled consumer, and the memory a stream holds', async () => {
    const rows: Row[] = [];
    const N = 20_000;

    // ------------------------------------------------ keeping up: on('*') alone vs on('*') + a stream read as it goes
    const baseline: number[] = [];
    const streamed: number[] = [];
    for (let rep = 0; rep < 7; rep++) {
      const plain = await readySession();
      let seen = 0;
      plain.session.on('*', () => void seen++);
      let t0 = performance.now();
      for (let i = 0; i < N; i++) plain.engine.inject(delta(i));
      baseline.push(performance.now() - t0);
      await stop(plain);

      const s = await readySession();
      const stream = s.session.events();
      let read = 0;
      const reading = (async () => {
        for await (const _ of stream) if (++read >= N) break;
      })();
      t0 = performance.now();
      for (let i = 0; i < N; i++) {
        s.engine.inject(delta(i));
        if (i % 100 === 99) await tick(); // the consumer's turn
      }
      await reading;
      streamed.push(performance.now() - t0);
      expect(read).toBe(N);
      await stop(s);
    }
    const perNotice = (samples: number[]) => (median(samples.slice(2)) * 1000) / N;
    const baseUs = perNotice(baseline);
    const streamUs = perNotice(streamed);
    rows.push({
      measurement: `text_delta to a consumer that keeps up (${count(N)}, read every 100)`,
      result: `${duration(streamUs)} per delta with a stream (${si(1e6 / streamUs)}/s) vs ${duration(baseUs)} with an on('*') listener only`,
      meaning: `The stream's buffering and promise per notice add ${duration(Math.max(0, streamUs - baseUs))}; at a peak of ~500 deltas/s that is negligible.`,
    });

    // ------------------------------------------------ a stalled consumer during a long answer (1M deltas, maxBuffered 10,000)
    const M = 1_000_000;
    const stalled = await readySession();
    const stream = stalled.session.events({ maxBuffered: 10_000 });
    const heapBefore = await settledHeapUsed();
    const t1 = performance.now();
    for (let i = 0; i < M; i++) stalled.engine.inject(delta(i));
    const stalledUs = ((performance.now() - t1) * 1000) / M;
    const heapAfter = await settledHeapUsed();
    // Now read what the stream kept.
    let kept = 0;
    let lagged: StreamNotice | undefined;
    let text = 0;
    for (;;) {
      const next = await Promise.race([stream.next(), tick().then(() => undefined)]);
      if (!next || next.done) break;
      kept++;
      if (next.value.type === 'lagged') lagged = next.value;
      if (next.value.type === 'agent' && next.value.event.type === 'text_delta') text += next.value.event.text.length;
    }
    const expectedText = Array.from({ length: M }, (_, i) => delta(i)).reduce((sum, d) => sum + (d.type === 'text_delta' ? d.text.length : 0), 0);
    expect(text).toBe(expectedText);
    await stop(stalled);
    rows.push(
      {
        measurement: `${count(M)} text_delta while the consumer is stalled (maxBuffered 10,000)`,
        result: `${duration(stalledUs)} per delta, compaction included; the consumer then reads ${count(kept)} notices (${lagged?.type === 'lagged' ? `${count(lagged.merged)} deltas merged, ${count(lagged.dropped)} dropped` : 'no compaction'}) with all ${size(expectedText)} of text`,
        meaning: 'A consumer that falls behind during a long answer costs a bounded number of notices and no text: deltas of one message collapse into one.',
      },
      {
        measurement: `Heap held by that stalled stream`,
        result: `${bytes(heapAfter - heapBefore)} (${size(heapBefore)} → ${size(heapAfter)}), the unread text itself being ${size(expectedText)} (one byte per character)`,
        meaning: 'What a stalled stream keeps is the unread text (joined into flat strings at each compaction), not one object per delta.',
      },
    );

    // ------------------------------------------------ a stream nobody reads, durable notices (tool calls)
    const T = 50_000;
    const toolCalls = async (withStream: boolean) => {
      const s = await readySession();
      const before = await settledHeapUsed();
      const stream = withStream ? s.session.events({ maxBuffered: 10_000 }) : undefined;
      for (let i = 0; i < T; i++) s.engine.inject({ type: 'tool_call', callId: `c${i}`, toolName: 'Bash', input: { command: `echo ${i}` } });
      const after = await settledHeapUsed();
      const outcome = stream ? await drainCount(stream) : undefined;
      await stop(s);
      return { grew: after - before, outcome };
    };
    const without = await toolCalls(false);
    const withUnread = await toolCalls(true);
    expect(withUnread.outcome?.error).toBe('SLOW_CONSUMER');
    rows.push({
      measurement: `A stream never read while ${count(T)} tool calls arrive (${count(2 * T)} durable notices, maxBuffered 10,000)`,
      result: `heap +${size(withUnread.grew)} with the stream, +${size(without.grew)} without; it held ${count(withUnread.outcome?.items ?? 0)} notices, then SLOW_CONSUMER`,
      meaning: 'Bounded: at maxBuffered unread durable notices the stream reports SLOW_CONSUMER and lets go, instead of growing with the session.',
    });

    writeSection(inject('benchResultsDir'), {
      id: 'stream',
      order: 6,
      title: '6. The events() stream',
      method:
        'Sessions on a manual fake engine (SimulatedClock, in-memory store and journal); events injected synchronously. Delivery: 7 repetitions of 20,000 deltas, the first 2 discarded, median reported, against the same session with only an `on(\'*\')` listener. Heap: `heapUsed` after a full GC.',
      rows,
    });
  });
});
