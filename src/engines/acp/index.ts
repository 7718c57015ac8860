/** The `acp` engine factory: any Agent Client Protocol agent (gemini --acp, codex-acp, claude-code-acp, …). */
import type { EngineFactory } from '../core/engine.js';
import { ACP_CAPABILITIES, AcpEngine } from './engine.js';
import type { AcpEngineOptions } from './options.js';

export { ACP_CAPABILITIES, AcpEngine } from './engine.js';
export { classifyRpcError } from './errors.js';
export { turnUsage } from './usage.js';
export { resolveAcpOptions, type AcpEngineOptions, type AcpFsOptions, type AcpTerminalOptions, type AgentProcess, type AgentSpawner } from './options.js';
export { ACP_PRESETS, ACP_PRESET_NAMES, isAcpPresetName, packageDir, type AcpPreset, type AcpPresetName } from './presets.js';
export { AcpTranslator, type AcpSessionInfo, type AcpTranslatorOptions, type SkippedInput } from './translate.js';
export { chooseOutcome, outcomeAllows, PermissionBroker, type AcpOptionChoice, type PendingPermission, type PermissionOutcome } from './permissions.js';
export { tapStream, type WireObserver } from './traffic.js';
export { CLIENT_INFO } from './client.js';
export { ConfinedFs, type ConfinedFsOptions } from './client-fs.js';
export { TerminalManager, type TerminalManagerOptions } from './client-terminal.js';

/**
 * `acpEngine({ preset: 'gemini' })`, or `{ command, args }` for any other agent. Every option can
 * also come per session through `createSession({ engineOptions })` (those win).
 */
export function acpEngine(options: AcpEngineOptions = {}): EngineFactory {
  return {
    name: 'acp',
    capabilities: ACP_CAPABILITIES,
    create: (context) => new AcpEngine(context, options),
  };
}
