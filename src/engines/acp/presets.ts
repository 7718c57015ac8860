/**
 * Agent presets: how to start the ACP agents we know, straight from their pinned packages (no
 * shell, no npx, no `node_modules/.bin` wrapper), plus per-agent process settings.
 * Anything else runs through the engine's `command`/`args` options.
 *
 * Node-based agents run with `process.execPath` (the host's Node), and that Node's directory goes
 * first on the agent's PATH: claude-code-acp spawns `node` for its bundled Claude Code, which must
 * not pick up an older system Node.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AseError } from '../../errors.js';
import type { ShutdownOptions } from '../transport/process-supervisor.js';

export const ACP_PRESET_NAMES = ['gemini', 'codex-acp', 'claude-code-acp', 'claude-agent-acp'] as const;
export type AcpPresetName = (typeof ACP_PRESET_NAMES)[number];

export interface AcpPreset {
  readonly name: AcpPresetName;
  readonly description: string;
  /** The npm package that provides the agent (for error messages). */
  readonly packageName: string;
  /** Resolves the executable and argv; throws ENGINE_START_FAILED when the package is missing. */
  resolve(): { file: string; args: string[] };
  /** Environment every start gets (callers can override each variable). */
  readonly env: Readonly<Record<string, string>>;
  /** Runs on the host's Node: its directory goes first on PATH. */
  readonly node: boolean;
  /** Agents that ignore stdin EOF get a short EOF grace before SIGTERM. */
  readonly shutdown?: ShutdownOptions;
}

const require = createRequire(import.meta.url);

/** The directory of an installed package, also for packages whose `exports` hide package.json. */
export function packageDir(name: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    // `exports` may not list package.json: walk up node_modules directories instead.
  }
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function requireFile(packageName: string, relative: string, executable = false): string {
  const dir = packageDir(packageName);
  if (!dir) {
    throw new AseError('ENGINE_START_FAILED', `acp engine: ${packageName} is not installed (install it, or pass command/args in the engine options)`);
  }
  const file = join(dir, relative);
  try {
    accessSync(file, executable ? constants.X_OK : constants.R_OK);
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `acp engine: ${file} is missing${executable ? ' or not executable' : ''}`, { cause: error });
  }
  return file;
}

const EOF_IGNORED: ShutdownOptions = { stdinGraceMs: 300 };

function nodeScript(packageName: string, script: string, extraArgs: string[] = []) {
  return () => ({ file: process.execPath, args: [requireFile(packageName, script), ...extraArgs] });
}

export const ACP_PRESETS: Readonly<Record<AcpPresetName, AcpPreset>> = {
  gemini: {
    name: 'gemini',
    description: 'Gemini CLI in ACP mode (`gemini --acp`)',
    packageName: '@google/gemini-cli',
    resolve: nodeScript('@google/gemini-cli', 'bundle/gemini.js', ['--acp']),
    // Without it the CLI re-launches itself in a child Node with other heap flags (two processes).
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    node: true,
  },
  'codex-acp': {
    name: 'codex-acp',
    description: "Zed's codex-acp (native binary embedding Codex)",
    packageName: `@zed-industries/codex-acp-${process.platform}-${process.arch}`,
    resolve: () => ({ file: requireFile(`@zed-industries/codex-acp-${process.platform}-${process.arch}`, 'bin/codex-acp', true), args: [] }),
    env: {},
    node: false,
    shutdown: EOF_IGNORED,
  },
  'claude-code-acp': {
    name: 'claude-code-acp',
    description: "Zed's claude-code-acp (Claude Agent SDK; routes file and shell tools through the client)",
    packageName: '@zed-industries/claude-code-acp',
    resolve: nodeScript('@zed-industries/claude-code-acp', 'dist/index.js'),
    env: {},
    node: true,
    shutdown: EOF_IGNORED,
  },
  'claude-agent-acp': {
    name: 'claude-agent-acp',
    description: "Zed's claude-agent-acp (successor of claude-code-acp)",
    packageName: '@zed-industries/claude-agent-acp',
    resolve: nodeScript('@zed-industries/claude-agent-acp', 'dist/index.js'),
    env: {},
    node: true,
    shutdown: EOF_IGNORED,
  },
};

export function isAcpPresetName(value: unknown): value is AcpPresetName {
  return typeof value === 'string' && (ACP_PRESET_NAMES as readonly string[]).includes(value);
}
