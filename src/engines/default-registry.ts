/** The built-in engines, registered by name: what `createSession` and the CLI use unless given a registry. */
import { acpEngine, type AcpEngineOptions } from './acp/index.js';
import { claudeEngine, claudePrintEngine, type ClaudeEngineOptions } from './claude/index.js';
import { codexEngine, codexExecEngine, codexMcpEngine, type CodexAppServerEngineOptions, type CodexExecEngineOptions, type CodexMcpEngineOptions } from './codex/index.js';
import { EngineRegistry } from './core/registry.js';
import { fakeEngine } from './fake/index.js';

/** A fresh registry with the built-in engines. */
export function defaultRegistry(): EngineRegistry {
  return new EngineRegistry()
    .register(fakeEngine())
    .register(claudeEngine())
    .register(codexEngine())
    .register(codexMcpEngine())
    .register(acpEngine())
    // Driven tier: one-shot JSON modes, one process per turn.
    .register(codexExecEngine())
    .register(claudePrintEngine());
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
