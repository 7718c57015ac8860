/**
 * The client methods the engine serves the agent, if the caller enabled them: confined `fs/*`
 * (client-fs.ts) and `terminal/*` (client-terminal.ts). Built once per start, before the agent is
 * spawned, because their roots are resolved (realpath) here: a root that does not exist is a
 * start failure, not a surprise in the middle of a turn.
 */
import type { ProcessObserver } from '../transport/process-observer.js';
import { DEFAULT_ENV_ALLOW } from '../transport/env.js';
import { ConfinedFs } from './client-fs.js';
import { TerminalManager } from './client-terminal.js';
import type { AcpEngineOptions } from './options.js';

export interface ClientServices {
  fs: ConfinedFs | undefined;
  terminals: TerminalManager | undefined;
}

/**
 * `agentEnv` is the agent's environment: terminals get its allow-listed part unless `terminal.env`
 * is given. `processes` records the terminals' processes like the agent's (EngineContext.processes).
 */
export function clientServices(options: AcpEngineOptions, workDir: string, agentEnv: Record<string, string>, processes?: ProcessObserver): ClientServices {
  let fs: ConfinedFs | undefined;
  let terminals: TerminalManager | undefined;
  const fsOptions = options.fs;
  if (fsOptions?.enabled) {
    fs = new ConfinedFs({
      workDir,
      ...(fsOptions.extraRoots && { extraRoots: fsOptions.extraRoots }),
      ...(fsOptions.maxReadBytes !== undefined && { maxReadBytes: fsOptions.maxReadBytes }),
      ...(fsOptions.maxWriteBytes !== undefined && { maxWriteBytes: fsOptions.maxWriteBytes }),
    });
  }
  const terminal = options.terminal;
  if (terminal?.enabled) {
    const allowed = Object.fromEntries(Object.entries(agentEnv).filter(([k]) => DEFAULT_ENV_ALLOW.includes(k)));
    terminals = new TerminalManager({
      workDir,
      env: terminal.env ?? allowed,
      ...(terminal.extraRoots && { extraRoots: terminal.extraRoots }),
      ...(terminal.maxTerminals !== undefined && { maxTerminals: terminal.maxTerminals }),
      ...(terminal.defaultOutputByteLimit !== undefined && { defaultOutputByteLimit: terminal.defaultOutputByteLimit }),
      ...(terminal.wallClockMs !== undefined && { wallClockMs: terminal.wallClockMs }),
      ...(processes && { processes }),
    });
  }
  return { fs, terminals };
}
