/**
 * `codex exec resume` reports the THREAD's token totals in `turn.completed.usage` (observed with
 * 0.169.0: a second one-request turn reported input 200 after 100), restored from the rollout.
 * A turn's own usage is the difference from the total before it: the engine keeps the last total
 * it saw, and a new engine resuming a thread reads the baseline from the thread's rollout file
 * (its last `token_count` event's `total_token_usage`).
 */
import { readFileSync } from 'node:fs';
import { findRollout } from '../rollout/find-rollout.js';

export type UsageCounts = Record<string, number>;

const COUNTED = ['input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_output_tokens'] as const;

/** The numeric counters of a usage object (missing or malformed ones read as 0). */
export function usageCounts(usage: Record<string, unknown>): UsageCounts {
  return Object.fromEntries(COUNTED.map((k) => [k, typeof usage[k] === 'number' && Number.isFinite(usage[k]) && (usage[k] as number) > 0 ? (usage[k] as number) : 0]));
}

/** `total − baseline` per counter, never negative (a smaller total means it restarted: the total is the turn's). */
export function usageSince(total: UsageCounts, baseline: UsageCounts | undefined): UsageCounts {
  if (!baseline) return total;
  if (COUNTED.some((k) => (total[k] ?? 0) < (baseline[k] ?? 0))) return total;
  return Object.fromEntries(COUNTED.map((k) => [k, (total[k] ?? 0) - (baseline[k] ?? 0)]));
}

/** The thread's token totals so far, from its rollout's last `token_count`; undefined when not found. */
export function rolloutUsageTotal(codexHome: string, threadId: string): UsageCounts | undefined {
  const path = findRollout(codexHome, threadId);
  if (!path) return undefined;
  let last: UsageCounts | undefined;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes('"token_count"')) continue;
    try {
      const total = JSON.parse(line)?.payload?.info?.total_token_usage;
      if (total && typeof total === 'object') last = usageCounts(total);
    } catch {
      // a torn last line: keep the previous total
    }
  }
  return last;
}
