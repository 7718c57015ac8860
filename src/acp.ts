/**
 * `agent-session-engine/acp`: the Agent Client Protocol engine's extras (the engine class, its
 * presets, and the confined fs/* and terminal/* handlers, usable on their own).
 *
 * Any export added here becomes public API: list every name explicitly (named exports only, never
 * a star re-export), and document it in docs/api.md (test/unit/docs.test.ts checks). The protocol
 * internals (translator, permission broker, traffic tap, option resolution) are not exported.
 */
export {
  acpEngine,
  AcpEngine,
  ACP_CAPABILITIES,
  ACP_PRESETS,
  ACP_PRESET_NAMES,
  isAcpPresetName,
  AcpOptionsSchema,
  ACP_BASE_ENV_ALLOW,
  ConfinedFs,
  TerminalManager,
  type AcpEngineOptions,
  type AcpFsOptions,
  type AcpTerminalOptions,
  type AcpPreset,
  type AcpPresetName,
  type AcpSessionInfo,
  type ConfinedFsOptions,
  type TerminalManagerOptions,
} from './engines/acp/index.js';
