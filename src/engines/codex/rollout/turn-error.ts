/**
 * The error of a failed turn: `task_complete.error {message, codex_error_info}` (both dialects)
 * or a standalone `event_msg error {message, codex_error_info}`, as an AgentEvent error body.
 * `codex_error_info` is a string (`"other"`, `"unauthorized"`, …) or a one-key object such as
 * `{"http_connection_failed": {"http_status_code": 401}}`; its HTTP status, when it has one, decides,
 * else its name.
 */
import type { AgentEventOf } from '../../../events/agent-event.js';
import { classifyCodexError } from '../errors.js';
import type { Json } from './rollout-line.js';

type ErrorBody = Omit<AgentEventOf<'error'>, 'gen' | 'at'>;

export function turnErrorOf(error: Json): ErrorBody {
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : 'Codex turn failed';
  const info = error.codex_error_info;
  // Classified exactly as the live engines do (an HTTP status first, then the name), so the same
  // failure has the same kind whether it is seen live or read from the rollout.
  const kind = classifyCodexError(info);
  return { type: 'error', ...kind, message };
}
