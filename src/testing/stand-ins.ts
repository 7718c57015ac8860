/**
 * The kit's stand-in agents: small scripted agent processes that speak a real protocol (ACP, Claude
 * Code's stream-json, Codex app-server) and follow directives in the prompt instead of calling a
 * model, so an engine can be tested with no agent CLI and no network. `standInAgent` says how to run
 * one; `standInExecutable` writes a launcher for engines that take a single executable path (`bin`);
 * `standInDriver` is the AgentDriver whose prompts the stand-ins obey.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentDriver, BadOutputKind } from './conformance.js';

export const STAND_IN_PROTOCOLS = ['acp', 'claude-stream-json', 'codex-app-server'] as const;
export type StandInProtocol = (typeof STAND_IN_PROTOCOLS)[number];

const SCRIPTS: Record<StandInProtocol, string> = {
  acp: 'acp-agent',
  'claude-stream-json': 'claude-agent',
  'codex-app-server': 'codex-agent',
};

/** How to run the stand-in for `protocol`: this Node and the script (`.js` in the package, `.ts` in the source tree). */
export function standInAgent(protocol: StandInProtocol): { command: string; args: string[]; script: string } {
  const ext = extname(fileURLToPath(import.meta.url)) === '.ts' ? '.ts' : '.js';
  const script = fileURLToPath(new URL(`./agents/${SCRIPTS[protocol]}${ext}`, import.meta.url));
  return { command: process.execPath, args: [script], script };
}

/** Writes `dir/<name>`, a shell launcher of the stand-in (for engines that take one executable, e.g. `bin`). Returns its path. */
export function standInExecutable(protocol: StandInProtocol, dir: string, name = SCRIPTS[protocol]): string {
  const { command, script } = standInAgent(protocol);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(path, `#!/bin/sh\nexec ${quote(command)} ${quote(script)} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** The directive a stand-in reads from a prompt. */
export type StandInDirective =
  | { standIn: 'text'; answer: string }
  | { standIn: 'tool' | 'permission'; command: string; then: string }
  | { standIn: 'failure' }
  | { standIn: 'stall' }
  | { standIn: 'bad'; kind: BadOutputKind; then: string };

/** The prompt that makes a stand-in do `directive`. */
export function standInPrompt(directive: StandInDirective): string {
  return JSON.stringify(directive);
}

/** An AgentDriver for the stand-ins: every hook returns the prompt with its directive. */
export function standInDriver(): Required<AgentDriver> {
  return {
    text: (answer) => standInPrompt({ standIn: 'text', answer }),
    tool: (command, then) => standInPrompt({ standIn: 'tool', command, then }),
    permission: (command, then) => standInPrompt({ standIn: 'permission', command, then }),
    failure: () => standInPrompt({ standIn: 'failure' }),
    stall: () => ({ prompt: standInPrompt({ standIn: 'stall' }) }),
    badOutput: (kind, then) => standInPrompt({ standIn: 'bad', kind, then }),
  };
}
