/**
 * EngineEvents, the emitting side all engines share: stamping, validation, the `exited` latch,
 * ordered delivery and the `activity` throttle.
 */
import { describe, expect, it } from 'vitest';
import { EngineEvents } from '../../src/engines/core/engine-events.js';
import { AseError } from '../../src/errors.js';
import { ACTIVITY_INTERVAL_MS, type AgentEvent, type AgentEventBody } from '../../src/events/agent-event.js';

function setup(options?: ConstructorParameters<typeof EngineEvents>[1]) {
  const clock = { t: 5_000 };
  const events = new EngineEvents({ now: () => clock.t }, options);
  const seen: AgentEvent[] = [];
  events.subscribe((e) => seen.push(e));
  return { clock, events, seen };
}

const invalid = { type: 'text_delta', messageId: 'm' } as unknown as AgentEventBody;

describe('EngineEvents', () => {
  it('drops bodies until a generation is bound, then stamps gen and the clock time', () => {
    const { clock, events, seen } = setup();
    expect(events.emit({ type: 'ready' })).toBeUndefined();
    events.bind(4);
    clock.t = 6_000;
    expect(events.emit({ type: 'ready' })).toEqual({ type: 'ready', gen: 4, at: 6_000 });
    expect(seen).toEqual([{ type: 'ready', gen: 4, at: 6_000 }]);
  });

  it('checks streamed events (text_delta, thinking, activity) by the same rules as their schemas, without extra fields', () => {
    const { events, seen } = setup();
    events.bind(2);
    const extra = { type: 'text_delta', messageId: 'm', text: 'hi', injected: true } as unknown as AgentEventBody;
    expect(events.emit(extra)).toEqual({ type: 'text_delta', gen: 2, at: 5_000, messageId: 'm', text: 'hi' });
    expect(events.emit({ type: 'thinking', active: true })).toEqual({ type: 'thinking', gen: 2, at: 5_000, active: true });
    // A sub-agent's delta keeps its scope; an empty one is refused, as by subAgentScope.
    expect(events.emit({ type: 'text_delta', messageId: 'm', text: 'sub', parentCallId: 'call_1' })).toEqual({ type: 'text_delta', gen: 2, at: 5_000, parentCallId: 'call_1', messageId: 'm', text: 'sub' });
    expect(events.emit({ type: 'thinking', active: false, parentCallId: 'call_1' })).toEqual({ type: 'thinking', gen: 2, at: 5_000, parentCallId: 'call_1', active: false });
    for (const bad of [
      { type: 'text_delta', messageId: 'm', text: 'x', parentCallId: '' },
      { type: 'text_delta', messageId: 'm', text: 5 },
      { type: 'text_delta', messageId: null, text: 'x' },
      { type: 'thinking', active: 'yes' },
    ]) {
      expect(events.emit(bad as unknown as AgentEventBody), JSON.stringify(bad)).toBeUndefined();
    }
    expect(events.invalidEvents).toHaveLength(4);
    expect(seen.map((e) => e.type)).toEqual(['text_delta', 'thinking', 'text_delta', 'thinking']);
    // A generation or time the schema refuses is refused on the fast path too.
    const odd = new EngineEvents({ now: () => Number.NaN });
    odd.bind(1);
    expect(odd.emit({ type: 'text_delta', messageId: 'm', text: 'x' })).toBeUndefined();
    expect(odd.invalidEvents).toHaveLength(1);
  });

  it('records an invalid body instead of emitting it, or throws when told to', () => {
    const { events, seen } = setup();
    events.bind(1);
    expect(events.emit(invalid)).toBeUndefined();
    expect(seen).toEqual([]);
    expect(events.invalidEvents).toEqual([{ reason: expect.stringMatching(/^invalid AgentEvent/), raw: invalid }]);

    const strict = setup({ onInvalid: 'throw' });
    strict.events.bind(1);
    expect(() => strict.events.emit(invalid)).toThrow();
    expect(strict.seen).toEqual([]);
  });

  it('emits nothing after exited and resolves exitedEmitted once it was delivered', async () => {
    const { events, seen } = setup();
    events.bind(2);
    events.emitAll([{ type: 'exited', code: 0, signal: null }, { type: 'ready' }]);
    expect(events.exited).toBe(true);
    expect(seen.map((e) => e.type)).toEqual(['exited']);
    await events.exitedEmitted;
  });

  it('a failed start is error + exited {reason: start failed}, and a typed error to reject with', () => {
    const { events, seen } = setup();
    events.bind(1);
    const thrown = events.startFailed(new Error('spawn ENOENT'));
    expect(thrown).toBeInstanceOf(AseError);
    expect(thrown).toMatchObject({ code: 'ENGINE_START_FAILED', message: 'spawn ENOENT' });
    expect(seen.map(({ gen: _g, at: _a, ...body }) => body)).toEqual([
      { type: 'error', kind: 'fatal', message: 'spawn ENOENT', retryable: false },
      { type: 'exited', code: null, signal: null, reason: 'start failed' },
    ]);
    const options = new AseError('INVALID_OPTIONS', 'bad option');
    expect(setup().events.startFailed(options)).toBe(options);
  });

  it('delivers in order even when a listener emits while it is being called, and keeps listener errors', () => {
    const { events, seen } = setup();
    events.bind(1);
    events.subscribe((e) => {
      if (e.type === 'ready') events.emit({ type: 'thinking', active: true });
    });
    events.subscribe(() => {
      throw new Error('broken listener');
    });
    events.emit({ type: 'ready' });
    expect(seen.map((e) => e.type)).toEqual(['ready', 'thinking']);
    expect(events.listenerErrors).toHaveLength(2);
  });

  it('activity: only after ready, at most once per interval since the last event, never for handled traffic that emitted', () => {
    const { clock, events, seen } = setup();
    events.bind(1);
    events.signOfLife();
    expect(seen).toEqual([]); // not ready yet
    events.emit({ type: 'ready' });
    clock.t += ACTIVITY_INTERVAL_MS - 1;
    events.observe(() => undefined);
    expect(seen.map((e) => e.type)).toEqual(['ready']); // too soon
    clock.t += 1;
    events.observe(() => undefined);
    expect(seen.map((e) => e.type)).toEqual(['ready', 'activity']);
    clock.t += ACTIVITY_INTERVAL_MS;
    events.observe(() => void events.emit({ type: 'thinking', active: false }));
    expect(seen.map((e) => e.type)).toEqual(['ready', 'activity', 'thinking']); // the traffic produced its own event
    clock.t += ACTIVITY_INTERVAL_MS;
    events.emit({ type: 'exited', code: 0, signal: null });
    events.signOfLife();
    expect(seen.at(-1)?.type).toBe('exited');
  });
});
