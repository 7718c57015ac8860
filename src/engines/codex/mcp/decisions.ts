/**
 * PermissionDecision → the `elicitation/create` answer of `codex mcp-server`. It is NOT the MCP
 * spec's `{action, content}` but `{decision: ReviewDecision}` (a spec-shaped answer, or a bare
 * `"denied"`, fails to deserialize and is treated as "approval request failed"):
 *
 * - allow → `"approved"`;
 * - allow with `updatedPermissions` → `"approved_for_session"`; when the first entry is an object
 *   decision Codex offered (`{approved_execpolicy_amendment: {...}}`), it is sent as is;
 * - deny → `{denied: {rejection: <message>}}` (the model is told why; the turn continues);
 * - deny with `interrupt: true` → `"abort"` (the turn is aborted; the tool call never returns).
 */
import type { PermissionDecision } from '../../../events/engine-input.js';

export type McpReviewDecision = 'approved' | 'approved_for_session' | 'abort' | { denied: { rejection: string } } | { approved_execpolicy_amendment: unknown };

export const DEFAULT_REJECTION = 'Denied by the user';

function isAmendment(value: unknown): value is { approved_execpolicy_amendment: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && 'approved_execpolicy_amendment' in value;
}

export function mcpDecision(decision: PermissionDecision): McpReviewDecision {
  if (decision.behavior === 'deny') return decision.interrupt ? 'abort' : { denied: { rejection: decision.message ?? DEFAULT_REJECTION } };
  const update = decision.updatedPermissions;
  if (update === undefined) return 'approved';
  if (isAmendment(update[0])) return update[0];
  return 'approved_for_session';
}
