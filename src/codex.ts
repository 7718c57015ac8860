/**
 * `agent-session-engine/codex`: the Codex engines' extras (the engine classes, their capabilities,
 * the pinned versions and binary resolvers) and the Codex rollout tailer.
 *
 * Any export added here becomes public API: list every name explicitly (named exports only, never
 * a star re-export), and document it in docs/api.md (test/unit/docs.test.ts checks). The protocol
 * internals (translators, decision mappers, the JSON-RPC peer, generated protocol types) are not
 * exported.
 */
export {
  codexEngine,
  codexMcpEngine,
  codexExecEngine,
  CodexExecEngine,
  CODEX_EXEC_CAPABILITIES,
  type CodexExecEngineOptions,
  CodexAppServerEngine,
  CodexMcpEngine,
  CODEX_CAPABILITIES,
  CODEX_MCP_CAPABILITIES,
  CODEX_APP_SERVER_VERSION,
  CODEX_MCP_VERSION,
  CODEX_ENV_ALLOW,
  CODEX_CLI,
  CODEX_MCP_CLI,
  CODEX_CREDENTIAL_VARS,
  CodexOptionsSchema,
  CodexMcpOptionsSchema,
  resolveCodexAppServerBinary,
  resolveCodexMcpBinary,
  type ResolvedCodexBinary,
  type SessionNotFoundDetails,
  type CodexEngineOptions,
  type CodexAppServerEngineOptions,
  type CodexMcpEngineOptions,
  type CodexApprovalPolicy,
  type CodexSandboxMode,
} from './engines/codex/index.js';
export {
  tailRollout,
  readRollout,
  RolloutTailer,
  EventDeduper,
  type RolloutTailerOptions,
  type TailerTimers,
  type RolloutSnapshot,
  type RolloutCursor,
  type TailedEvent,
  type RolloutDiagnostic,
  type RolloutDiagnosticKind,
  type DedupeKey,
  type DedupeKind,
  type DeduperOptions,
  type DeduperTimers,
} from './engines/codex/rollout/index.js';
