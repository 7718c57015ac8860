/**
 * LoopBudget (src/server/loop-budget.ts), the event loop's share for the replays of `ase serve`:
 * ten workers stepping back to back must let a timer run after about one slice of their steps, not
 * after all of them; and every worker still gets through, in turn. Page reads: two at a time.
 */
import { describe, expect, it } from 'vitest';
import { LoopBudget } from '../../src/server/loop-budget.js';

/** A step that holds the loop for `ms` (a page parsed, frames encoded). */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // held
  }
};

describe('LoopBudget', () => {
  it('ten workers of 1 ms steps let a timer in after about a slice of steps, and all of them finish', async () => {
    const budget = new LoopBudget(10);
    let steps = 0;
    let stepsWhenTimerRan = -1;
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        stepsWhenTimerRan = steps;
        resolve();
      }, 0),
    );
    const worker = async () => {
      for (let i = 0; i < 40; i++) {
        const wait = budget.pause();
        if (wait) await wait;
        busy(1);
        steps++;
      }
    };
    await Promise.all([...Array.from({ length: 10 }, worker), timer]);
    expect(steps).toBe(400);
    // Without the budget the timer would wait for all 400 ms of steps. With it, the first slice
    // (10 ms: ~10 steps, one more per worker that was mid-step) passes, then the loop turns.
    expect(stepsWhenTimerRan).toBeGreaterThanOrEqual(0);
    expect(stepsWhenTimerRan).toBeLessThan(60);
  });

  it('reads at most `reads` pages at once, the others in turn, each exactly once', async () => {
    const budget = new LoopBudget(10, 2);
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const read = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      done.push(n);
      if (n === 3) throw new Error('a failed read');
      return n;
    };
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, n) => budget.reading(read(n))));
    expect(most).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // A failed read gives its slot back like any other.
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await budget.reading(async () => 'after')).toBe('after');
  });

  it('goes on without waiting while the slice lasts', () => {
    const budget = new LoopBudget(1000);
    for (let i = 0; i < 100; i++) expect(budget.pause()).toBeUndefined();
  });
});
