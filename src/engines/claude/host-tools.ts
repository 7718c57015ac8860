/**
 * Host tools on Claude Code (reference host-tools.md §1): an in-process "sdk" MCP server named
 * `host`, declared with `--mcp-config {"mcpServers":{"host":{"type":"sdk","name":"host"}}}` and
 * served over the control protocol (`control_request{subtype:"mcp_message"}` answered with
 * `mcp_response`); no port, no extra process. Tools are listed with `_meta["anthropic/alwaysLoad"]`
 * (host-tools-mcp.ts) so the model has them without a ToolSearch round trip. Host tools are trusted:
 * each one is added to `--allowedTools` as `mcp__host__<name>`, except those with
 * `requiresPermission`, whose calls reach `can_use_tool` like any other tool (the session's ledger).
 */
import { AseError } from '../../errors.js';
import { answerMcpMessage } from '../core/host-tools-mcp.js';
import { displayToolName, HOST_TOOL_SERVER, type HostToolbox, type HostToolCalls } from '../core/host-tools.js';
import type { ClaudeEngineOptions, ClaudeMcpServer } from './options.js';

/** The name the model sees for host tool `name`. */
export const claudeHostToolName = (name: string): string => `mcp__${HOST_TOOL_SERVER}__${name}`;

/**
 * The options with the host's in-process server added to `mcpServers` and the trusted host tools to
 * `allowedTools`. Unchanged without host tools. A user MCP server named `host` would be shadowed:
 * INVALID_OPTIONS.
 */
export function withHostTools(options: ClaudeEngineOptions, toolbox: HostToolbox | undefined): ClaudeEngineOptions {
  if (!toolbox || toolbox.size === 0) return options;
  // The CLI serves type "sdk" through us; the options' schema (user servers) does not offer it.
  const sdkServer = { type: 'sdk', name: HOST_TOOL_SERVER } as unknown as ClaudeMcpServer;
  const trusted = withTrustedHostTools(options, toolbox);
  return { ...trusted, mcpServers: { ...options.mcpServers, [HOST_TOOL_SERVER]: sdkServer } };
}

/**
 * The options with the trusted host tools (all but those with `requiresPermission`) added to
 * `allowedTools`, for an engine that declares the host's server itself (local mode: a loopback
 * server in an `--mcp-config` file). A user MCP server named `host` would be shadowed: INVALID_OPTIONS.
 */
export function withTrustedHostTools(options: ClaudeEngineOptions, toolbox: HostToolbox): ClaudeEngineOptions {
  if (options.mcpServers && HOST_TOOL_SERVER in options.mcpServers) {
    throw new AseError('INVALID_OPTIONS', `claude engine options: mcpServers.${HOST_TOOL_SERVER}: that name is the host tools' own MCP server (createSession tools); name the server otherwise`, {
      details: { server: HOST_TOOL_SERVER },
    });
  }
  const trusted = toolbox.specs.filter((s) => !s.requiresPermission).map((s) => claudeHostToolName(s.name));
  return { ...options, ...(trusted.length > 0 && { allowedTools: [...(options.allowedTools ?? []), ...trusted] }) };
}

/** The name a Claude tool is reported under: a host tool's own name, any other tool's as the CLI gives it. */
export function claudeToolName(toolbox: HostToolbox | undefined): ((name: string) => string) | undefined {
  return toolbox && toolbox.size > 0 ? (name) => displayToolName(name, toolbox) : undefined;
}

/**
 * Answers one `mcp_message` for the host's server (the `mcp_response` payload). Notifications get
 * an empty result: the CLI waits for an answer to every control request. Another server name is
 * refused (it is not ours to serve).
 */
export async function answerClaudeMcp(calls: HostToolCalls, serverName: string, message: unknown, signal: AbortSignal): Promise<unknown> {
  if (serverName !== HOST_TOOL_SERVER) throw new Error(`no in-process MCP server "${serverName}" in this host`);
  const id = (message as { id?: unknown } | null)?.id;
  const answer = await answerMcpMessage(calls, message, { serverName, signal });
  return answer ?? { jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : 0, result: {} };
}
