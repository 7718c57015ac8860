/**
 * ACP failures in the library's terms: a JSON-RPC error the agent answered with → an AgentEvent
 * error kind (`classifyRpcError`).
 */
import type { ErrorKind } from '../../events/agent-event.js';

/** JSON-RPC error → AgentEvent error kind. */
export function classifyRpcError(code: number, message: string, data?: unknown): { kind: ErrorKind; retryable: boolean } {
  if (code === -32000) return { kind: 'auth', retryable: false };
  if (code === -32800) return { kind: 'cancelled', retryable: false };
  if (code === -32700 || code === -32600 || code === -32601 || code === -32602) return { kind: 'protocol', retryable: false };
  const text = `${message} ${data === undefined ? '' : JSON.stringify(data)}`.toLowerCase();
  if (/\b429\b|rate.?limit|quota|resource_exhausted/.test(text)) return { kind: 'rate_limited', retryable: true };
  // Model/stream failures are reported as -32603 by the agents observed: worth another try.
  return { kind: 'transient', retryable: true };
}
