/**
 * The two rollout payload dialects (reference codex.md §6.2), chosen by
 * `session_meta.payload.history_mode`:
 * - `legacy` (codex ≤ 0.153 `mcp-server`; also any rollout without `history_mode`): messages as
 *   `event_msg user_message` (no id) and `response_item message` (assistant, with id); tool results
 *   only as `response_item *_call_output` (+ `event_msg patch_apply_end`).
 * - `paginated` (`exec`, `app-server`, TUI): `event_msg item_completed` carrying thread, turn and
 *   item ids; lines carry `ordinal`.
 */
import type { Json } from './rollout-line.js';

export type RolloutDialect = 'legacy' | 'paginated';

/** A missing or unknown `history_mode` is treated as legacy (older rollouts have none). */
export function dialectOf(sessionMeta: Json): RolloutDialect {
  return sessionMeta.history_mode === 'paginated' ? 'paginated' : 'legacy';
}
