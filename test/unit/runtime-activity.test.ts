/**
 * Agent output on the hot path (issues 11 and 24): consecutive text deltas (and the other output
 * of src/actors/agent-output.ts) reach the statechart as one `agent_output` batch, not as a
 * transition each. These tests hold what that must not change: every delta still reaches
 * observers, the stall watchdog and the thinking indicator measure quiet from the last delta, and
 * no event overtakes output that came before it.
 */
import type { InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { SessionMachineInput } from '../../src/actors/session-context.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import { FakeEngine } from '../../src/engines/fake/index.js';
import type { AgentEvent, AgentEventBody } from '../../src/events/agent-event.js';
import { SimulatedClock } from '../../src/effects/clock.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { SessionRuntime } from '../../src/effects/session-runtime.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';

const T0 = 1_700_000_000_000;
const STALL_MS = 10_000;
const THINKING_CLEAR_MS = 3_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function runningSession({ inspected = true, inspect }: { inspected?: boolean; inspect?: (e: InspectionEvent) => void } = {}) {
  const clock = new SimulatedClock(T0);
  const engines: FakeEngine[] = [];
  const factory: EngineFactory = {
    name: 'fake',
    capabilities: FakeEngine.capabilities,
    create: (context) => {
      const engine = new FakeEngine(context, { manual: true });
      engines.push(engine);
      return engine;
    },
  };
  const input: SessionMachineInput = { sessionId: 's-activity', agent: 'fake', workDir: '/work', mode: 'remote', now: T0, config: { stallTimeoutMs: STALL_MS, thinkingClearMs: THINKING_CLEAR_MS } };
  /** Events the statechart received, by type. */
  const received = new Map<string, number>();
  const runtime = new SessionRuntime({
    input,
    registry: new EngineRegistry().register(factory),
    clock,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    ...(inspected && {
      inspect: (e: InspectionEvent) => {
        if (e.type === '@xstate.event' && e.actorRef === runtime.actor) received.set(e.event.type, (received.get(e.event.type) ?? 0) + 1);
        inspect?.(e);
      },
    }),
  });
  const seen: AgentEvent[] = [];
  const thinking: boolean[] = [];
  runtime.observe({
    agentEvent: (event) => void seen.push(event),
    effect: (effect) => {
      if (effect.type === 'ephemeral.emit' && effect.kind === 'thinking') thinking.push(effect.active);
    },
  });
  runtime.start();
  await tick();
  await tick();
  const engine = engines.at(-1)!;
  engine.inject({ type: 'ready' });
  await tick();
  runtime.dispatch({ type: 'send', text: 'go', localId: 'l1' });
  for (let i = 0; i < 5; i++) await tick(); // the delivery's write, then engine.send
  const inject = (body: AgentEventBody) => engine.inject(body);
  return { clock, runtime, engine, inject, received, seen, thinking, context: () => runtime.actor.getSnapshot().context };
}

const delta = (text: string): AgentEventBody => ({ type: 'text_delta', messageId: 'm1', text });

describe('SessionRuntime: coalesced text-delta activity', () => {
  it('delivers every delta to observers while the statechart gets one transition for all of them', async () => {
    const s = await runningSession();
    expect(s.context().phase).toBe('running');
    for (let i = 0; i < 1000; i++) s.inject(delta(`t${i} `));
    await tick();
    expect(s.seen.filter((e) => e.type === 'text_delta')).toHaveLength(1000);
    expect(s.received.get('text_delta') ?? 0).toBe(0);
    expect(s.received.get('agent_output')).toBe(1); // all of them, in one batch
    expect(s.thinking).toEqual([true]);
    expect(s.context().lastActivityAt).toBe(s.clock.now());
  });

  it('carries one delta of a run to the statechart, with the time of the last', async () => {
    const s = await runningSession();
    const batches: { at: number; events: number }[] = [];
    const inspectBatch = s.runtime.actor.system.inspect((e) => {
      if (e.type === '@xstate.event' && e.event.type === 'agent_output') batches.push({ at: e.event.at, events: e.event.events.length });
    });
    s.inject({ type: 'thinking', active: true });
    for (let i = 0; i < 500; i++) {
      s.clock.advance(1);
      s.inject(delta(`t${i} `));
    }
    s.inject({ type: 'thinking', active: false });
    s.clock.advance(1);
    s.inject(delta('after'));
    s.clock.advance(1);
    s.inject(delta('after2'));
    await tick();
    inspectBatch.unsubscribe();
    // thinking, the run's first delta, thinking off, the next run's first delta.
    expect(batches).toEqual([{ at: s.clock.now(), events: 4 }]);
    expect(s.seen.filter((e) => e.type === 'text_delta')).toHaveLength(502);
    expect(s.context().lastActivityAt).toBe(s.clock.now());
    expect(s.context().thinking).toBe(true);
  });

  it('keeps the stall watchdog measuring from the last delta', async () => {
    const s = await runningSession();
    // A delta every 4 s for 40 s: never STALL_MS of quiet, so the turn must keep running.
    for (let i = 0; i < 10; i++) {
      s.clock.advance(4_000);
      s.inject(delta(`t${i}`));
      await tick();
      expect(s.context().phase, `after ${(i + 1) * 4} s`).toBe('running');
    }
    const last = s.clock.now();
    expect(s.context().lastActivityAt).toBe(last);
    // Then quiet: the watchdog interrupts once STALL_MS passed since that last delta, not before.
    s.clock.advance(STALL_MS - 1);
    await tick();
    expect(s.context().phase).toBe('running');
    s.clock.advance(1);
    await tick();
    expect(s.context().phase).toBe('interrupting');
  });

  it('sees a mark taken in the same tick as a timer that fires right after it', async () => {
    const s = await runningSession();
    s.inject(delta('a'));
    await tick(); // indicator on, thinking timer armed for +THINKING_CLEAR_MS
    s.clock.advance(THINKING_CLEAR_MS - 1);
    s.inject(delta('b')); // batched: still pending when the clock moves on synchronously
    s.clock.advance(1); // the thinking timer fires now: it must see 'b' and re-arm, not clear
    expect(s.thinking).toEqual([true]);
    s.clock.advance(THINKING_CLEAR_MS - 2);
    await tick();
    expect(s.thinking).toEqual([true]);
    s.clock.advance(1); // THINKING_CLEAR_MS of quiet since 'b'
    await tick();
    expect(s.thinking).toEqual([true, false]);
  });

  it('turns the indicator on again for a delta after it cleared', async () => {
    const s = await runningSession();
    s.inject(delta('a'));
    await tick();
    s.clock.advance(THINKING_CLEAR_MS);
    await tick();
    expect(s.thinking).toEqual([true, false]);
    s.inject(delta('b'));
    await tick();
    expect(s.thinking).toEqual([true, false, true]);
    expect(s.received.get('agent_output')).toBe(2); // a lone delta goes in as a batch too
    expect(s.received.get('text_delta') ?? 0).toBe(0);
  });

  it('hands the mark over before any later event, so the order of activity is kept', async () => {
    const s = await runningSession();
    s.inject(delta('a'));
    s.clock.advance(500);
    s.inject(delta('b')); // pending mark at T+500
    s.clock.advance(500);
    s.inject({ type: 'turn_complete', status: 'completed', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } });
    expect(s.context().phase).toBe('idle');
    expect(s.context().lastActivityAt).toBe(s.clock.now());
    // The batch went in before turn_complete: the statechart saw the output, then the turn's end.
    expect(s.received.get('agent_output')).toBe(1);
  });

  it('applies a batch of mixed output as one event per transition would: every entry, in order, with its own time', async () => {
    const s = await runningSession();
    const journaled: { type: string; ts: number }[] = [];
    s.runtime.observe({ effect: (e) => void (e.type === 'transcript.emit' && journaled.push({ type: e.entry.type, ts: e.entry.ts })) });
    const t = s.clock.now();
    s.inject({ type: 'thinking', active: true });
    s.clock.advance(10);
    s.inject({ type: 'message', role: 'assistant', id: 'a1', blocks: [{ type: 'thinking', text: 'hmm' }] });
    s.inject({ type: 'thinking', active: false });
    s.clock.advance(10);
    s.inject(delta('x'));
    s.inject({ type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } });
    s.clock.advance(10);
    s.inject({ type: 'tool_result', callId: 'c1', status: 'completed', output: 'ok', isError: false });
    expect(journaled).toEqual([]); // still pending: nothing overtook it, nothing forced it in
    await tick();
    expect(s.received.get('agent_output')).toBe(1);
    expect(journaled).toEqual([
      { type: 'message', ts: t + 10 },
      { type: 'tool_call', ts: t + 20 },
      { type: 'tool_result', ts: t + 30 },
    ]);
    // thinking on, off (the message's), on again (the delta's): as three transitions would have left it.
    expect(s.thinking).toEqual([true, false, true]);
    expect(s.context().lastActivityAt).toBe(t + 30);
    expect(s.context().seq).toBeGreaterThanOrEqual(3);
  });
});

