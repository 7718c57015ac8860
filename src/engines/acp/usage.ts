/**
 * A turn's token usage. ACP has no stable usage field yet, so agents report it in one of three
 * places, and the turn's usage is read from exactly ONE of them (never added up across them):
 *
 * 1. the `session/prompt` result's `usage` (unstable; documented as this turn's): opencode,
 *    copilot, claude-code-acp, codex-acp;
 * 2. else the result's `_meta.quota.token_count` (gemini-cli, observed per turn on 0.61.0);
 * 3. else what the turn's message chunks carried in `_meta.usage`: Qwen Code (0.24.4) sends one
 *    empty `agent_message_chunk` per model request with that request's counts (its
 *    `emitUsageMetadata`), so a turn with a tool call reports several, summed here.
 *
 * An agent that reports none gives zeros.
 */
import { ZERO_USAGE, type TurnUsage } from '../../events/agent-event.js';
import { isRecord } from './messages.js';

const count = (source: Record<string, unknown>, key: string): number => {
  const value = source[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
};

/** The usage the PromptResponse itself carries (sources 1 and 2), or undefined when it carries none. */
export function promptResultUsage(result: unknown): TurnUsage | undefined {
  if (!isRecord(result)) return undefined;
  if (isRecord(result['usage'])) {
    const u = result['usage'];
    return { inputTokens: count(u, 'inputTokens'), outputTokens: count(u, 'outputTokens'), cacheReadTokens: count(u, 'cachedReadTokens'), cacheWriteTokens: count(u, 'cachedWriteTokens') };
  }
  const meta = isRecord(result['_meta']) ? result['_meta'] : undefined;
  const quota = meta && isRecord(meta['quota']) ? meta['quota'] : undefined;
  const tokens = quota && isRecord(quota['token_count']) ? quota['token_count'] : undefined;
  if (tokens) return { inputTokens: count(tokens, 'input_tokens'), outputTokens: count(tokens, 'output_tokens'), cacheReadTokens: 0, cacheWriteTokens: 0 };
  return undefined;
}

/**
 * One model request's usage from a chunk's `_meta.usage` (source 3), or undefined. Qwen Code fills
 * it from its Gemini-style counters: `inputTokens` is the whole prompt INCLUDING the cached part
 * (`cachedReadTokens`), so the cached part is taken out of inputTokens; `outputTokens` already
 * holds the reasoning tokens on the OpenAI-compatible path (`completion_tokens`; `thoughtTokens`
 * is a part of it, estimated from the text when the provider gives none), so `thoughtTokens` is
 * never added.
 */
export function chunkUsage(meta: unknown): TurnUsage | undefined {
  const usage = isRecord(meta) && isRecord(meta['usage']) ? meta['usage'] : undefined;
  if (!usage) return undefined;
  const cached = count(usage, 'cachedReadTokens');
  return { inputTokens: Math.max(0, count(usage, 'inputTokens') - cached), outputTokens: count(usage, 'outputTokens'), cacheReadTokens: cached, cacheWriteTokens: 0 };
}

/**
 * The turn's token usage: the PromptResponse's own when it has any, else `fromChunks` (what the
 * turn's chunks reported), else zeros. One source only, so nothing is counted twice.
 */
export function turnUsage(result: unknown, fromChunks?: TurnUsage): TurnUsage {
  return promptResultUsage(result) ?? (fromChunks ? { ...fromChunks } : { ...ZERO_USAGE });
}
