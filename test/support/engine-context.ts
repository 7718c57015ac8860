/**
 * The EngineContext for engines that tests drive directly (no SessionActor, no runtime): real
 * time and real timers, from the library's own RealClock, as the runtime would give them.
 */
import { RealClock } from '../../src/effects/clock.js';
import type { EngineContext } from '../../src/engines/core/engine.js';

/** Real time, real timers; `extra` overrides parts (e.g. a scripted `now`, a `bin`). */
export function realEngineContext(extra: Partial<EngineContext> = {}): EngineContext {
  const clock = new RealClock();
  return {
    now: () => clock.now(),
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
    ...extra,
  };
}