/**
 * What the runtime hands the statechart it takes back once handled (a batch's events, a step's
 * effects), so that nothing still pointing at the container keeps the output alive: V8 then takes
 * an engine's event objects for long-lived and allocates them in the old generation for good (the
 * comment on SessionRuntime#flushOutput; docs/performance-notes.md 13, pass 8).
 */
describe('SessionRuntime: handed-over output is taken back', () => {
  /** Records the `agent_output` batches the runtime sends its actor (the arrays themselves). */
  function recordBatches(runtime: SessionRuntime): AgentEvent[][] {
    const batches: AgentEvent[][] = [];
    const send = runtime.actor.send.bind(runtime.actor);
    runtime.actor.send = (event) => {
      if (event.type === 'agent_output') batches.push(event.events);
      send(event);
    };
    return batches;
  }

  const output: AgentEventBody[] = [
    { type: 'thinking', active: true },
    { type: 'message', role: 'assistant', id: 'a1', blocks: [{ type: 'text', text: 'hi' }] },
    { type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } },
    { type: 'tool_result', callId: 'c1', status: 'completed', output: 'ok', isError: false },
  ];

  it('empties a batch once the statechart has applied it, and a lone event goes in as a batch too', async () => {
    const s = await runningSession({ inspected: false });
    const batches = recordBatches(s.runtime);
    const seq = s.context().seq;
    for (const body of output) s.inject(body);
    await tick();
    s.inject({ type: 'thinking', active: false });
    await tick();
    expect(batches).toEqual([[], []]);
    expect(s.context().seq).toBe(seq + 3); // the message, the call and its result were journaled
    expect(s.context().thinking).toBe(false);
    expect(s.seen.filter((e) => e.type === 'thinking')).toHaveLength(2); // observers got the events themselves
  });

  it('shows an inspector a copy of the batch that stays whole, while it empties its own', async () => {
    const shown: { type: string; events: AgentEvent[] }[] = [];
    const s = await runningSession({
      // Kept to read later, as `ase serve`'s hub keeps them.
      inspect: (e) => {
        if ((e.type === '@xstate.event' || e.type === '@xstate.snapshot' || e.type === '@xstate.microstep') && e.event.type === 'agent_output') shown.push({ type: e.type, events: e.event.events });
      },
    });
    const batches = recordBatches(s.runtime);
    for (const body of output) s.inject(body);
    await tick();
    expect(batches).toEqual([[]]);
    expect(shown.map((x) => x.type).sort()).toEqual(['@xstate.event', '@xstate.microstep', '@xstate.snapshot']);
    for (const { events } of shown) expect(events.map((e) => e.type)).toEqual(['thinking', 'message', 'tool_call', 'tool_result']);
  });

  it('empties a step’s effect batch once every effect is performed; observers got each effect first', async () => {
    const s = await runningSession({ inspected: false });
    const observed: string[] = [];
    s.runtime.observe({ effect: (effect) => void (effect.type === 'transcript.emit' && observed.push(effect.entry.type)) });
    const afterwards: number[] = [];
    // A wildcard listener added now runs after the runtime's own (XState calls them in order).
    s.runtime.actor.on('*', (emitted) => void ('effects' in emitted && afterwards.push(emitted.effects.length)));
    for (const body of output) s.inject(body);
    await tick();
    expect(observed).toEqual(['message', 'tool_call', 'tool_result']);
    expect(afterwards.length).toBeGreaterThan(0);
    expect(afterwards.every((length) => length === 0)).toBe(true);
  });
});

describe('SessionRuntime: output handed over inside another transition', () => {
  it('reaches the statechart whole when an engine reports it from inside an effect (the batch waits in the mailbox)', async () => {
    const s = await runningSession({ inspected: false });
    const journaled: string[] = [];
    let reported = false;
    s.runtime.observe({
      effect: (effect) => {
        if (effect.type === 'transcript.emit') journaled.push(effect.entry.type);
        // Performed inside the transition that emitted it: the engine answers synchronously.
        if (effect.type === 'ephemeral.emit' && effect.kind === 'thinking' && effect.active && !reported) {
          reported = true;
          s.inject({ type: 'message', role: 'assistant', id: 'a1', blocks: [{ type: 'text', text: 'hi' }] });
          s.inject({ type: 'tool_call', callId: 'c1', toolName: 'Bash', input: { command: 'ls' } });
          s.inject({ type: 'turn_complete', status: 'completed', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } });
        }
      },
    });
    s.inject({ type: 'thinking', active: true });
    await tick();
    await tick();
    expect(reported).toBe(true);
    expect(journaled).toEqual(['message', 'tool_call', 'turn_complete']);
    expect(s.context().phase).toBe('idle');
  });
});
