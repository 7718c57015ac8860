/**
 * Per-turn token usage from the rollout's `event_msg token_count` lines.
 *
 * Each model request writes `token_count {info: {total_token_usage, last_token_usage}}`; a turn
 * with tool calls makes several requests, so the turn's usage is the SUM of `last_token_usage`
 * over the turn (`total_token_usage` is cumulative over the thread and never reported).
 *
 * Codex also re-writes the previous snapshot unchanged (observed on a failed turn in 0.153.4 and
 * 0.169.0: a `token_count` whose totals equal the previous line's, `last` = the previous
 * request's). Such a repeat carries no new request, so a snapshot only counts when its
 * `total_token_usage` differs from the last one seen in the file.
 *
 * OpenAI counts cached tokens inside `input_tokens`; TurnUsage (like Anthropic's) keeps them
 * apart: inputTokens = input − cached, cacheReadTokens = cached, cacheWriteTokens =
 * cache_write_input_tokens; outputTokens includes reasoning tokens.
 */
import type { TurnUsage } from '../../../events/agent-event.js';
import { isObject, type Json } from './rollout-line.js';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** One `{input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, …}` as TurnUsage. */
export function turnUsageFromCodex(usage: Json): TurnUsage {
  const cached = count(usage.cached_input_tokens);
  return {
    inputTokens: Math.max(0, count(usage.input_tokens) - cached),
    outputTokens: count(usage.output_tokens),
    cacheReadTokens: cached,
    cacheWriteTokens: count(usage.cache_write_input_tokens),
  };
}

const zero = (): TurnUsage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

export class TurnUsageAccumulator {
  private turn: TurnUsage = zero();
  private lastTotal: string | undefined;

  /** Starts a new turn (totals seen so far are kept to recognise repeats). */
  reset(): void {
    this.turn = zero();
  }

  /** Feeds one `token_count` payload; `info: null` (rate-limit-only updates) is ignored. */
  add(tokenCount: Json): void {
    const info = tokenCount.info;
    if (!isObject(info) || !isObject(info.last_token_usage)) return;
    const total = JSON.stringify(info.total_token_usage ?? null);
    if (total === this.lastTotal) return; // a repeated snapshot, not a new request
    this.lastTotal = total;
    const last = turnUsageFromCodex(info.last_token_usage);
    this.turn = {
      inputTokens: this.turn.inputTokens + last.inputTokens,
      outputTokens: this.turn.outputTokens + last.outputTokens,
      cacheReadTokens: this.turn.cacheReadTokens + last.cacheReadTokens,
      cacheWriteTokens: this.turn.cacheWriteTokens + last.cacheWriteTokens,
    };
  }

  current(): TurnUsage {
    return { ...this.turn };
  }
}
