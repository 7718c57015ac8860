/**
 * The runtime's SessionActor emits each step's effects as one batch (issue 24: XState's work per
 * emitted event was most of what a dense stream cost in the statechart). These tests hold what
 * that must not change: the same effects in the same order and the same context after every
 * event as an actor that emits effect by effect; pure `transition()` callers still get one
 * `xstate.emit` action per effect; and an inspector of the runtime still sees one `xstate.emit`
 * action per effect, exactly the effects the runtime performs.
 */
import { createActor, initialTransition, transition, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { emitEffectsInBatches, isEffectBatch, sessionMachine, type EffectBatch, type SessionEvent } from '../../src/actors/session.js';
import type { SessionMachineInput } from '../../src/actors/session-context.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import { FakeEngine } from '../../src/engines/fake/index.js';
import type { Effect } from '../../src/events/effect.js';
import { SimulatedClock } from '../../src/effects/clock.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { SessionRuntime } from '../../src/effects/session-runtime.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';
import { effectsOf } from '../support/machine.js';

const T0 = 1_700_000_000_000;
const input: SessionMachineInput = { sessionId: 's-batches', agent: 'fake', workDir: '/work', mode: 'remote', now: T0, config: { thinkingClearMs: 3_000 } };
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A turn with every kind of step: inputs, agent output alone and batched, timers, writes, a refusal, the stop. */
function story(): SessionEvent[] {
  const at = (ms: number) => T0 + ms;
  const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
  return [
    { type: 'persist_ok', version: 1, at: at(1) },
    { type: 'ready', gen: 1, at: at(2) },
    { type: 'send', text: 'go', localId: 'l1', at: at(3) },
    { type: 'send', text: 'go', localId: 'l1', at: at(4) }, // refused: a duplicate
    { type: 'persist_ok', version: 2, at: at(5) },
    { type: 'thinking', gen: 1, active: true, at: at(6) },
    {
      type: 'agent_output',
      gen: 1,
      at: at(12),
      events: [
        { type: 'thinking', gen: 1, active: false, at: at(7) },
        { type: 'text_delta', gen: 1, messageId: 'm1', text: 'a', at: at(8) },
        { type: 'message', gen: 1, id: 'm1', role: 'assistant', blocks: [{ type: 'text', text: 'a' }], at: at(9) },
        { type: 'tool_call', gen: 1, callId: 't1', toolName: 'Read', input: { path: 'x' }, at: at(10) },
        { type: 'thinking', gen: 1, active: true, at: at(11) },
        { type: 'tool_result', gen: 1, callId: 't1', status: 'completed', output: 'ok', isError: false, at: at(12) },
      ],
    } as SessionEvent,
    { type: 'timer_fired', id: 'thinking', at: at(3_012) },
    { type: 'ready', gen: 7, at: at(3_013) }, // another generation's: nothing
    { type: 'turn_complete', gen: 1, status: 'completed', usage, at: at(3_014) },
    { type: 'timer_fired', id: 'persist', at: at(3_300) },
    { type: 'persist_ok', version: 3, at: at(3_301) },
    { type: 'stop', at: at(3_400) },
    { type: 'exited', gen: 1, code: 0, signal: null, at: at(3_401) },
  ];
}

describe('SessionActor: effects in one batch per step', () => {
  it('emits what an actor emitting effect by effect emits, in order, with the same context after every event', () => {
    const single = createActor(sessionMachine, { input });
    const batched = createActor(sessionMachine, { input });
    emitEffectsInBatches(batched);
    const fromSingle: Effect[] = [];
    const fromBatched: Effect[] = [];
    const batches: EffectBatch[] = [];
    single.on('*', (emitted) => {
      expect(isEffectBatch(emitted)).toBe(false);
      fromSingle.push(emitted as Effect);
    });
    batched.on('*', (emitted) => {
      if (!isEffectBatch(emitted)) return void fromBatched.push(emitted);
      batches.push(emitted);
      fromBatched.push(...emitted.effects);
    });
    single.start();
    batched.start();
    // The first step is taken when the actor is created, before it can be registered: effect by effect.
    expect(fromBatched).toEqual(fromSingle);
    const firstStep = fromBatched.length;
    for (const event of story()) {
      const before = batches.length;
      single.send(event);
      batched.send(event);
      expect(fromBatched, event.type).toEqual(fromSingle);
      expect(batched.getSnapshot().context, event.type).toEqual(single.getSnapshot().context);
      expect(batched.getSnapshot().value, event.type).toEqual(single.getSnapshot().value);
      expect(batches.slice(before).every((b) => b.effects.length > 0), 'no empty batch').toBe(true);
    }
    expect(single.getSnapshot().status).toBe('done');
    expect(batched.getSnapshot().status).toBe('done');
    // The story is not trivial: the batched output step alone has several effects, emitted as one event.
    expect(fromSingle.filter((e) => e.type === 'transcript.emit').length).toBeGreaterThanOrEqual(6);
    expect(batches.length).toBeLessThan(fromSingle.length);
    expect(batches.flatMap((b) => b.effects)).toEqual(fromSingle.slice(firstStep)); // every later step came as a batch
  });

  it('leaves pure transition() callers one xstate.emit action per effect', () => {
    emitEffectsInBatches(createActor(sessionMachine, { input })); // another actor batching changes nothing here
    let [snapshot, actions] = initialTransition(sessionMachine, input);
    const emitted = (list: readonly { type: string; params?: unknown }[]) => list.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: Effect | EffectBatch }).event);
    expect(emitted(actions).some(isEffectBatch)).toBe(false);
    expect(effectsOf(actions).map((e) => e.type)).toEqual(['engine.start', 'state.persist', 'ephemeral.emit']);
    for (const event of story()) {
      [snapshot, actions] = transition(sessionMachine, snapshot, event);
      expect(emitted(actions).some(isEffectBatch), event.type).toBe(false);
    }
  });
});

