/**
 * Per-turn token usage from Codex's counters.
 *
 * Both protocols report, after every model request, the thread's running `total` and the `last`
 * request's usage (app-server `thread/tokenUsage/updated {total, last}`, MCP `token_count
 * {total_token_usage, last_token_usage}`). A turn with a tool call makes several requests, so the
 * turn's usage is the SUM of the `last` values reported during the turn; `total` is cumulative
 * over the thread (and restarts at 0 in a resumed process) and is never used.
 *
 * OpenAI counts cached tokens inside `input_tokens`; our TurnUsage (like Anthropic's) keeps them
 * apart: inputTokens = input − cached, cacheReadTokens = cached.
 */
import type { TurnUsage } from '../../events/agent-event.js';

/** The numbers both protocols carry (camelCase here; MCP's snake_case is mapped by the caller). */
export interface CodexTokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens?: number;
  outputTokens: number;
}

const n = (value: number | undefined): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export function turnUsageOf(counts: CodexTokenCounts): TurnUsage {
  const cached = n(counts.cachedInputTokens);
  return {
    inputTokens: Math.max(0, n(counts.inputTokens) - cached),
    outputTokens: n(counts.outputTokens),
    cacheReadTokens: cached,
    cacheWriteTokens: n(counts.cacheWriteInputTokens),
  };
}

export function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}
