/** The `claude` engine factory: the real Claude Code CLI over stream-json (remote) or in its own terminal UI (local). */
import { diagnoseAgent } from '../core/agent-diagnosis.js';
import { findAgent } from '../core/agent-discovery.js';
import type { EngineFactory } from '../core/engine.js';
import { CLAUDE_CLI, CLAUDE_CREDENTIAL_VARS } from './cli.js';
import { CLAUDE_CAPABILITIES, ClaudeEngine } from './engine.js';
import { ClaudeLocalEngine } from './local/engine.js';
import { ModeEngine } from '../core/mode-engine.js';
import { checkClaudeSettings, mergeClaudeOptions, parseClaudeOptions, type ClaudeEngineOptions } from './options.js';
import { CLAUDE_PRINT_CAPABILITIES, ClaudePrintEngine } from './print/engine.js';
import { checkClaudeResume } from './resume-check.js';

export { ClaudeLocalEngine } from './local/engine.js';
export { CLAUDE_CAPABILITIES, ClaudeEngine, resolveClaudeBinary, type SetModelResult, type SetPermissionModeResult } from './engine.js';
export { CLAUDE_CLI, CLAUDE_CODE_VERSION, CLAUDE_CREDENTIAL_VARS, CLAUDE_DEFAULT_PASS_ENV, CLAUDE_PLATFORM_PACKAGES } from './cli.js';
export {
  CLAUDE_PERMISSION_MODES,
  checkClaudeSettings,
  ClaudeOptionsSchema,
  claudeOptionArgs,
  mergeClaudeOptions,
  parseClaudeOptions,
  type ClaudeEngineOptions,
  type ClaudeMcpServer,
  type ClaudePermissionMode,
} from './options.js';
export { CLAUDE_PRINT_CAPABILITIES, ClaudePrintEngine } from './print/engine.js';
export { ClaudeTranslator, classifyResultError, projectSlug, transcriptPathFor } from './translate.js';
export { ControlClient, type PermissionAsk } from './client.js';
export { classifyClaudeMessage, type ClaudeMessage } from './messages.js';

/**
 * `claudeEngine(options)`: options checked now (an unknown key throws INVALID_OPTIONS listing the
 * known ones); a session's `engineOptions` are checked by createSession and win over these.
 */
export function claudeEngine(options: ClaudeEngineOptions = {}): EngineFactory {
  const checked = parseClaudeOptions(options);
  return {
    name: 'claude',
    capabilities: CLAUDE_CAPABILITIES,
    // Remote: stream-json. Local: Claude Code's own terminal UI in a PTY (local/engine.ts).
    create: (context) =>
      new ModeEngine(CLAUDE_CAPABILITIES, {
        remote: () => new ClaudeEngine(context, checked),
        local: () => new ClaudeLocalEngine(context, checked, CLAUDE_CAPABILITIES),
      }),
    validateOptions: (engineOptions) => void parseClaudeOptions(engineOptions),
    locateAgent: (launch) => locateClaude(checked, launch),
    validateSettings: (settings) => checkClaudeSettings(settings),
    checkResume: (target) => checkClaudeResume(checked, target),
    diagnose: async ({ env } = {}) => [await diagnoseAgent({ engine: 'claude', select: '--agent claude', spec: CLAUDE_CLI, credentials: CLAUDE_CREDENTIAL_VARS, ...(env && { env }) })],
  };
}

/**
 * `claudePrintEngine(options)` (driven tier): one `claude -p --output-format stream-json` process
 * per turn, resumed by session id. Same options as `claude`; no permission prompts.
 */
export function claudePrintEngine(options: ClaudeEngineOptions = {}): EngineFactory {
  const checked = parseClaudeOptions(options);
  return {
    name: 'claude-print',
    capabilities: CLAUDE_PRINT_CAPABILITIES,
    create: (context) => new ClaudePrintEngine(context, checked),
    validateOptions: (engineOptions) => void parseClaudeOptions(engineOptions),
    locateAgent: (launch) => locateClaude(checked, launch),
    checkResume: (target) => checkClaudeResume(checked, target),
    diagnose: async ({ env } = {}) => [await diagnoseAgent({ engine: 'claude-print', select: '--agent claude-print', spec: CLAUDE_CLI, credentials: CLAUDE_CREDENTIAL_VARS, ...(env && { env }) })],
  };
}

/** The CLI the engines would start for these options (AGENT_NOT_FOUND when none); a replaced launcher starts none. */
async function locateClaude(factory: ClaudeEngineOptions, launch: { bin?: string; engineOptions: Record<string, unknown> }): Promise<void> {
  const options = mergeClaudeOptions(factory, launch.engineOptions);
  if (options.launcher) return;
  const bin = launch.bin ?? options.bin;
  await findAgent(CLAUDE_CLI, bin !== undefined ? { bin } : {});
}
