/** RealClock against Node's timer limit (fake timers stand in for the wall clock). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_DELAY_MS, RealClock } from '../../src/effects/clock.js';

describe('RealClock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a delay beyond what a Node timer holds fires when due, not after 1 ms', () => {
    const clock = new RealClock();
    const fired = vi.fn();
    const thirtyDays = 30 * 24 * 3600 * 1000;
    expect(thirtyDays).toBeGreaterThan(MAX_TIMER_DELAY_MS);
    clock.setTimeout(fired, thirtyDays);
    vi.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(thirtyDays - MAX_TIMER_DELAY_MS - 1_000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('clearTimeout cancels a long timer between its steps', () => {
    const clock = new RealClock();
    const fired = vi.fn();
    const handle = clock.setTimeout(fired, 2 * MAX_TIMER_DELAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 10);
    clock.clearTimeout(handle);
    vi.advanceTimersByTime(2 * MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
  });

  it('ordinary delays fire once, on time', () => {
    const clock = new RealClock();
    const fired = vi.fn();
    clock.setTimeout(fired, 500);
    vi.advanceTimersByTime(499);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});
