/**
 * The host tools as an MCP server speaks them: one JSON-RPC message in, its answer out. It is the
 * whole server side of the protocol host tools need (`initialize`, `notifications/*`, `ping`,
 * `tools/list`, `tools/call`), with no transport: Claude's in-process server carries these messages
 * inside `control_request{subtype:"mcp_message"}` (reference host-tools.md §1), and a loopback HTTP
 * server can carry them too. Every tool is listed with `_meta["anthropic/alwaysLoad"]`, so Claude
 * puts it in the model's tool list instead of deferring it behind ToolSearch.
 */
import type { HostToolCalls } from './host-tools.js';

/** The protocol version answered when the client names none (the pinned Claude Code offers 2025-11-25). */
export const HOST_MCP_PROTOCOL_VERSION = '2025-06-18';

/** A JSON-RPC 2.0 answer. */
export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: string | number | null; result: unknown }
  | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };

export interface HostMcpOptions {
  /** The server's name in `initialize` (default `host`). */
  serverName?: string;
  /** Aborts this one call (the client cancelled the request). */
  signal?: AbortSignal;
  /** The agent's id of a `tools/call` when the message does not carry one (`_meta` links it otherwise). */
  fallbackCallId?: string;
}

/** The tool-use id a `tools/call` carries in its `_meta` (Claude: `claudecode/toolUseId`; Codex: `callId`). */
export function mcpCallId(params: unknown): string | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const id = meta?.['claudecode/toolUseId'] ?? meta?.['callId'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * Answers one MCP message. A notification (no `id`) is answered with `undefined` (transports that
 * must answer everything send an empty result). Never rejects: a failing tool is a `tools/call`
 * result with `isError: true`, an unknown method a JSON-RPC error `-32601`.
 */
export async function answerMcpMessage(calls: HostToolCalls, message: unknown, options: HostMcpOptions = {}): Promise<JsonRpcResponse | undefined> {
  const msg = (typeof message === 'object' && message !== null ? message : {}) as { id?: unknown; method?: unknown; params?: unknown };
  const id = typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null;
  const isRequest = typeof msg.id === 'string' || typeof msg.id === 'number';
  const method = typeof msg.method === 'string' ? msg.method : undefined;
  if (method === undefined) return isRequest ? { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request: no method' } } : undefined;
  if (!isRequest) return undefined; // notifications/initialized, notifications/cancelled, …
  const params = (typeof msg.params === 'object' && msg.params !== null ? msg.params : {}) as Record<string, unknown>;
  switch (method) {
    case 'initialize': {
      const asked = params['protocolVersion'];
      return {
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: typeof asked === 'string' ? asked : HOST_MCP_PROTOCOL_VERSION,
          capabilities: { tools: {} },
          serverInfo: { name: options.serverName ?? 'host', version: '1.0.0' },
        },
      };
    }
    case 'ping':
      return { jsonrpc: '2.0', id, result: {} };
    case 'tools/list':
      return {
        jsonrpc: '2.0',
        id,
        result: { tools: calls.specs.map((s) => ({ name: s.name, description: s.description, inputSchema: s.inputSchema, _meta: { 'anthropic/alwaysLoad': true } })) },
      };
    case 'tools/call': {
      const name = params['name'];
      if (typeof name !== 'string') return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: tools/call needs a tool name' } };
      const callId = mcpCallId(params) ?? options.fallbackCallId ?? String(id);
      const result = await calls.call(name, params['arguments'], { callId, ...(options.signal && { signal: options.signal }) });
      return { jsonrpc: '2.0', id, result: { content: result.content, ...(result.isError && { isError: true }) } };
    }
    default:
      return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
  }
}
