/** The `claude` engine factory: the real Claude Code CLI over stream-json. */
import type { EngineFactory } from '../core/engine.js';
import { CLAUDE_CAPABILITIES, ClaudeEngine, type ClaudeEngineOptions } from './engine.js';

export { CLAUDE_CAPABILITIES, ClaudeEngine, resolveClaudeBinary, type ClaudeEngineOptions, type ClaudePermissionMode, type SetModelResult, type SetPermissionModeResult } from './engine.js';
export { ClaudeTranslator, classifyResultError, projectSlug, transcriptPathFor } from './translate.js';
export { ControlClient, type PermissionAsk } from './client.js';
export { classifyClaudeMessage, type ClaudeMessage } from './messages.js';

export function claudeEngine(options: ClaudeEngineOptions = {}): EngineFactory {
  return {
    name: 'claude',
    capabilities: CLAUDE_CAPABILITIES,
    create: (context) => new ClaudeEngine(context, options),
  };
}
