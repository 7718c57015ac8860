/**
 * EventDeduper: live events win over rollout-derived ones for the same
 * (threadId, kind, itemId) key; tailed events wait `graceMs` for their live twin.
 * A manual clock drives the grace timer.
 */
import { describe, expect, it } from 'vitest';
import { dedupeKeyString, EventDeduper, type DedupeKey, type DeduperTimers } from '../../src/engines/codex/rollout/index.js';

/** A manual clock: `advance(ms)` runs the timers that fall due. */
function manualClock() {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const api: DeduperTimers = {
    setTimeout: (fn, ms) => {
      const id = nextId++;
      timers.set(id, { due: now + ms, fn });
      return id;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
  };
  return {
    timers: api,
    now: () => now,
    pending: () => timers.size,
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.due <= until).sort((a, b) => a[1].due - b[1].due)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].due;
        due[1].fn();
      }
      now = until;
    },
  };
}

const key = (itemId: string, kind: DedupeKey['kind'] = 'message', turnId = 't1', threadId = 'th'): DedupeKey => ({ threadId, turnId, kind, itemId });

describe('EventDeduper', () => {
  it('drops a tailed event whose key the live stream already delivered', () => {
    const d = new EventDeduper<string>({ graceMs: 0 });
    const out: string[] = [];
    expect(d.offerLive(key('msg_1'))).toBe(true);
    expect(d.offerTailed(key('msg_1'), 'tail msg_1', (v) => out.push(v))).toBe(false);
    expect(d.offerTailed(key('msg_2'), 'tail msg_2', (v) => out.push(v))).toBe(true);
    expect(out).toEqual(['tail msg_2']);
    expect(d.suppressed).toBe(1);
    // a live copy after the tailed one was delivered is not delivered twice
    expect(d.offerLive(key('msg_2'))).toBe(false);
  });

  it('live wins within the grace period even when the rollout line came first', () => {
    const clock = manualClock();
    const d = new EventDeduper<string>({ graceMs: 250, timers: clock.timers, now: clock.now });
    const out: string[] = [];
    d.offerTailed(key('call_1', 'tool_call'), 'tail call_1', (v) => out.push(v));
    d.offerTailed(key('call_2', 'tool_call'), 'tail call_2', (v) => out.push(v));
    clock.advance(100);
    expect(out).toEqual([]);
    expect(d.offerLive(key('call_1', 'tool_call'))).toBe(true); // the live one is delivered by the caller
    clock.advance(200);
    expect(out).toEqual(['tail call_2']); // call_1's tailed copy was dropped
    expect(d.suppressed).toBe(1);
    expect(clock.pending()).toBe(0);
  });

  it('held tailed events are delivered in arrival order', () => {
    const clock = manualClock();
    const d = new EventDeduper<string>({ graceMs: 50, timers: clock.timers, now: clock.now });
    const out: string[] = [];
    for (const id of ['a', 'b', 'c']) {
      d.offerTailed(key(id), id, (v) => out.push(v));
      clock.advance(10);
    }
    d.offerLive(key('b'));
    clock.advance(100);
    expect(out).toEqual(['a', 'c']);
  });

  it('matches keys on (threadId, kind, itemId): a side that lacks the turn id still dedupes', () => {
    const d = new EventDeduper<string>({ graceMs: 0 });
    d.offerLive(key('msg_1', 'message', ''));
    expect(d.offerTailed(key('msg_1', 'message', 'turn-x'), 'x', () => {})).toBe(false);
    // but kind and thread matter
    expect(d.offerTailed(key('msg_1', 'tool_call'), 'y', () => {})).toBe(true);
    expect(d.offerTailed(key('msg_1', 'message', 't1', 'other-thread'), 'z', () => {})).toBe(true);
    expect(dedupeKeyString(key('a', 'message', 't1'))).toBe(dedupeKeyString(key('a', 'message', 't2')));
  });

  it('a second tailed copy of a held key is dropped (re-reading the file after a reconnect)', () => {
    const clock = manualClock();
    const d = new EventDeduper<string>({ graceMs: 50, timers: clock.timers, now: clock.now });
    const out: string[] = [];
    d.offerTailed(key('m'), 'first', (v) => out.push(v));
    expect(d.offerTailed(key('m'), 'second', (v) => out.push(v))).toBe(false);
    clock.advance(50);
    expect(out).toEqual(['first']);
  });

  it('flush() delivers what is held now; close() drops it and stops the timer', () => {
    const clock = manualClock();
    const d = new EventDeduper<string>({ graceMs: 1000, timers: clock.timers, now: clock.now });
    const out: string[] = [];
    d.offerTailed(key('a'), 'a', (v) => out.push(v));
    d.flush();
    expect(out).toEqual(['a']);
    d.offerTailed(key('b'), 'b', (v) => out.push(v));
    expect(clock.pending()).toBe(1);
    d.close();
    expect(clock.pending()).toBe(0);
    clock.advance(5000);
    expect(out).toEqual(['a']);
    expect(d.offerTailed(key('c'), 'c', (v) => out.push(v))).toBe(false);
  });

  it('remembers at most maxKeys keys (oldest forgotten first)', () => {
    const d = new EventDeduper<string>({ graceMs: 0, maxKeys: 2 });
    d.offerLive(key('1'));
    d.offerLive(key('2'));
    d.offerLive(key('3'));
    expect(d.has(key('1'))).toBe(false);
    expect(d.has(key('2'))).toBe(true);
    expect(d.has(key('3'))).toBe(true);
  });
});
