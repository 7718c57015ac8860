/**
 * Options of the `acp` engine. They come from two places — the factory (`acpEngine(options)`) and
 * each start's `spec.options` (`createSession({ engineOptions })`) — and are merged with the
 * start's values winning (`env` is merged key by key). The serializable part is validated with
 * zod, so a typo'd type reads as one sentence instead of a failure deep inside the agent.
 */
import { z } from 'zod';
import type { Readable, Writable } from 'node:stream';
import { COMMON_ENGINE_OPTIONS, parseEngineOptions } from '../core/engine-options.js';
import type { ProcessExit, ShutdownOptions, SpawnSupervisedOptions } from '../transport/process-supervisor.js';
import { ACP_PRESET_NAMES, type AcpPresetName } from './presets.js';
import type { TrafficTap } from '../transport/traffic.js';

/** What the engine needs of an agent process (a `SupervisedProcess` is one). */
export interface AgentProcess {
  readonly pid?: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderrTail?: { text(): string };
  readonly exited: Promise<ProcessExit>;
  /** Runs the stop ladder; resolves once the process (and its group) is gone. */
  stop(): Promise<unknown>;
}

/** Replaces process spawning (tests replay recorded traffic through it). */
export type AgentSpawner = (request: SpawnSupervisedOptions) => Promise<AgentProcess>;

export interface AcpFsOptions {
  /** Advertise `fs.readTextFile`/`fs.writeTextFile` and serve them, confined to workDir + extraRoots. */
  enabled: boolean;
  extraRoots?: string[];
  maxReadBytes?: number;
  maxWriteBytes?: number;
}

export interface AcpTerminalOptions {
  /** Advertise `terminal` and run the agent's shell commands (arbitrary execution: opt in knowingly). */
  enabled: boolean;
  extraRoots?: string[];
  /** Environment of terminal commands. Default: the allow-listed part of the agent's environment. */
  env?: Record<string, string>;
  maxTerminals?: number;
  defaultOutputByteLimit?: number;
  wallClockMs?: number;
}

export interface AcpEngineOptions {
  /** Which known agent to run (see presets.ts). Ignored when `command` is given. */
  preset?: AcpPresetName;
  /** Any other ACP agent: the executable (no shell) … */
  command?: string;
  /** … and its arguments. */
  args?: string[];
  /**
   * The preset agent's executable (the first place looked; then the preset's `ASE_*_BIN`
   * variable, PATH, the npm package). The preset's arguments still apply; `command` does not take them.
   */
  bin?: string;
  /** Arguments appended after the preset's and `args`. */
  extraArgs?: string[];
  /** Extra environment for the agent (wins over everything else). */
  env?: Record<string, string>;
  /**
   * Host variables passed through on top of the defaults (the base list, proxies/CAs/XDG and the
   * preset's own: `GEMINI_*`/`GOOGLE_*`, `OPENAI_*`/`CODEX_*`, `ANTHROPIC_*`/`CLAUDE_*`…), by name
   * or `PREFIX*`; the rest of process.env is not.
   */
  passEnv?: string[];
  /**
   * The agent's HOME: `'private'` (default) = a per-user, per-agent directory under the OS temp
   * dir, kept across generations so `session/load` finds the agent's saved sessions; `'inherit'`
   * = the host's HOME (a real account's credentials); or a path. `env.HOME` overrides all three.
   */
  home?: 'private' | 'inherit' | (string & {});
  fs?: AcpFsOptions;
  terminal?: AcpTerminalOptions;
  /** `mcpServers` of session/new and session/load (ACP shapes). Default none. The name `host` is the host tools' own. */
  mcpServers?: unknown[];
  /**
   * How the session's host tools (`createSession({tools})`) reach the agent: through the loopback
   * MCP server, as an `http` MCP server when the agent advertises `mcpCapabilities.http`, else
   * (or with `'stdio'`) through a stdio shim the agent spawns. Default `'auto'`.
   */
  hostToolsTransport?: 'auto' | 'stdio';
  /** `additionalDirectories` of session/new and session/load, when the agent supports them. */
  additionalDirectories?: string[];
  /**
   * `session/set_mode` right after the session exists (e.g. gemini `autoEdit`, claude-code-acp
   * `acceptEdits`). Checked against the modes the agent offers: an unknown one fails the start
   * with the available ids listed.
   */
  modeId?: string;
  /**
   * The model, right after the session exists: through the agent's `model` config option
   * (`session/set_config_option`, codex-acp) or `session/set_model` (gemini, claude-code-acp).
   * Checked against the models the agent offers.
   */
  model?: string;
  /**
   * Other session config options the agent offers (`session/set_config_option`), by id: e.g.
   * codex-acp `{reasoning_effort: 'high'}`. Checked against the agent's options and values.
   */
  configOptions?: Record<string, string | boolean>;
  /** `authenticate` after initialize (most agents take credentials from the environment instead). */
  authenticate?: { methodId: string; _meta?: Record<string, unknown> };
  /** When `session/load` fails: start a new session (default, reported as an error event) or fail. */
  loadFallback?: 'new' | 'fail';
  /** Timeout of `initialize` (and `authenticate`). Default 60 s. */
  initializeTimeoutMs?: number;
  /** Timeout of session/new, session/load and set_mode. Default 60 s. */
  sessionTimeoutMs?: number;
  /** How long a cancelled turn may take to end before the agent is stopped. Default 8 s. */
  cancelTimeoutMs?: number;
  /** How long a permission request may stay open after its turn ended. Default 2 s. */
  permissionGraceMs?: number;
  shutdown?: ShutdownOptions;
  /**
   * Sees every JSON-RPC message both ways, in wire order, as one JSON line (`JSON.stringify` of
   * the message the SDK decoded or is sending): fixtures, debugging. A tap that throws is ignored.
   */
  onTraffic?: TrafficTap;
  /** Replaces process spawning (tests). */
  spawn?: AgentSpawner;
}

