/**
 * How the agent process is started: the executable and argv (a preset, `command`, or `ase --bin`)
 * and its environment (scrubbed, a private HOME, the preset's and the caller's variables). Kept
 * apart from the engine because it is option resolution plus creating (and, for the private one,
 * checking) the HOME directory; every failure here is a start failure.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { AseError } from '../../errors.js';
import { buildEnv, DEFAULT_ENV_ALLOW } from '../transport/env.js';
import type { AcpEngineOptions } from './options.js';
import { ACP_PRESETS, type AcpPreset } from './presets.js';

export interface AgentLaunch {
  argv: { file: string; args: string[] };
  env: Record<string, string>;
  /** The preset the agent comes from (also when `command` or `--bin` replaced its executable). */
  preset: AcpPreset | undefined;
}

/**
 * The agent's argv and env for these (resolved) options; `bin` is the context's `--bin`. Throws an
 * AseError for bad options or a HOME that is not private; a file-system error as it is (start()
 * reports anything else as ENGINE_START_FAILED).
 */
export function agentLaunch(options: AcpEngineOptions, bin: string | undefined): AgentLaunch {
  const { argv, preset } = agentArgv(options, bin);
  return { argv, preset, env: agentEnv(options, preset) };
}

function agentArgv(o: AcpEngineOptions, bin: string | undefined): { argv: { file: string; args: string[] }; preset: AcpPreset | undefined } {
  // `ase --bin` replaces the executable like `command` does (the preset then only lends its env and shutdown).
  const file = bin ?? o.command;
  if (file !== undefined) return { argv: { file, args: [...(o.args ?? [])] }, preset: o.preset ? ACP_PRESETS[o.preset] : undefined };
  if (!o.preset) throw new AseError('INVALID_OPTIONS', 'acp engine: choose an agent with `preset` (gemini, codex-acp, claude-code-acp, claude-agent-acp) or give `command`');
  const preset = ACP_PRESETS[o.preset];
  const argv = preset.resolve();
  return { argv: { file: argv.file, args: [...argv.args, ...(o.args ?? [])] }, preset };
}

/** Scrubbed env: the allow-list (plus `passEnv`), a private HOME, the preset's, then the caller's. */
function agentEnv(o: AcpEngineOptions, preset: AcpPreset | undefined): Record<string, string> {
  const set: Record<string, string> = { ...(preset?.env ?? {}) };
  const home = o.home ?? 'private';
  if (home === 'private') set['HOME'] = privateHome(preset?.name ?? 'custom');
  else if (home !== 'inherit') {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    set['HOME'] = home;
  }
  const env = buildEnv({ allow: [...DEFAULT_ENV_ALLOW, ...(o.passEnv ?? [])], set: { ...set, ...(o.env ?? {}) } });
  // Also in front of a caller's PATH: a node preset means "this Node", for the agent's children too.
  if (preset?.node) {
    const nodeDir = dirname(process.execPath);
    env['PATH'] = [nodeDir, ...(env['PATH'] ?? '').split(delimiter).filter((p) => p !== '' && p !== nodeDir)].join(delimiter);
  }
  return env;
}

/**
 * `<tmp>/ase-acp-<uid>/<agent>`: private to this user, stable across generations (for session/load).
 * The temp dir is shared and the name predictable, so both levels must be real directories owned
 * by us that nobody else can write: otherwise another user could have planted a config file (an
 * MCP server, a model endpoint) that the agent would load with our rights.
 */
function privateHome(name: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const base = join(tmpdir(), `ase-acp-${uid ?? 'user'}`);
  const dir = join(base, name.replace(/[^A-Za-z0-9._-]/g, '_'));
  for (const path of [base, dir]) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const st = lstatSync(path);
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
      throw new AseError('INVALID_OPTIONS', `acp engine: the private HOME ${path} is not private (a symlink, another user's, or writable by others); remove it or set \`home\``);
    }
  }
  return dir;
}
