/**
 * The claude engine's options: the typed, validated `engineOptions` (zod, strict: an unknown key
 * is refused with the known ones listed), how factory options and a session's combine, and how
 * each option becomes the Claude Code command line. Every flag below was checked against the
 * pinned CLI's `--help` (2.1.330) and its behaviour in test/real-cli/claude-options.test.ts:
 *
 * | option             | flag                                        |
 * |--------------------|---------------------------------------------|
 * | model              | `--model <m>`                               |
 * | fallbackModel      | `--fallback-model <m[,m…]>`                 |
 * | permissionMode     | `--permission-mode <mode>`                  |
 * | allowedTools       | `--allowedTools <a,b>`                      |
 * | disallowedTools    | `--disallowedTools <a,b>`                   |
 * | systemPrompt       | `--system-prompt <text>`                    |
 * | appendSystemPrompt | `--append-system-prompt <text>`             |
 * | maxTurns           | `--max-turns <n>` (hidden in --help)        |
 * | mcpServers         | `--mcp-config {"mcpServers":{…}}`           |
 * | settings           | `--settings <file or JSON>`                 |
 * | addDirs            | `--add-dir <dir>` per directory             |
 * | extraArgs          | appended as given, last                     |
 */
import { z } from 'zod';
import { AseError } from '../../errors.js';
import type { EngineSettings } from '../../events/engine-input.js';
import { COMMON_ENGINE_OPTIONS, fn, parseEngineOptions } from '../core/engine-options.js';
import type { NdjsonLauncher } from '../transport/ndjson-process.js';
import type { ShutdownOptions } from '../transport/process-supervisor.js';
import type { TrafficTap } from '../transport/traffic.js';

/** `--permission-mode` choices of the pinned CLI (`default` is its alias of `manual`). */
export const CLAUDE_PERMISSION_MODES = ['default', 'manual', 'acceptEdits', 'auto', 'bypassPermissions', 'dontAsk', 'plan'] as const;
export type ClaudePermissionMode = (typeof CLAUDE_PERMISSION_MODES)[number];

/** One MCP server for `--mcp-config`: a command (stdio) or a URL (`http` / `sse`). */
export type ClaudeMcpServer =
  | { type?: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; [key: string]: unknown }
  | { type: 'http' | 'sse'; url: string; headers?: Record<string, string>; [key: string]: unknown };

const McpServerSchema = z.union(
  [
    z.looseObject({ type: z.literal('stdio').optional(), command: z.string().min(1), args: z.array(z.string()).optional(), env: z.record(z.string(), z.string()).optional() }),
    z.looseObject({ type: z.enum(['http', 'sse']), url: z.string().min(1), headers: z.record(z.string(), z.string()).optional() }),
  ],
  { error: 'an MCP server is {command, args?, env?} (stdio) or {type: "http" | "sse", url, headers?}' },
);

const ms = z.number().int().positive();
const grace = z.number().int().nonnegative();

export const ClaudeOptionsSchema = z.object({
  ...COMMON_ENGINE_OPTIONS,
  model: z.string().min(1).optional(),
  /** One model or several, tried in order when the main one is busy. */
  fallbackModel: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  permissionMode: z.enum(CLAUDE_PERMISSION_MODES).optional(),
  /** Permission rules that need no prompt (`Bash(git log:*)`, `Edit`). */
  allowedTools: z.array(z.string().min(1)).optional(),
  /** Tools removed from the model's tool list (`WebFetch`, `Bash(rm:*)`). */
  disallowedTools: z.array(z.string().min(1)).optional(),
  /** Replaces Claude Code's system prompt. */
  systemPrompt: z.string().optional(),
  /** Appended to the system prompt (Claude Code's, or `systemPrompt`). */
  appendSystemPrompt: z.string().optional(),
  /** Model calls per turn; a turn that needs more ends `failed` (budget_exceeded). */
  maxTurns: z.number().int().positive().optional(),
  /** MCP servers by name, as in Claude Code's `.mcp.json`. */
  mcpServers: z.record(z.string().min(1), McpServerSchema).optional(),
  /** A settings file path, or the settings object itself (permissions, env, hooks, …). */
  settings: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  /** More directories the tools may use besides the working directory. */
  addDirs: z.array(z.string().min(1)).optional(),
  shutdown: z.object({ stdinGraceMs: grace.optional(), termGraceMs: grace.optional(), killWaitMs: grace.optional() }).optional(),
  initializeTimeoutMs: ms.optional(),
  interruptTimeoutMs: ms.optional(),
  controlTimeoutMs: ms.optional(),
  hostToolsConnectTimeoutMs: ms.optional(),
  maxLineBytes: ms.optional(),
  onTraffic: fn<TrafficTap>('onTraffic').optional(),
  launcher: fn<NdjsonLauncher>('launcher').optional(),
});