async function runningRuntime(inspect?: (e: InspectionEvent) => void) {
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
  const clock = new SimulatedClock(T0);
  const runtime = new SessionRuntime({
    input: { ...input, sessionId: 's-timers' },
    registry: new EngineRegistry().register(factory),
    clock,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    ...(inspect && { inspect }),
  });
  const performed: Effect[] = [];
  runtime.observe({ effect: (effect) => void performed.push(effect) });
  runtime.start();
  await tick();
  await tick();
  const engine = engines.at(-1)!;
  engine.inject({ type: 'ready' });
  await tick();
  runtime.dispatch({ type: 'send', text: 'go', localId: 'l1' });
  for (let i = 0; i < 5; i++) await tick();
  return { runtime, engine, clock, performed };
}

describe('SessionRuntime: timers of one step', () => {
  it('arms only the last setting of a timer a step sets and cancels many times; observers still hear every change', async () => {
    for (const last of [true, false]) {
      const { runtime, engine, clock, performed } = await runningRuntime();
      const before = performed.length;
      let arms = 0;
      const arm = clock.setTimeout.bind(clock);
      clock.setTimeout = (fn, ms) => {
        arms += 1;
        return arm(fn, ms);
      };
      // One batch: the indicator on and off 20 times (a timer.set and a timer.cancel each), ending `last`.
      for (let i = 0; i < 20; i++) {
        engine.inject({ type: 'thinking', active: true });
        engine.inject({ type: 'text_delta', messageId: 'm1', text: `t${i}` });
        if (i < 19 || !last) engine.inject({ type: 'thinking', active: false });
      }
      await tick();
      const timerEffects = performed.slice(before).filter((e) => e.type === 'timer.set' || e.type === 'timer.cancel');
      expect(timerEffects.filter((e) => e.type === 'timer.set' && e.id === 'thinking')).toHaveLength(20);
      expect(timerEffects.filter((e) => e.type === 'timer.cancel' && e.id === 'thinking')).toHaveLength(last ? 19 : 20);
      expect(arms, 'real timers armed for the batch').toBe(last ? 1 : 0);
      const armed = runtime.armedTimers().sort();
      expect(armed).toEqual(Object.keys(runtime.actor.getSnapshot().context.timers).sort());
      expect(armed.includes('thinking')).toBe(last);
      // The real timers match: exactly one per armed id, and the thinking one fires at its deadline.
      expect(clock.pendingCount).toBe(armed.length);
      if (last) {
        clock.advanceTo(runtime.actor.getSnapshot().context.timers['thinking']!);
        await tick();
        expect(runtime.actor.getSnapshot().context.thinking).toBe(false);
        expect(runtime.armedTimers()).not.toContain('thinking');
      }
      await runtime.dispose();
    }
  });
});

describe('SessionRuntime: an inspector sees each effect', () => {
  it('gets one xstate.emit action per effect, exactly the effects the runtime performs, in order', async () => {
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
    const inspected: (Effect | EffectBatch)[] = [];
    const runtime = new SessionRuntime({
      input: { ...input, sessionId: 's-inspected' },
      registry: new EngineRegistry().register(factory),
      clock: new SimulatedClock(T0),
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      inspect: (e: InspectionEvent) => {
        if (e.type === '@xstate.action' && e.action.type === 'xstate.emit') inspected.push((e.action.params as { event: Effect | EffectBatch }).event);
      },
    });
    const performed: Effect[] = [];
    runtime.observe({ effect: (effect) => void performed.push(effect) });
    runtime.start();
    await tick();
    await tick();
    const engine = engines.at(-1)!;
    engine.inject({ type: 'ready' });
    await tick();
    runtime.dispatch({ type: 'send', text: 'go', localId: 'l1' });
    for (let i = 0; i < 5; i++) await tick();
    engine.inject({ type: 'thinking', active: true });
    for (let i = 0; i < 20; i++) engine.inject({ type: 'text_delta', messageId: 'm1', text: `t${i}` });
    engine.inject({ type: 'message', id: 'm1', role: 'assistant', blocks: [{ type: 'text', text: 'done' }] });
    engine.inject({ type: 'tool_call', callId: 't1', toolName: 'Read', input: { path: 'x' } });
    engine.inject({ type: 'tool_result', callId: 't1', status: 'completed', output: 'ok', isError: false });
    engine.inject({ type: 'turn_complete', status: 'completed', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } });
    for (let i = 0; i < 5; i++) await tick();
    runtime.dispatch({ type: 'abort' }); // refused (no turn): a client.error step
    await runtime.dispose();
    expect(inspected.some(isEffectBatch)).toBe(false);
    expect(performed.filter((e) => e.type === 'transcript.emit').length).toBeGreaterThanOrEqual(3);
    expect(inspected).toEqual(performed);
  });
});
