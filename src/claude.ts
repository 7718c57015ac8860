/**
 * `agent-session-engine/claude`: the Claude Code engine's extras, for code that drives a
 * `ClaudeEngine` directly or locates its transcripts.
 *
 * Any export added here becomes public API: list every name explicitly (named exports only, never
 * a star re-export), and document it in docs/api.md (test/unit/docs.test.ts checks). The protocol
 * internals (translator, control client, message schemas) are not exported.
 */
export {
  claudeEngine,
  ClaudeEngine,
  claudePrintEngine,
  ClaudePrintEngine,
  CLAUDE_PRINT_CAPABILITIES,
  CLAUDE_CAPABILITIES,
  resolveClaudeBinary,
  CLAUDE_CLI,
  CLAUDE_CODE_VERSION,
  CLAUDE_CREDENTIAL_VARS,
  CLAUDE_DEFAULT_PASS_ENV,
  CLAUDE_PERMISSION_MODES,
  ClaudeOptionsSchema,
  claudeOptionArgs,
  type ClaudeMcpServer,
  projectSlug,
  transcriptPathFor,
  type ClaudeEngineOptions,
  type ClaudePermissionMode,
  type SetModelResult,
  type SetPermissionModeResult,
} from './engines/claude/index.js';