/** The options of the claude engine (`claudeEngine(options)`, and per session `engineOptions`). */
export interface ClaudeEngineOptions {
  /** The CLI executable. Default: discovered (ASE_CLAUDE_BIN, `claude` on PATH, the npm package). */
  bin?: string;
  /** Variables set in the CLI's environment (win over everything inherited). */
  env?: Record<string, string>;
  /** Host variables passed on top of the defaults (`ANTHROPIC_*`, `CLAUDE_*`, … see docs/engines.md), by name or `PREFIX*`. */
  passEnv?: string[];
  /** Extra argv appended after ours (e.g. `['--effort', 'high']`). */
  extraArgs?: readonly string[];
  /** `--model`: an alias (`sonnet`, `opus`) or a full model name. */
  model?: string;
  /** `--fallback-model`: tried in order when the main model is busy or unavailable. */
  fallbackModel?: string | string[];
  /** `--permission-mode` for the session's start. */
  permissionMode?: ClaudePermissionMode;
  /** `--allowedTools`: rules that run without a permission prompt. */
  allowedTools?: string[];
  /** `--disallowedTools`: tools taken away from the model. */
  disallowedTools?: string[];
  /** `--system-prompt`: replaces Claude Code's system prompt. */
  systemPrompt?: string;
  /** `--append-system-prompt`. */
  appendSystemPrompt?: string;
  /** `--max-turns`: model calls per turn. */
  maxTurns?: number;
  /** `--mcp-config`: MCP servers by name. */
  mcpServers?: Record<string, ClaudeMcpServer>;
  /** `--settings`: a file path or a settings object. */
  settings?: string | Record<string, unknown>;
  /** `--add-dir`, once per directory. */
  addDirs?: string[];
  shutdown?: ShutdownOptions;
  /** How long to wait for the `initialize` response. Default 60 s. */
  initializeTimeoutMs?: number;
  /** How long to wait for the `interrupt` response. Default 15 s. */
  interruptTimeoutMs?: number;
  /** Longest accepted stdout line. Default 64 MiB (the LineSplitter default). */
  maxLineBytes?: number;
  /** Default timeout of `setPermissionMode` / `setModel`. Default 30 s. */
  controlTimeoutMs?: number;
  /**
   * Local mode with host tools: how long `ready` waits for Claude Code to list them (it connects
   * its MCP servers after its UI is up); then `ready` comes with a `host_tools_not_connected`
   * warning. Default 15 s.
   */
  hostToolsConnectTimeoutMs?: number;
  /** Sees every stdin/stdout line (for recording fixtures, diagnostics). */
  onTraffic?: TrafficTap;
  /** Starts the CLI process; default: a real supervised process. Tests swap in a replay. */
  launcher?: NdjsonLauncher;
}

/** Checks `options` (a session's `engineOptions` or the factory's); throws INVALID_OPTIONS. */
export function parseClaudeOptions(options: unknown): ClaudeEngineOptions {
  return parseEngineOptions('claude', ClaudeOptionsSchema, options) as ClaudeEngineOptions;
}

/**
 * Factory options overlaid with a session's (checked): the session's win, `env` merges key by
 * key, `passEnv` and `extraArgs` add up (factory first).
 */
export function mergeClaudeOptions(factory: ClaudeEngineOptions, fromSession: Record<string, unknown>): ClaudeEngineOptions {
  const session = parseClaudeOptions(fromSession);
  const defined = Object.fromEntries(Object.entries(session).filter(([, v]) => v !== undefined)) as ClaudeEngineOptions;
  const merged: ClaudeEngineOptions = { ...factory, ...defined };
  if (factory.env || session.env) merged.env = { ...factory.env, ...session.env };
  if (factory.passEnv || session.passEnv) merged.passEnv = [...(factory.passEnv ?? []), ...(session.passEnv ?? [])];
  if (factory.extraArgs || session.extraArgs) merged.extraArgs = [...(factory.extraArgs ?? []), ...(session.extraArgs ?? [])];
  return merged;
}

/**
 * A runtime settings change (`session.setModel` / `setPermissionMode`) the CLI can take: any model
 * name (the CLI checks it against the API), a permission mode of {@link CLAUDE_PERMISSION_MODES}.
 * Throws INVALID_INPUT naming the known modes.
 */
export function checkClaudeSettings(settings: EngineSettings): void {
  const mode = settings.permissionMode;
  if (typeof mode === 'string' && !(CLAUDE_PERMISSION_MODES as readonly string[]).includes(mode)) {
    throw new AseError('INVALID_INPUT', `claude engine: permission mode ${JSON.stringify(mode)} is not one of ${CLAUDE_PERMISSION_MODES.join(', ')}`, {
      details: { permissionMode: mode, known: [...CLAUDE_PERMISSION_MODES] },
    });
  }
}

/** The CLI flags for the agent options (everything but the protocol flags the engine always sets). */
export function claudeOptionArgs(o: ClaudeEngineOptions): string[] {
  const args: string[] = [];
  if (o.model !== undefined) args.push('--model', o.model);
  if (o.fallbackModel !== undefined) args.push('--fallback-model', Array.isArray(o.fallbackModel) ? o.fallbackModel.join(',') : o.fallbackModel);
  if (o.permissionMode !== undefined) args.push('--permission-mode', o.permissionMode);
  if (o.allowedTools?.length) args.push('--allowedTools', o.allowedTools.join(','));
  if (o.disallowedTools?.length) args.push('--disallowedTools', o.disallowedTools.join(','));
  if (o.systemPrompt !== undefined) args.push('--system-prompt', o.systemPrompt);
  if (o.appendSystemPrompt !== undefined) args.push('--append-system-prompt', o.appendSystemPrompt);
  if (o.maxTurns !== undefined) args.push('--max-turns', String(o.maxTurns));
  if (o.mcpServers && Object.keys(o.mcpServers).length > 0) args.push('--mcp-config', JSON.stringify({ mcpServers: o.mcpServers }));
  if (o.settings !== undefined) args.push('--settings', typeof o.settings === 'string' ? o.settings : JSON.stringify(o.settings));
  for (const dir of o.addDirs ?? []) args.push('--add-dir', dir);
  args.push(...(o.extraArgs ?? []));
  return args;
}
