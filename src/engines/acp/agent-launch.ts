/**
 * How the agent process is started: the executable and argv (a preset, `command`, or `ase --bin`)
 * and its environment (scrubbed, a private HOME, the preset's and the caller's variables). Kept
 * apart from the engine because it is option resolution plus creating (and, for the private one,
 * checking) the HOME directory; every failure here is a start failure.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { AseError, isAseError } from '../../errors.js';
import { findAgent, type AgentLocation } from '../core/agent-discovery.js';
import { buildEnv, DEFAULT_ENV_ALLOW, NETWORK_ENV_ALLOW } from '../transport/env.js';
import type { AcpEngineOptions } from './options.js';
import { ACP_PRESET_NAMES, ACP_PRESETS, type AcpPreset } from './presets.js';

export interface AgentLaunch {
  argv: { file: string; args: string[] };
  env: Record<string, string>;
  /** The preset the agent comes from (also when `command` or `--bin` replaced its executable). */
  preset: AcpPreset | undefined;
  /** Where a preset's agent was found (undefined for `command`). */
  location?: AgentLocation;
}

/** What every ACP agent inherits from the host by default, before the preset's own variables. */
export const ACP_BASE_ENV_ALLOW: readonly string[] = [...DEFAULT_ENV_ALLOW, ...NETWORK_ENV_ALLOW];

/**
 * The agent's argv and env for these (resolved) options; `bin` is the context's `--bin`. A preset's
 * agent is found in the usual four places (AGENT_NOT_FOUND naming them); `command` runs as given.
 * Throws an AseError for bad options or a HOME that is not private; a file-system error as it is
 * (start() reports anything else as ENGINE_START_FAILED).
 */
export async function agentLaunch(options: AcpEngineOptions, bin: string | undefined): Promise<AgentLaunch> {
  const { argv, preset, location } = await agentArgv(options, bin ?? options.bin);
  return { argv, preset, env: agentEnv(options, preset), ...(location && { location }) };
}

/**
 * Finds the agent these options would start, without starting it or touching its HOME:
 * AGENT_NOT_FOUND naming the four places for a preset's agent that is nowhere; an explicit
 * `command` is run as given and not looked for.
 */
export async function locateAcpAgent(options: AcpEngineOptions, bin: string | undefined): Promise<void> {
  await agentArgv(options, bin ?? options.bin);
}

async function agentArgv(o: AcpEngineOptions, bin: string | undefined): Promise<{ argv: { file: string; args: string[] }; preset: AcpPreset | undefined; location?: AgentLocation }> {
  const preset = o.preset ? ACP_PRESETS[o.preset] : undefined;
  const extra = [...(o.args ?? []), ...(o.extraArgs ?? [])];
  // `command` is any agent, run as given (a preset then only lends its env and shutdown).
  if (o.command !== undefined && bin === undefined) return { argv: { file: o.command, args: extra }, preset };
  if (!preset) {
    if (bin !== undefined) return { argv: { file: bin, args: extra }, preset };
    throw new AseError('INVALID_OPTIONS', `acp engine: choose an agent with \`preset\` (${ACP_PRESET_NAMES.join(', ')}) or give \`command\``);
  }
  // A preset's agent: `bin` (or `ase --bin`) is the first of the four places, and its arguments apply.
  const location = await findAgent(preset.cli, bin !== undefined ? { bin } : {}).catch((error: unknown) => {
    // A replaced spawner (a replay's stand-in) starts no real agent: one that is not installed is no failure.
    if (o.spawn && isAseError(error, 'AGENT_NOT_FOUND')) return undefined;
    throw error;
  });
  if (location === undefined) return { argv: { file: bin ?? preset.cli.commands[0] ?? preset.name, args: [...preset.args, ...extra] }, preset };
  return { argv: { file: location.file, args: [...location.args, ...preset.args, ...extra] }, preset, location };
}

/** Scrubbed env: the allow-list (plus the preset's and `passEnv`), a private HOME, the preset's, then the caller's. */
function agentEnv(o: AcpEngineOptions, preset: AcpPreset | undefined): Record<string, string> {
  const set: Record<string, string> = { ...(preset?.env ?? {}) };
  const home = o.home ?? 'private';
  if (home === 'private') set['HOME'] = privateHome(preset?.name ?? 'custom');
  else if (home !== 'inherit') {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    set['HOME'] = home;
  }
  const env = buildEnv({ allow: [...ACP_BASE_ENV_ALLOW, ...(preset?.passEnv ?? []), ...(o.passEnv ?? [])], set: { ...set, ...(o.env ?? {}) } });
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
