/**
 * The runtime's notion of time. Real by default; `SimulatedClock` lets tests and the model-based
 * harness move time by hand, so timers (stall, permission deadline, backoff) are tested without waiting.
 */
export type TimerHandle = { readonly id: number };

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The longest delay a Node timer holds; a longer one fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Wall-clock time and Node timers. A pending timer keeps the process alive, like any Node timer: stop the session to release it. */
export class RealClock implements Clock {
  #nextId = 1;
  readonly #timers = new Map<number, NodeJS.Timeout>();

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#arm(id, fn, Date.now() + Math.max(0, ms));
    return { id };
  }

  /** Delays beyond what a Node timer holds (about 24.8 days: a deadline meant as "never") are waited in steps. */
  #arm(id: number, fn: () => void, due: number): void {
    const wait = Math.max(0, due - Date.now());
    const t = setTimeout(() => {
      if (wait > MAX_TIMER_DELAY_MS) return this.#arm(id, fn, due);
      this.#timers.delete(id);
      fn();
    }, Math.min(wait, MAX_TIMER_DELAY_MS));
    this.#timers.set(id, t);
  }

  clearTimeout(handle: TimerHandle): void {
    clearTimeout(this.#timers.get(handle.id));
    this.#timers.delete(handle.id);
  }
}

interface Pending {
  id: number;
  due: number;
  fn: () => void;
}

export class SimulatedClock implements Clock {
  #now: number;
  #nextId = 1;
  #pending: Pending[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#pending.push({ id, due: this.#now + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#pending = this.#pending.filter((p) => p.id !== handle.id);
  }

  /** Number of timers still waiting. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** The earliest due time of a waiting timer, if any. */
  nextDue(): number | undefined {
    return this.#pending.reduce<number | undefined>((min, p) => (min === undefined || p.due < min ? p.due : min), undefined);
  }

  /** Moves time forward to `time`, firing every timer due by then in due order (ties: set order). */
  advanceTo(time: number): void {
    for (;;) {
      const next = this.#pending
        .filter((p) => p.due <= time)
        .sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.#pending = this.#pending.filter((p) => p !== next);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
    }
    this.#now = Math.max(this.#now, time);
  }

  /** Fires only the earliest due timer (ties: set order), moving time to its due time. False if none. */
  runNext(): boolean {
    const next = [...this.#pending].sort((a, b) => a.due - b.due || a.id - b.id)[0];
    if (!next) return false;
    this.#pending = this.#pending.filter((p) => p !== next);
    this.#now = Math.max(this.#now, next.due);
    next.fn();
    return true;
  }

  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }
}
