/**
 * The Codex resume-not-found error and the mapping of Codex's error codes (`codexErrorInfo` in app-server,
 * `codex_error_info` in MCP events) onto the AgentEvent error kinds.
 */
import { AseError } from '../../errors.js';
import type { ErrorKind } from '../../events/agent-event.js';

export type SessionNotFoundDetails = {
  threadId: string;
  /** What mcp-server said, verbatim. */
  upstreamMessage: string;
};

/**
 * `codex-reply` named a thread the running `codex mcp-server` does not hold in memory. The MCP
 * server keeps threads only for its own lifetime, so this is what every resume after a restart
 * gets: an AseError with code `RESUME_NOT_FOUND`. Fallbacks (docs/engines/codex.md):
 * `onSessionNotFound: 'new-thread'` (continue in a fresh thread, history lost), or the `codex`
 * (app-server) engine, which resumes a thread from its rollout with `thread/resume`.
 */
export function sessionNotFound(threadId: string, upstreamMessage: string): AseError<SessionNotFoundDetails> {
  return new AseError(
    'RESUME_NOT_FOUND',
    `codex-mcp: thread ${threadId} is not loaded in this codex mcp-server process ("${upstreamMessage}"); ` +
      `mcp-server only continues threads it started itself. Fallback: engineOptions.onSessionNotFound = 'new-thread', ` +
      `or resume with the 'codex' (app-server) engine (thread/resume).`,
    { details: { threadId, upstreamMessage } },
  );
}

/** The text mcp-server 0.153.4 returns (as an `isError` tool result) for an unknown thread. */
export const SESSION_NOT_FOUND_RE = /Session not found for thread_id/i;

const normalize = (key: string): string => key.replace(/[_-]/g, '').toLowerCase();

/** The HTTP status inside a Codex error code (`{httpConnectionFailed: {httpStatusCode: 401}}`, either spelling), if any. */
export function codexErrorHttpStatus(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const inner of Object.values(value)) {
    if (typeof inner !== 'object' || inner === null) continue;
    const status = (inner as Record<string, unknown>)['httpStatusCode'] ?? (inner as Record<string, unknown>)['http_status_code'];
    if (typeof status === 'number') return status;
  }
  return undefined;
}

/** Maps a Codex error code (string or `{variant: {httpStatusCode}}`) to an error kind. */
export function classifyCodexError(info: unknown): { kind: ErrorKind; retryable: boolean } {
  const status = codexErrorHttpStatus(info);
  if (status === 401 || status === 403) return { kind: 'auth', retryable: false };
  if (status === 429) return { kind: 'rate_limited', retryable: true };
  if (status !== undefined && status >= 500) return { kind: 'transient', retryable: true };
  const key = typeof info === 'string' ? normalize(info) : typeof info === 'object' && info !== null ? normalize(Object.keys(info)[0] ?? '') : '';
  switch (key) {
    case 'unauthorized':
      return { kind: 'auth', retryable: false };
    case 'ratelimitexceeded':
      return { kind: 'rate_limited', retryable: true };
    case 'usagelimitexceeded':
    case 'sessionbudgetexceeded':
      return { kind: 'budget_exceeded', retryable: false };
    case 'serveroverloaded':
    case 'internalservererror':
    case 'httpconnectionfailed':
    case 'responsestreamconnectionfailed':
    case 'responsestreamdisconnected':
    case 'responsetoomanyfailedattempts':
      return { kind: 'transient', retryable: true };
    default:
      return { kind: 'fatal', retryable: false };
  }
}
