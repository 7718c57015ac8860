/**
 * The Codex engines:
 * - `codex`: the pinned `codex app-server` (0.169.0), the supported JSON-RPC interface;
 * - `codex-mcp`: the pinned `codex mcp-server` (0.153.4; removed from Codex in 0.154.0).
 * Both translate into the same AgentEvent vocabulary (docs/engines/codex.md).
 */
import type { EngineFactory } from '../core/engine.js';
import { CODEX_CAPABILITIES, CodexAppServerEngine, type CodexAppServerEngineOptions } from './app-server/engine.js';
import { CODEX_MCP_CAPABILITIES, CodexMcpEngine, type CodexMcpEngineOptions } from './mcp/engine.js';

export { CODEX_CAPABILITIES, CodexAppServerEngine, type CodexAppServerEngineOptions } from './app-server/engine.js';
export { AppServerTranslator, toolNameOf } from './app-server/translate.js';
export { commandDecision, fileChangeDecision } from './app-server/decisions.js';
export { CODEX_MCP_CAPABILITIES, CODEX_MCP_DEFAULT_SHUTDOWN, CodexMcpEngine, type CodexMcpEngineOptions } from './mcp/engine.js';
export { McpTranslator } from './mcp/translate.js';
export { mcpDecision, type McpReviewDecision } from './mcp/decisions.js';
export { CODEX_APP_SERVER_PROTOCOL_VERSION } from './app-server/protocol/index.js';
export {
  CODEX_APP_SERVER_VERSION,
  CODEX_MCP_VERSION,
  mcpVersionProblem,
  parseCodexVersion,
  probeCodexVersion,
  resolveCodexAppServerBinary,
  resolveCodexMcpBinary,
  type ResolvedCodexBinary,
} from './binary.js';
export { configOverrideArgs, tomlValue } from './config-overrides.js';
export { classifyCodexError, sessionNotFound, type SessionNotFoundDetails } from './errors.js';
export { JsonRpcPeer, rpcError } from '../transport/json-rpc.js';
export { CODEX_ENV_ALLOW, type CodexApprovalPolicy, type CodexEngineOptions, type CodexSandboxMode } from './options.js';
export { launchNdjsonProcess, type NdjsonLauncher, type NdjsonProcess, type NdjsonProcessSpec } from '../transport/ndjson-process.js';

/** The `codex` engine factory: `codex app-server` over JSON-RPC. */
export function codexEngine(options: CodexAppServerEngineOptions = {}): EngineFactory {
  return {
    name: 'codex',
    capabilities: CODEX_CAPABILITIES,
    create: (context) => new CodexAppServerEngine(context, options),
  };
}

/** The `codex-mcp` engine factory: `codex mcp-server` of the pinned 0.153.4. */
export function codexMcpEngine(options: CodexMcpEngineOptions = {}): EngineFactory {
  return {
    name: 'codex-mcp',
    capabilities: CODEX_MCP_CAPABILITIES,
    create: (context) => new CodexMcpEngine(context, options),
  };
}