/** The defaults of the timeouts above, in one place for the engine and its parts. */
export const ACP_DEFAULTS = {
  initializeTimeoutMs: 60_000,
  sessionTimeoutMs: 60_000,
  cancelTimeoutMs: 8_000,
  permissionGraceMs: 2_000,
} as const;

/**
 * The longest delay a Node timer can hold (2^31-1 ms, about 24.8 days). A longer one fires after
 * 1 ms instead (TimeoutOverflowWarning), so a huge value meant as "practically never" would act as
 * "at once": every timer the engine arms goes through this.
 */
export const MAX_TIMER_MS = 2_147_483_647;

export function timerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}

const fn = <T>(what: string) => z.custom<T>((v) => typeof v === 'function', `${what} must be a function`);
const ms = z.number().int().nonnegative();

/** The acp engine's options, checked strictly (an unknown key is refused with the known ones listed). */
export const AcpOptionsSchema = z.object({
  ...COMMON_ENGINE_OPTIONS,
  preset: z.enum(ACP_PRESET_NAMES, { error: `preset must be one of ${ACP_PRESET_NAMES.join(', ')}` }).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  home: z.string().min(1).optional(),
  fs: z
    .object({
      enabled: z.boolean(),
      extraRoots: z.array(z.string()).optional(),
      maxReadBytes: z.number().int().positive().optional(),
      maxWriteBytes: z.number().int().positive().optional(),
    })
    .optional(),
  terminal: z
    .object({
      enabled: z.boolean(),
      extraRoots: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
      maxTerminals: z.number().int().positive().optional(),
      defaultOutputByteLimit: z.number().int().positive().optional(),
      wallClockMs: z.number().int().positive().optional(),
    })
    .optional(),
  mcpServers: z.array(z.unknown()).optional(),
  hostToolsTransport: z.enum(['auto', 'stdio']).optional(),
  additionalDirectories: z.array(z.string()).optional(),
  modeId: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  configOptions: z.record(z.string().min(1), z.union([z.string().min(1), z.boolean()])).optional(),
  authenticate: z.object({ methodId: z.string().min(1), _meta: z.record(z.string(), z.unknown()).optional() }).optional(),
  loadFallback: z.enum(['new', 'fail']).optional(),
  initializeTimeoutMs: ms.optional(),
  sessionTimeoutMs: ms.optional(),
  cancelTimeoutMs: ms.optional(),
  permissionGraceMs: ms.optional(),
  shutdown: z.object({ stdinGraceMs: ms.optional(), termGraceMs: ms.optional(), killWaitMs: ms.optional() }).optional(),
  onTraffic: fn<TrafficTap>('onTraffic').optional(),
  spawn: fn<AgentSpawner>('spawn').optional(),
});

/** Checks `options` (a session's `engineOptions` or the factory's); throws INVALID_OPTIONS. */
export function parseAcpOptions(options: unknown): AcpEngineOptions {
  return parseEngineOptions('acp', AcpOptionsSchema, options) as AcpEngineOptions;
}

/**
 * Factory options overlaid with a start's `spec.options` (checked): the start's win, `env` and
 * `configOptions` merge key by key, `passEnv` and `extraArgs` add up.
 */
export function resolveAcpOptions(factory: AcpEngineOptions, fromSpec: Record<string, unknown>): AcpEngineOptions {
  const spec = Object.fromEntries(Object.entries(parseAcpOptions(fromSpec)).filter(([, v]) => v !== undefined)) as AcpEngineOptions;
  const merged: AcpEngineOptions = { ...factory, ...spec };
  if (factory.env || spec.env) merged.env = { ...factory.env, ...spec.env };
  if (factory.configOptions || spec.configOptions) merged.configOptions = { ...factory.configOptions, ...spec.configOptions };
  if (factory.passEnv || spec.passEnv) merged.passEnv = [...(factory.passEnv ?? []), ...(spec.passEnv ?? [])];
  if (factory.extraArgs || spec.extraArgs) merged.extraArgs = [...(factory.extraArgs ?? []), ...(spec.extraArgs ?? [])];
  // A start that names its own agent does not inherit the factory's agent-specific argv or executable.
  if (spec.preset !== undefined && spec.command === undefined) {
    delete merged.command;
    delete merged.args;
    if (spec.bin === undefined) delete merged.bin;
  }
  return merged;
}
