/**
 * A turn's token usage from the agent's `session/prompt` result. ACP has no stable usage field
 * yet, so this reads the unstable one and gemini-cli's own; an agent that reports neither gives
 * zeros.
 */
import { ZERO_USAGE, type TurnUsage } from '../../events/agent-event.js';
import { isRecord } from './messages.js';

/**
 * The turn's token usage from the PromptResponse: `usage` (unstable; documented as this turn's),
 * else gemini-cli's `_meta.quota.token_count` (observed per turn on 0.61.0).
 */
export function turnUsage(result: unknown): TurnUsage {
  if (!isRecord(result)) return { ...ZERO_USAGE };
  const count = (source: Record<string, unknown>, key: string): number => {
    const value = source[key];
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
  };
  if (isRecord(result['usage'])) {
    const u = result['usage'];
    return { inputTokens: count(u, 'inputTokens'), outputTokens: count(u, 'outputTokens'), cacheReadTokens: count(u, 'cachedReadTokens'), cacheWriteTokens: count(u, 'cachedWriteTokens') };
  }
  const meta = isRecord(result['_meta']) ? result['_meta'] : undefined;
  const quota = meta && isRecord(meta['quota']) ? meta['quota'] : undefined;
  const tokens = quota && isRecord(quota['token_count']) ? quota['token_count'] : undefined;
  if (tokens) return { inputTokens: count(tokens, 'input_tokens'), outputTokens: count(tokens, 'output_tokens'), cacheReadTokens: 0, cacheWriteTokens: 0 };
  return { ...ZERO_USAGE };
}
