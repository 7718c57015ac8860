/**
 * The Codex engines:
 * - `codex`: the pinned `codex app-server` (0.169.0), the supported JSON-RPC interface;
 * - `codex-mcp`: the pinned `codex mcp-server` (0.153.4; removed from Codex in 0.154.0).
 * Both translate into the same AgentEvent vocabulary (docs/engines/codex.md).
 */
import { diagnoseAgent } from '../core/agent-diagnosis.js';
import { findAgent, type AgentCliSpec } from '../core/agent-discovery.js';
import type { EngineFactory } from '../core/engine.js';
import { parseEngineOptions } from '../core/engine-options.js';
import { CODEX_CAPABILITIES, CodexAppServerEngine, type CodexAppServerEngineOptions } from './app-server/engine.js';
import { CODEX_CLI, CODEX_MCP_CLI } from './binary.js';
import { ModeEngine } from '../core/mode-engine.js';
import { CodexLocalEngine } from './local/engine.js';
import { CODEX_MCP_CAPABILITIES, CodexMcpEngine, type CodexMcpEngineOptions } from './mcp/engine.js';
import { checkCodexSettings, CODEX_CREDENTIAL_VARS, CodexExecOptionsSchema, CodexMcpOptionsSchema, CodexOptionsSchema, mergeCodexOptions, type CodexEngineOptions } from './options.js';
import { CODEX_EXEC_CAPABILITIES, CodexExecEngine, type CodexExecEngineOptions } from './exec/engine.js';
import { checkCodexResume } from './resume-check.js';

export { CODEX_CAPABILITIES, CodexAppServerEngine, type CodexAppServerEngineOptions } from './app-server/engine.js';
export { CodexLocalEngine } from './local/engine.js';
export { AppServerTranslator, toolNameOf } from './app-server/translate.js';
export { commandDecision, fileChangeDecision } from './app-server/decisions.js';
export { CODEX_MCP_CAPABILITIES, CODEX_MCP_DEFAULT_SHUTDOWN, CodexMcpEngine, type CodexMcpEngineOptions } from './mcp/engine.js';
export { McpTranslator } from './mcp/translate.js';
export { CODEX_EXEC_CAPABILITIES, CodexExecEngine, type CodexExecEngineOptions } from './exec/engine.js';
export { CodexExecTranslator, classifyExecError } from './exec/translate.js';
export { mcpDecision, type McpReviewDecision } from './mcp/decisions.js';
export { CODEX_APP_SERVER_PROTOCOL_VERSION } from './app-server/protocol/index.js';
export {
  CODEX_APP_SERVER_VERSION,
  CODEX_MCP_VERSION,
  CODEX_CLI,
  CODEX_MCP_CLI,
  CODEX_PLATFORM_PACKAGES,
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
export {
  CODEX_APPROVAL_POLICIES,
  CODEX_CREDENTIAL_VARS,
  CODEX_ENV_ALLOW,
  CODEX_SANDBOX_MODES,
  CodexMcpOptionsSchema,
  CodexOptionsSchema,
  type CodexApprovalPolicy,
  type CodexEngineOptions,
  type CodexSandboxMode,
} from './options.js';
export { launchNdjsonProcess, type NdjsonLauncher, type NdjsonProcess, type NdjsonProcessSpec } from '../transport/ndjson-process.js';

/** The `codex` engine factory: `codex app-server` over JSON-RPC. Options are checked now (INVALID_OPTIONS). */
export function codexEngine(options: CodexAppServerEngineOptions = {}): EngineFactory {
  parseEngineOptions('codex', CodexOptionsSchema, options);
  return {
    name: 'codex',
    capabilities: CODEX_CAPABILITIES,
    // Remote: app-server. Local: Codex's own terminal UI in a PTY (local/engine.ts).
    create: (context) =>
      new ModeEngine(CODEX_CAPABILITIES, {
        remote: () => new CodexAppServerEngine(context, options),
        local: () => new CodexLocalEngine(context, options, CODEX_CAPABILITIES),
      }),
    validateOptions: (engineOptions) => void parseEngineOptions('codex', CodexOptionsSchema, engineOptions),
    locateAgent: (launch) => locateCodex('codex', CODEX_CLI, options, launch),
    validateSettings: (settings) => checkCodexSettings('codex', settings),
    checkResume: (target) => checkCodexResume('codex', options, target),
    diagnose: async ({ env } = {}) => [await diagnoseAgent({ engine: 'codex', select: '--agent codex', spec: CODEX_CLI, credentials: CODEX_CREDENTIAL_VARS, ...(env && { env }) })],
  };
}

/** The `codex-mcp` engine factory: `codex mcp-server` of the pinned 0.153.4. Options are checked now (INVALID_OPTIONS). */
export function codexMcpEngine(options: CodexMcpEngineOptions = {}): EngineFactory {
  parseEngineOptions('codex-mcp', CodexMcpOptionsSchema, options);
  return {
    name: 'codex-mcp',
    capabilities: CODEX_MCP_CAPABILITIES,
    create: (context) => new CodexMcpEngine(context, options),
    validateOptions: (engineOptions) => void parseEngineOptions('codex-mcp', CodexMcpOptionsSchema, engineOptions),
    locateAgent: (launch) => locateCodex('codex-mcp', CODEX_MCP_CLI, options, launch),
    diagnose: async ({ env } = {}) => [
      await diagnoseAgent({ engine: 'codex-mcp', select: '--agent codex-mcp', spec: CODEX_MCP_CLI, credentials: CODEX_CREDENTIAL_VARS, ...(env && { env }) }),
    ],
  };
}

/**
 * The `codex-exec` engine factory (driven tier): one `codex exec --json` process per turn, resumed
 * with `codex exec resume <thread id>`. No approvals are asked (exec applies its policy itself).
 */
export function codexExecEngine(options: CodexExecEngineOptions = {}): EngineFactory {
  parseEngineOptions('codex-exec', CodexExecOptionsSchema, options);
  return {
    name: 'codex-exec',
    capabilities: CODEX_EXEC_CAPABILITIES,
    create: (context) => new CodexExecEngine(context, options),
    validateOptions: (engineOptions) => void parseEngineOptions('codex-exec', CodexExecOptionsSchema, engineOptions),
    locateAgent: (launch) => locateCodex('codex-exec', CODEX_CLI, options, launch),
    checkResume: (target) => checkCodexResume('codex-exec', options, target),
    diagnose: async ({ env } = {}) => [await diagnoseAgent({ engine: 'codex-exec', select: '--agent codex-exec', spec: CODEX_CLI, credentials: CODEX_CREDENTIAL_VARS, ...(env && { env }) })],
  };
}

/** The CLI an engine would start for these options (AGENT_NOT_FOUND when none); a replaced launcher starts none. */
async function locateCodex(engine: string, cli: AgentCliSpec, factory: CodexEngineOptions, launch: { bin?: string; engineOptions: Record<string, unknown> }): Promise<void> {
  const options = mergeCodexOptions(engine, factory, launch.engineOptions);
  if (options.launcher) return;
  const bin = launch.bin ?? options.bin;
  await findAgent(cli, bin !== undefined ? { bin } : {});
}
