/**
 * Timing and memory helpers for the benchmarks: plain loops around `performance.now()`, a warm-up
 * before measuring, and the median of several repetitions (robust against a GC pause or a noisy
 * neighbour on a 2-core machine). No benchmark library: what is measured is visible in the loop.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One repetition: how many operations ran and how long they took (setup excluded by the caller). */
export interface Batch {
  ops: number;
  ms: number;
}

export interface Throughput {
  /** Median over the repetitions. */
  opsPerSec: number;
  usPerOp: number;
  /** Fastest and slowest repetition, µs per operation. */
  minUsPerOp: number;
  maxUsPerOp: number;
  reps: number;
  opsPerRep: number;
}

/**
 * Runs `batch` `warmup` times unmeasured (JIT, caches), then `reps` times measured, and reports the
 * median repetition. `batch` times its own work, so per-repetition setup stays outside the timing.
 */
export async function throughput(batch: () => Batch | Promise<Batch>, { warmup = 2, reps = 5 } = {}): Promise<Throughput> {
  for (let i = 0; i < warmup; i++) await batch();
  const perOp: number[] = [];
  let opsPerRep = 0;
  for (let i = 0; i < reps; i++) {
    const { ops, ms } = await batch();
    opsPerRep = ops;
    perOp.push((ms * 1000) / ops);
  }
  const us = median(perOp);
  return {
    opsPerSec: 1e6 / us,
    usPerOp: us,
    minUsPerOp: Math.min(...perOp),
    maxUsPerOp: Math.max(...perOp),
    reps,
    opsPerRep,
  };
}

/** Times a synchronous loop of `ops` calls. */
export function timeLoop(ops: number, fn: (i: number) => void): Batch {
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) fn(i);
  return { ops, ms: performance.now() - t0 };
}

export interface Latency {
  p50: number;
  p95: number;
  min: number;
  max: number;
  count: number;
}

/** Nearest-rank percentiles of latency samples (ms). */
export function latency(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    min: sorted[0] ?? NaN,
    max: sorted.at(-1) ?? NaN,
    count: sorted.length,
  };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

let gcFn: (() => void) | undefined;

/** A full garbage collection (the bench config passes --expose-gc; this also works without it). */
export function collectGarbage(): void {
  if (!gcFn) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (exposed) gcFn = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  // Twice: the first pass can leave garbage that only becomes unreachable after finalizers ran.
  gcFn();
  gcFn();
}

/** Heap in use after a full GC, in bytes. */
export async function settledHeapUsed(): Promise<number> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Lets every queued promise chain and immediate run (journal appends, store saves, engine starts). */
export async function drain(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
