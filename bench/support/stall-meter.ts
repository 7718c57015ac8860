/**
 * Event-loop stalls of this process, told apart by what they were: a 5 ms ticker measures each gap
 * between its ticks (less the 5 ms it asked for) and the CPU this thread used in it
 * (`process.threadCpuUsage`); a GC observer adds the GC pauses that fell inside it.
 *
 * Why: on a loaded machine a gap of 300 ms may hold 5 ms of this thread's CPU (the process waited
 * for a core: the scheduler, not the loop) or 300 ms (work or GC held the loop). A wall-clock
 * maximum alone (`monitorEventLoopDelay`) cannot say which; the stall goal is about the second.
 * A parallel GC pause waits for its helper threads too, and that wait is not this thread's CPU.
 */
import { PerformanceObserver } from 'node:perf_hooks';

export interface Stall {
  /** When the gap began (performance.now()). */
  at: number;
  /** The gap past the ticker's 5 ms. */
  wallMs: number;
  /** This thread's CPU in the gap. */
  cpuMs: number;
  /** GC pause time overlapping the gap (wall). */
  gcMs: number;
}

export interface StallSummary {
  /** The longest gap (wall), with its CPU. */
  longest: Stall;
  /** The gap in which this thread used the most CPU. */
  mostCpu: Stall;
  /** Gaps over 50 ms wall, and of those, the ones with over 50 ms of this thread's CPU. */
  over50: number;
  over50Cpu: number;
  longestGcMs: number;
}

const TICK_MS = 5;
const NONE: Stall = { at: 0, wallMs: 0, cpuMs: 0, gcMs: 0 };

export class StallMeter {
  readonly #gaps: Stall[] = [];
  readonly #gcs: { start: number; ms: number }[] = [];
  readonly #ticker: NodeJS.Timeout;
  readonly #observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) this.#gcs.push({ start: entry.startTime, ms: entry.duration });
  });
  #summary: StallSummary | undefined;

  constructor() {
    let tickAt = performance.now();
    let tickCpu = process.threadCpuUsage();
    this.#ticker = setInterval(() => {
      const now = performance.now();
      const cpu = process.threadCpuUsage(tickCpu);
      const wallMs = now - tickAt - TICK_MS;
      // Only gaps worth a look are kept: a few hundred over a run, not one per tick.
      if (wallMs > 10) this.#gaps.push({ at: tickAt, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, gcMs: 0 });
      tickAt = now;
      tickCpu = process.threadCpuUsage();
    }, TICK_MS);
    this.#observer.observe({ entryTypes: ['gc'] });
  }

  /** Stops measuring (again: the same summary). */
  stop(): StallSummary {
    if (this.#summary) return this.#summary;
    clearInterval(this.#ticker);
    this.#observer.disconnect();
    for (const gap of this.#gaps) {
      const end = gap.at + gap.wallMs + TICK_MS;
      for (const gc of this.#gcs) gap.gcMs += Math.max(0, Math.min(end, gc.start + gc.ms) - Math.max(gap.at, gc.start));
    }
    const max = (key: 'wallMs' | 'cpuMs') => this.#gaps.reduce((best, gap) => (gap[key] > best[key] ? gap : best), NONE);
    this.#summary = {
      longest: max('wallMs'),
      mostCpu: max('cpuMs'),
      over50: this.#gaps.filter((g) => g.wallMs > 50).length,
      over50Cpu: this.#gaps.filter((g) => g.cpuMs > 50).length,
      longestGcMs: this.#gcs.reduce((m, gc) => Math.max(m, gc.ms), 0),
    };
    return this.#summary;
  }
}
