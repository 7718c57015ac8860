/**
 * Which of an ACP agent's tool calls is a call of the session's host tools (served by our loopback
 * MCP server as `host`), and of which tool. Each agent names them its own way (reference
 * host-tools.md §3), and not in every message:
 * - gemini: title `add (host MCP Server)`, toolCallId `mcp_host_add__mcp_host_add_<ts>_0`;
 * - codex-acp: title `Tool: host/add`, `rawInput: {server: "host", tool: "add", arguments}`;
 * - claude-code-acp: title (and `_meta.claudeCode.toolName`) `mcp__host__add`.
 * The translator asks on every update of a call until one names it.
 */
import { hostToolName, HOST_TOOL_SERVER } from '../core/host-tools.js';
import { isRecord, type AcpToolCallFields } from './messages.js';

/** The host tool `fields` is a call of, or undefined. */
export function acpHostToolName(fields: AcpToolCallFields, toolbox: { has(name: string): boolean } | undefined, server = HOST_TOOL_SERVER): string | undefined {
  if (!toolbox) return undefined;
  const candidates: string[] = [];
  if (fields.name !== undefined) candidates.push(fields.name);
  if (fields.title !== undefined) {
    candidates.push(fields.title);
    const gemini = /^(.+) \((.+) MCP Server\)$/.exec(fields.title);
    if (gemini) candidates.push(`${gemini[2]}/${gemini[1]}`);
    const codex = /^Tool: (.+)$/.exec(fields.title);
    if (codex) candidates.push(codex[1]!);
  }
  const raw = fields.rawInput;
  if (isRecord(raw) && typeof raw['server'] === 'string' && typeof raw['tool'] === 'string') candidates.push(`${raw['server']}/${raw['tool']}`);
  const geminiId = /^(mcp_.+?)__mcp_/.exec(fields.toolCallId);
  if (geminiId) candidates.push(geminiId[1]!);
  for (const candidate of candidates) {
    const name = hostToolName(candidate, toolbox, server);
    if (name !== undefined) return name;
  }
  return undefined;
}
