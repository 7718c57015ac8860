/**
 * The ACP client connection: every client method registered on an SDK `client()` app, plus `*`
 * fallbacks, connected to the agent's stdio. The handlers only answer requests; interpreting the
 * agent's messages (updates, permission prompts, prompt results) happens in wire order in the
 * engine's reader (see agent-stream.ts for why).
 *
 * `session/request_permission` is registered with a pass-through parser: the SDK's strict schema
 * would answer a slightly off request with an error before the engine could look at it.
 * `session/update` is read by the engine as its reader splits the agent's output, and never handed
 * to the SDK (agent-stream.ts): the SDK's built-in session router would zod-parse every update and
 * drop one it does not know with a console.error ("Error handling notification"). It still gets a
 * no-op handler here, so that one handed on anyway (when the engine's observer failed on it) is
 * not recorded as unhandled by the `*` fallback.
 */
import type { ClientConnection, Stream } from '@agentclientprotocol/sdk';
import { acpSdk } from './sdk.js';
import { errorMessage } from '../../errors.js';
import { INTERNAL_ERROR, INVALID_PARAMS, rpcErrorDetails } from '../transport/json-rpc.js';
import type { ConfinedFs } from './client-fs.js';
import type { TerminalManager } from './client-terminal.js';
import { rpcKey } from './messages.js';
import type { PermissionOutcome } from './permissions.js';

export const CLIENT_INFO = { name: 'agent-session-engine', title: 'agent-session-engine', version: '0.1.0' } as const;

export interface AcpClientHandlers {
  /** The answer to the agent's permission request with this JSON-RPC id, if the engine opened it. */
  permissionAnswer(rpcKey: string): Promise<PermissionOutcome> | undefined;
  /** Present when the caller enabled fs. */
  fs(): ConfinedFs | undefined;
  /** Present when the caller enabled terminals. */
  terminals(): TerminalManager | undefined;
  /** Throws a JSON-RPC error unless `sessionId` is this connection's session. */
  checkSession(sessionId: unknown): void;
  /** A request or notification no handler knows (logged and skipped by the engine). */
  unhandled(kind: 'request' | 'notification', method: string, params: unknown): void;
}

const passThrough = (params: unknown): unknown => params;

/**
 * Our fs and terminal services refuse with AseErrors carrying a JSON-RPC code (rpcError); the SDK
 * answers the agent only from its own RequestError, so the answer is converted at this boundary,
 * worded as the SDK's own constructors word it.
 */
export function toRequestError(error: unknown): unknown {
  const rpc = rpcErrorDetails(error);
  if (!rpc) return error;
  const message = errorMessage(error);
  const { RequestError } = acpSdk();
  if (rpc.rpcCode === INVALID_PARAMS) return RequestError.invalidParams(rpc.data, message);
  if (rpc.rpcCode === INTERNAL_ERROR) return RequestError.internalError(rpc.data, message);
  return new RequestError(rpc.rpcCode, message, rpc.data);
}

async function answer<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toRequestError(error);
  }
}

function require<T>(value: T | undefined, method: string): T {
  // Not advertised, so a well-behaved agent never calls it; one that does gets "method not found".
  if (value === undefined) throw acpSdk().RequestError.methodNotFound(method);
  return value;
}

export function connectAcpClient(stream: Stream, h: AcpClientHandlers): ClientConnection {
  const { client, RequestError } = acpSdk();
  return client({ name: CLIENT_INFO.name })
    .onRequest('session/request_permission', passThrough, async ({ requestId, params }) => {
      const answer = h.permissionAnswer(rpcKey(requestId));
      if (!answer) throw RequestError.invalidParams(params, 'malformed session/request_permission, or for an unknown session');
      return { outcome: await answer };
    })
    .onRequest('fs/read_text_file', async ({ params, method }) => {
      const fs = require(h.fs(), method);
      h.checkSession(params.sessionId);
      return answer(() => fs.readTextFile(params));
    })
    .onRequest('fs/write_text_file', async ({ params, method }) => {
      const fs = require(h.fs(), method);
      h.checkSession(params.sessionId);
      return answer(() => fs.writeTextFile(params));
    })
    .onRequest('terminal/create', async ({ params, method }) => {
      const terminals = require(h.terminals(), method);
      h.checkSession(params.sessionId);
      return answer(() => terminals.create(params));
    })
    .onRequest('terminal/output', async ({ params, method }) => {
      const terminals = require(h.terminals(), method);
      h.checkSession(params.sessionId);
      return answer(() => terminals.output(params));
    })
    .onRequest('terminal/wait_for_exit', async ({ params, method }) => {
      const terminals = require(h.terminals(), method);
      h.checkSession(params.sessionId);
      return answer(() => terminals.waitForExit(params));
    })
    .onRequest('terminal/kill', async ({ params, method }) => {
      const terminals = require(h.terminals(), method);
      h.checkSession(params.sessionId);
      return answer(() => terminals.kill(params));
    })
    .onRequest('terminal/release', async ({ params, method }) => {
      const terminals = require(h.terminals(), method);
      h.checkSession(params.sessionId);
      return answer(() => terminals.release(params));
    })
    .onNotification('session/update', passThrough, () => {})
    // We advertise no elicitation capability; an agent asking anyway is declined, not left hanging.
    .onRequest('elicitation/create', () => ({ action: 'decline' as const }))
    .onNotification('elicitation/complete', () => {})
    .onRequest('*', ({ method, params }) => {
      h.unhandled('request', method, params);
      throw RequestError.methodNotFound(method);
    })
    // Extension notifications (`_auth/status_update`, …) are informational.
    .onNotification('*', ({ method, params }) => h.unhandled('notification', method, params))
    .connect(stream);
}
