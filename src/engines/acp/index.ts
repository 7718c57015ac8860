/** The `acp` engine factory: any Agent Client Protocol agent (gemini --acp, codex-acp, claude-code-acp, …). */
import { diagnoseAgent } from '../core/agent-diagnosis.js';
import type { EngineFactory } from '../core/engine.js';
import { ACP_CAPABILITIES, AcpEngine } from './engine.js';
import { locateAcpAgent } from './agent-launch.js';
import { parseAcpOptions, resolveAcpOptions, type AcpEngineOptions } from './options.js';
import { ACP_PRESET_NAMES, ACP_PRESETS } from './presets.js';

export { ACP_CAPABILITIES, AcpEngine } from './engine.js';
export { classifyRpcError } from './errors.js';
export { turnUsage } from './usage.js';
export { ACP_BASE_ENV_ALLOW } from './agent-launch.js';
export { AcpOptionsSchema, parseAcpOptions, resolveAcpOptions, type AcpEngineOptions, type AcpFsOptions, type AcpTerminalOptions, type AgentProcess, type AgentSpawner } from './options.js';
export { ACP_PRESETS, ACP_PRESET_NAMES, CODEX_ACP_PLATFORMS, acpPreset, isAcpPresetName, packageDir, type AcpPreset, type AcpPresetName } from './presets.js';
export { AcpTranslator, type AcpSessionInfo, type AcpTranslatorOptions, type SkippedInput } from './translate.js';
export { chooseOutcome, outcomeAllows, PermissionBroker, type AcpOptionChoice, type PendingPermission, type PermissionOutcome } from './permissions.js';
export { CLIENT_INFO } from './client.js';
export { ConfinedFs, type ConfinedFsOptions } from './client-fs.js';
export { TerminalManager, type TerminalManagerOptions } from './client-terminal.js';

/**
 * `acpEngine({ preset: 'gemini' })`, or `{ command, args }` for any other agent. Every option can
 * also come per session through `createSession({ engineOptions })` (those win). Options are checked
 * now (an unknown key throws INVALID_OPTIONS listing the known ones).
 */
export function acpEngine(options: AcpEngineOptions = {}): EngineFactory {
  parseAcpOptions(options);
  return {
    name: 'acp',
    capabilities: ACP_CAPABILITIES,
    create: (context) => new AcpEngine(context, options),
    validateOptions: (engineOptions) => void parseAcpOptions(engineOptions),
    locateAgent: ({ bin, engineOptions }) => locateAcpAgent(resolveAcpOptions(options, engineOptions), bin),
    // One entry per preset: each is a different agent CLI.
    diagnose: ({ env } = {}) =>
      Promise.all(
        ACP_PRESET_NAMES.map((name) =>
          diagnoseAgent({ engine: 'acp', select: `--agent acp --option preset=${name}`, spec: ACP_PRESETS[name].cli, credentials: ACP_PRESETS[name].credentials, ...(env && { env }) }),
        ),
      ),
  };
}
