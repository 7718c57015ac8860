/**
 * ACP failures in the library's terms: a JSON-RPC error the agent answered with → an AgentEvent
 * error kind (`classifyRpcError`), and a rejection of one of our requests → an AseError
 * (`toAcpError`). The SDK rejects with its own `RequestError` (the agent's answer) or with
 * whatever closed the connection; neither may reach a caller as it is.
 */
import { loadedAcpSdk } from './sdk.js';
import { AgentError, toAseError, type AseError } from '../../errors.js';
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

/**
 * What the SDK rejected `request` with, as an AseError. The agent's JSON-RPC error becomes an
 * {@link AgentError} whose message keeps the code and the data (agents put the reason there), so
 * it reads as one line in an error event. Anything else the SDK rejects with is why the
 * connection closed (the agent exited, the stream broke): `CONNECTION_CLOSED`. AseErrors (our
 * own close reason, a timeout) stay as they are.
 */
export function toAcpError(error: unknown, request: string): AseError {
  const RequestError = loadedAcpSdk()?.RequestError; // none can exist before the SDK is loaded
  if (RequestError && error instanceof RequestError) {
    const data = error.data === undefined ? '' : ` ${JSON.stringify(error.data)}`;
    return new AgentError({ request, upstreamCode: error.code, upstreamMessage: error.message, data: error.data, message: `${error.message} (JSON-RPC ${error.code}${data})` });
  }
  return toAseError(error, 'CONNECTION_CLOSED');
}
