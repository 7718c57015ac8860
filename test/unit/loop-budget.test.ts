/**
 * LoopBudget (src/server/loop-budget.ts), the event loop's share for the replays of `ase serve`:
 * ten workers stepping back to back must let a timer run after about one slice of their steps, not
 * after all of them; and every worker still gets through, in turn.
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

  it('goes on without waiting while the slice lasts', () => {
    const budget = new LoopBudget(1000);
    for (let i = 0; i < 100; i++) expect(budget.pause()).toBeUndefined();
  });
});
