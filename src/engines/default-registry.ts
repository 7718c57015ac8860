/** The built-in engines, registered by name: what `createSession` and the CLI use unless given a registry. */
import { acpEngine, type AcpEngineOptions } from './acp/index.js';
import { claudeEngine, claudePrintEngine, type ClaudeEngineOptions } from './claude/index.js';
import { codexEngine, codexExecEngine, codexMcpEngine, type CodexAppServerEngineOptions, type CodexExecEngineOptions, type CodexMcpEngineOptions } from './codex/index.js';
import type { EngineFactory } from './core/engine.js';
import { EngineRegistry } from './core/registry.js';
import { fakeEngine } from './fake/index.js';

/**
 * A fresh registry with the built-in engines. The factories themselves are built once per process
 * and shared (frozen: nothing can change one under another registry): each checks its default
 * options with zod when built, ~7 ms of CPU for the seven, which every `createSession` without a
 * registry paid (issue 24).
 */
export function defaultRegistry(): EngineRegistry {
  const registry = new EngineRegistry();
  for (const factory of (builtIns ??= buildBuiltIns())) registry.register(factory);
  return registry;
}

let builtIns: readonly EngineFactory[] | undefined;

function buildBuiltIns(): readonly EngineFactory[] {
  return [
    fakeEngine(),
    claudeEngine(),
    codexEngine(),
    codexMcpEngine(),
    acpEngine(),
    // Driven tier: one-shot JSON modes, one process per turn.
    codexExecEngine(),
    claudePrintEngine(),
  ].map((factory) => Object.freeze(factory));
}

/**
 * Each built-in engine's `engineOptions`, by engine name: `createSession({ agent: 'claude',
 * engineOptions })` checks them against Claude's options at compile time (a misspelled key fails
 * `tsc`, as it fails at run time with INVALID_OPTIONS). Other names (`fake`, your own engines)
 * take any record.
 */
export interface EngineOptionsByAgent {
  claude: ClaudeEngineOptions;
  'claude-print': ClaudeEngineOptions;
  codex: CodexAppServerEngineOptions;
  'codex-mcp': CodexMcpEngineOptions;
  'codex-exec': CodexExecEngineOptions;
  acp: AcpEngineOptions;
}
