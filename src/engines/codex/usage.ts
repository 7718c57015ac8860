/**
 * Per-turn token usage from Codex's counters: one convention for both engines and the rollout
 * tailer.
 *
 * Codex reports, after every model request, the thread's running `total` and the `last` request's
 * usage (app-server `thread/tokenUsage/updated {total, last}` in camelCase; MCP `token_count` and
 * rollout `event_msg token_count` `{total_token_usage, last_token_usage}` in snake_case). A turn
 * with a tool call makes several requests, so the turn's usage is the SUM of the `last` values
 * reported during the turn; `total` is cumulative over the thread (and restarts at 0 in a resumed
 * process) and is never reported.
 *
 * OpenAI counts cached tokens inside `input_tokens`; our TurnUsage (like Anthropic's) keeps them
 * apart: inputTokens = input − cached, cacheReadTokens = cached, cacheWriteTokens = cache writes;
 * outputTokens includes reasoning tokens. Missing, negative or non-numeric counts read as 0.
 */
import { addTurnUsage } from '../../events/add-turn-usage.js';
import { ZERO_USAGE, type TurnUsage } from '../../events/agent-event.js';

/** The numbers every Codex usage report carries, in app-server's camelCase. */
export interface CodexTokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens?: number;
  outputTokens: number;
}

const n = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** One request's counts (camelCase, as app-server reports them) as TurnUsage. */
export function turnUsageOf(counts: CodexTokenCounts): TurnUsage {
  const cached = n(counts.cachedInputTokens);
  return {
    inputTokens: Math.max(0, n(counts.inputTokens) - cached),
    outputTokens: n(counts.outputTokens),
    cacheReadTokens: cached,
    cacheWriteTokens: n(counts.cacheWriteInputTokens),
  };
}

/** One request's snake_case counts (MCP `token_count`, rollout lines) as TurnUsage. */
export function turnUsageFromCodex(usage: Record<string, unknown>): TurnUsage {
  return turnUsageOf({
    inputTokens: n(usage['input_tokens']),
    cachedInputTokens: n(usage['cached_input_tokens']),
    cacheWriteInputTokens: n(usage['cache_write_input_tokens']),
    outputTokens: n(usage['output_tokens']),
  });
}

/**
 * Codex re-sends its previous usage snapshot unchanged when a turn fails (observed on both live
 * protocols and in rollout files, 0.153.4 and 0.169.0: the thread total equals the previous
 * report's, `last` is the previous request's). Such a repeat is no new request, and counting it
 * would bill the failed turn for the request before it. A snapshot counts only when the thread's
 * total differs from the last one seen.
 */
export class UsageSnapshots {
  private lastTotal: string | undefined;

  /** True for a new snapshot (a new request); false for a repeat of the previous one. */
  isNew(total: unknown): boolean {
    const key = JSON.stringify(total ?? null);
    if (key === this.lastTotal) return false;
    this.lastTotal = key;
    return true;
  }
}

/** Sums `last_token_usage` over a turn from rollout `token_count` payloads, skipping repeated snapshots. */
export class TurnUsageAccumulator {
  private turn: TurnUsage = ZERO_USAGE;
  private readonly snapshots = new UsageSnapshots();

  /** Starts a new turn (totals seen so far are kept to recognise repeats). */
  reset(): void {
    this.turn = ZERO_USAGE;
  }

  /** Feeds one `token_count` payload; `info: null` (rate-limit-only updates) is ignored. */
  add(tokenCount: Record<string, unknown>): void {
    const info = tokenCount['info'];
    if (!isRecord(info) || !isRecord(info['last_token_usage'])) return;
    if (!this.snapshots.isNew(info['total_token_usage'])) return;
    this.turn = addTurnUsage(this.turn, turnUsageFromCodex(info['last_token_usage']));
  }

  current(): TurnUsage {
    return { ...this.turn };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
