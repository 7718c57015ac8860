/**
 * The session's host tools served over the loopback MCP server (transport/host-mcp-server.ts):
 * what the engines whose agents reach tools only through MCP (ACP agents, Codex's fallback and
 * `codex-exec`) start, one per engine generation (so one per session at a time), and close when the
 * engine stops. The server is the transport and gate; the MCP meaning of each message is the same
 * dispatcher Claude's in-process server uses (host-tools-mcp.ts).
 *
 * `toolsListed` says when the agent has the tools: a terminal UI connects its MCP servers after
 * it takes input, so a local engine holds its `ready` until the agent's first `tools/list` is
 * answered (a prompt typed before that would reach the model without them).
 */
import { HostMcpServer } from '../transport/host-mcp-server.js';
import { answerMcpMessage, mcpCallId } from './host-tools-mcp.js';
import { HOST_TOOL_SERVER, type HostToolCalls } from './host-tools.js';

export interface HostToolsLoopback {
  /** The secret URL to hand the agent (`http://127.0.0.1:<port>/mcp/<token>`). */
  readonly url: string;
  /** The same server for a client that sends {@link bearerToken} as `Authorization: Bearer` (no secret in the URL). */
  readonly bearerUrl: string;
  readonly bearerToken: string;
  readonly port: number;
  /** The MCP server name the agent is given (tools appear as `mcp__host__<tool>` and the like). */
  readonly serverName: string;
  /**
   * Settles once the agent's first `tools/list` is answered (the answer is on its way; the agent's
   * later model requests carry the tools). Never rejects; never settles for an agent that does not list.
   */
  readonly toolsListed: Promise<void>;
  /** Closes the calls (their handlers' signals abort) and the server; the port is free afterwards. Idempotent. */
  close(reason: string): Promise<void>;
}

export interface HostToolsLoopbackOptions {
  /**
   * The agent's id of a `tools/call` that carries none (gemini sends only a progress token): the
   * engine matches it to the tool call its protocol reported, so the handler's `ctx.callId` is the
   * events' `callId`. Undefined: an id of the server's own.
   */
  callIdFor?: (tool: string) => string | undefined;
}

export async function startHostToolsLoopback(calls: HostToolCalls, options: HostToolsLoopbackOptions = {}): Promise<HostToolsLoopback> {
  let listed!: () => void;
  const toolsListed = new Promise<void>((resolve) => (listed = resolve));
  const server = await HostMcpServer.start({
    handle: async (message, { signal }) => {
      const m = message as { method?: unknown; params?: { name?: unknown } } | null;
      const needsId = m?.method === 'tools/call' && typeof m.params?.name === 'string' && mcpCallId(m.params) === undefined;
      const fallbackCallId = needsId ? options.callIdFor?.(m.params!.name as string) : undefined;
      const answer = await answerMcpMessage(calls, message, { serverName: HOST_TOOL_SERVER, signal, ...(fallbackCallId !== undefined && { fallbackCallId }) });
      if (m?.method === 'tools/list') listed();
      return answer;
    },
  });
  return {
    url: server.url,
    bearerUrl: server.bearerUrl,
    bearerToken: server.bearerToken,
    port: server.port,
    serverName: HOST_TOOL_SERVER,
    toolsListed,
    close: async (reason) => {
      calls.close(reason);
      await server.close();
    },
  };
}
