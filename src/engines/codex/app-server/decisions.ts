/**
 * PermissionDecision → app-server approval decision.
 *
 * - allow → `accept`;
 * - allow with `updatedPermissions` → `acceptForSession` (Codex stops asking for this command /
 *   these files for the rest of the session). When the first entry is one of the object decisions
 *   Codex offered in `availableDecisions` (passed on as the prompt's `suggestions`, e.g.
 *   `{acceptWithExecpolicyAmendment: {execpolicy_amendment: [...]}}`), it is sent as is;
 * - deny → `decline` (the turn continues; the model is told the command was declined; app-server
 *   has no field for the deny message);
 * - deny with `interrupt: true` → `cancel` (the turn is interrupted).
 */
import type { PermissionDecision } from '../../../events/engine-input.js';
import type { CommandExecutionApprovalDecision, FileChangeApprovalDecision } from './protocol/index.js';

const OBJECT_DECISIONS = ['acceptWithExecpolicyAmendment', 'applyNetworkPolicyAmendment'] as const;

function isObjectDecision(value: unknown): value is Extract<CommandExecutionApprovalDecision, object> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (OBJECT_DECISIONS as readonly string[]).includes(keys[0]!);
}

export function commandDecision(decision: PermissionDecision): CommandExecutionApprovalDecision {
  if (decision.behavior === 'deny') return decision.interrupt ? 'cancel' : 'decline';
  const update = decision.updatedPermissions;
  if (update === undefined) return 'accept';
  if (isObjectDecision(update[0])) return update[0];
  return 'acceptForSession';
}

export function fileChangeDecision(decision: PermissionDecision): FileChangeApprovalDecision {
  if (decision.behavior === 'deny') return decision.interrupt ? 'cancel' : 'decline';
  return decision.updatedPermissions === undefined ? 'accept' : 'acceptForSession';
}
