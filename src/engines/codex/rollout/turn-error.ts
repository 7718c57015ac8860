/**
 * The error of a failed turn: `task_complete.error {message, codex_error_info}` (both dialects)
 * or a standalone `event_msg error {message, codex_error_info}`, as an AgentEvent error body.
 * `codex_error_info` is a string (`"other"`, `"unauthorized"`, …) or a one-key object such as
 * `{"http_connection_failed": {"http_status_code": 401}}`; its HTTP status, when it has one, decides,
 * else its name.
 */
import type { AgentEventOf, ErrorKind } from '../../../events/agent-event.js';
import { classifyCodexError, codexErrorHttpStatus } from '../errors.js';
import { isObject, type Json } from './rollout-line.js';

type ErrorBody = Omit<AgentEventOf<'error'>, 'gen' | 'at'>;

function infoName(info: unknown): string {
  if (typeof info === 'string') return info;
  if (isObject(info)) return Object.keys(info)[0] ?? '';
  return '';
}

function classify(name: string): { kind: ErrorKind; retryable: boolean } {
  if (name === 'unauthorized') return { kind: 'auth', retryable: false };
  if (name === 'usage_limit_exceeded') return { kind: 'rate_limited', retryable: true };
  if (name === 'context_window_exceeded') return { kind: 'budget_exceeded', retryable: false };
  if (/server_overloaded|internal_server_error|connection_failed|stream_disconnected|too_many_failed_attempts/.test(name)) {
    return { kind: 'transient', retryable: true };
  }
  return { kind: 'fatal', retryable: false };
}

export function turnErrorOf(error: Json): ErrorBody {
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : 'Codex turn failed';
  const info = error.codex_error_info;
  // An HTTP status (a 401 comes as `{http_connection_failed: {http_status_code: 401}}`) decides
  // first, exactly as the live engines classify it: by name alone a 401 or 429 looked transient.
  const kind = codexErrorHttpStatus(info) !== undefined ? classifyCodexError(info) : classify(infoName(info));
  return { type: 'error', ...kind, message };
}
