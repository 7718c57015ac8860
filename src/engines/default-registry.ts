/** The built-in engines, registered by name: what `createSession` and the CLI use unless given a registry. */
import { acpEngine } from './acp/index.js';
import { claudeEngine, claudePrintEngine } from './claude/index.js';
import { codexEngine, codexExecEngine, codexMcpEngine } from './codex/index.js';
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
