/**
 * Options shared by the two Codex engines (`codex` = app-server, `codex-mcp` = mcp-server): the
 * typed, validated `engineOptions` (zod, strict: an unknown key is refused with the known ones
 * listed), the environment Codex gets by default, and how factory options and a session's combine.
 *
 * The agent options map onto each protocol (checked against the pinned CLIs' generated app-server
 * types and mcp-server's `tools/list` schema, reference codex.md §4.2):
 *
 * | option                | app-server (`thread/start`, `thread/resume`) | mcp-server (`tools/call codex`) |
 * |-----------------------|----------------------------------------------|---------------------------------|
 * | model                 | `model`                                      | `model`                         |
 * | sandbox               | `sandbox` (read-only, workspace-write, danger-full-access) | `sandbox`         |
 * | approvalPolicy        | `approvalPolicy` (untrusted, on-request, never) | `approval-policy` (on-request, never only) |
 * | baseInstructions      | `baseInstructions`                           | `base-instructions`             |
 * | developerInstructions | `developerInstructions`                      | `developer-instructions`        |
 * | config                | `-c key=value` on the command line           | `-c key=value`                  |
 * | extraArgs             | after `app-server`                           | after `mcp-server`              |
 */
import { z } from 'zod';
import { AseError } from '../../errors.js';
import type { EngineSettings } from '../../events/engine-input.js';
import { COMMON_ENGINE_OPTIONS, fn, parseEngineOptions } from '../core/engine-options.js';
import { CODEX_AGENT_ENV_ALLOW, DEFAULT_ENV_ALLOW, NETWORK_ENV_ALLOW } from '../transport/env.js';
import type { ShutdownOptions } from '../transport/process-supervisor.js';
import type { TrafficTap } from '../transport/traffic.js';
import type { NdjsonLauncher } from '../transport/ndjson-process.js';

export const CODEX_APPROVAL_POLICIES = ['untrusted', 'on-request', 'never'] as const;
export const CODEX_SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
export type CodexApprovalPolicy = (typeof CODEX_APPROVAL_POLICIES)[number];
export type CodexSandboxMode = (typeof CODEX_SANDBOX_MODES)[number];

/**
 * Variables a Codex process inherits from the host by default (names and PREFIX* patterns): the
 * generic base, proxies / CAs / XDG, and Codex's own (`OPENAI_*`, `CODEX_*`, `RUST_LOG`).
 */
export const CODEX_ENV_ALLOW: readonly string[] = [...DEFAULT_ENV_ALLOW, ...NETWORK_ENV_ALLOW, ...CODEX_AGENT_ENV_ALLOW];

/** Where Codex takes credentials and endpoints from (a `codex login` lives in CODEX_HOME/auth.json). */
export const CODEX_CREDENTIAL_VARS: readonly string[] = ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_ACCESS_TOKEN', 'OPENAI_BASE_URL', 'CODEX_HOME'];

export interface CodexEngineOptions {
  /** The codex executable. Default: discovered (ASE_CODEX_BIN, `codex` on PATH, the npm package). */
  bin?: string;
  /** Variables set on top of the inherited host environment (e.g. CODEX_HOME, an API key). */
  env?: Record<string, string>;
  /** Host variables inherited on top of the defaults ({@link CODEX_ENV_ALLOW}), by name or `PREFIX*`. */
  passEnv?: string[];
  /**
   * @deprecated Use `passEnv` (adds to the defaults). When given, replaces the default list of
   * inherited host variables (then `passEnv` adds to it).
   */
  envAllow?: readonly string[];
  /** Arguments appended after `app-server` / `mcp-server`. */
  extraArgs?: readonly string[];
  /** `-c key=value` overrides (dotted keys, JSON-like values encoded as TOML). */
  config?: Record<string, unknown>;
  /** Approval policy for the thread. Default: whatever config.toml says (Codex: on-request). mcp-server: on-request or never. */
  approvalPolicy?: CodexApprovalPolicy;
  /** Sandbox mode for the thread. Default: whatever config.toml says. */
  sandbox?: CodexSandboxMode;
  /** Model slug. Default: config.toml's `model`. */
  model?: string;
  /** Replaces Codex's base instructions for new threads. */
  baseInstructions?: string;
  /** Extra developer instructions for new threads. */
  developerInstructions?: string;
  /** Stop ladder timings (stdin end → SIGTERM → SIGKILL of the process group). */
  shutdown?: ShutdownOptions;
  /** Wait for the handshake (initialize … thread ready). Default 60 s. */
  initializeTimeoutMs?: number;
  /** Wait for an ordinary request's response. Default 60 s. */
  requestTimeoutMs?: number;
  /** Wait for an interrupt to end the turn. Default 15 s. */
  interruptTimeoutMs?: number;
  /** Longest accepted stdout line. Default 64 MiB. */
  maxLineBytes?: number;
  /**
   * Sees every stdin/stdout line as it crossed the pipe (fixture recording, diagnostics); a tap
   * that throws is ignored.
   */
  onTraffic?: TrafficTap;
  /** Testing hook: replaces process spawning (e.g. with a recorded-traffic replayer). */
  launcher?: NdjsonLauncher;
  /**
   * How the `codex` (app-server) engine offers the session's host tools (`createSession({tools})`):
   * `dynamic` (default) as `thread/start.dynamicTools`, called through `item/tool/call` (experimental
   * API, see docs/engines.md); `mcp` through the loopback MCP server (the tools are then deferred
   * behind Codex's `tool_search`). `codex-exec` always uses the loopback server.
   */
  hostTools?: 'dynamic' | 'mcp';
  /**
   * Local mode with host tools: how long `ready` waits for Codex's terminal UI to list them (it
   * connects its MCP servers after it takes input); then `ready` comes with a
   * `host_tools_not_connected` warning. Default 15 s.
   */
  hostToolsConnectTimeoutMs?: number;
}

const ms = z.number().positive();
const grace = z.number().nonnegative();

const SHARED = {
  ...COMMON_ENGINE_OPTIONS,
  envAllow: z.array(z.string().min(1)).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  sandbox: z.enum(CODEX_SANDBOX_MODES).optional(),
  model: z.string().min(1).optional(),
  baseInstructions: z.string().optional(),
  developerInstructions: z.string().optional(),
  shutdown: z.object({ stdinGraceMs: grace.optional(), termGraceMs: grace.optional(), killWaitMs: grace.optional() }).optional(),
  initializeTimeoutMs: ms.optional(),
  requestTimeoutMs: ms.optional(),
  interruptTimeoutMs: ms.optional(),
  maxLineBytes: ms.optional(),
  onTraffic: fn<TrafficTap>('onTraffic').optional(),
  launcher: fn<NdjsonLauncher>('launcher').optional(),
};

/** The options of the `codex` (app-server) engine. */
export const CodexOptionsSchema = z.object({
  ...SHARED,
  approvalPolicy: z.enum(CODEX_APPROVAL_POLICIES).optional(),
  hostTools: z.enum(['dynamic', 'mcp']).optional(),
  hostToolsConnectTimeoutMs: z.number().int().positive().optional(),
});

/** The options of the `codex-mcp` engine: its `approval-policy` knows only on-request and never. */
export const CodexMcpOptionsSchema = z.object({
  ...SHARED,
  approvalPolicy: z.enum(['on-request', 'never'], { error: "mcp-server accepts approvalPolicy 'on-request' or 'never' ('untrusted' is an app-server policy)" }).optional(),
  onSessionNotFound: z.enum(['fail', 'new-thread']).optional(),
  allowUntestedVersion: z.boolean().optional(),
});

/**
 * The options of the `codex-exec` engine (driven tier: one `codex exec --json` per turn). The
 * approval policy goes to `-c approval_policy=…`; exec never asks, so anything that would need an
 * approval is refused by Codex itself. Timeouts of the JSON-RPC engines do not apply.
 */
export const CodexExecOptionsSchema = z.object({
  ...COMMON_ENGINE_OPTIONS,
  envAllow: SHARED.envAllow,
  config: SHARED.config,
  sandbox: SHARED.sandbox,
  model: SHARED.model,
  approvalPolicy: z.enum(CODEX_APPROVAL_POLICIES).optional(),
  shutdown: SHARED.shutdown,
  maxLineBytes: SHARED.maxLineBytes,
  onTraffic: SHARED.onTraffic,
  launcher: SHARED.launcher,
});

/** The schema of `engine` ('codex', 'codex-mcp' or 'codex-exec'). */
export function codexOptionsSchema(engine: string): typeof CodexOptionsSchema | typeof CodexMcpOptionsSchema | typeof CodexExecOptionsSchema {
  return engine === 'codex-mcp' ? CodexMcpOptionsSchema : engine === 'codex-exec' ? CodexExecOptionsSchema : CodexOptionsSchema;
}

/**
 * Factory options overlaid with the session's `engineOptions` (which win; `env` and `config` are
 * merged key by key, `passEnv` and `extraArgs` add up). Unknown or malformed keys are INVALID_OPTIONS.
 */
export function mergeCodexOptions<T extends CodexEngineOptions>(engine: string, base: T, fromSession: Record<string, unknown>): T {
  const session = parseEngineOptions(engine, codexOptionsSchema(engine), fromSession) as Partial<T>;
  const defined = Object.fromEntries(Object.entries(session).filter(([, v]) => v !== undefined));
  return {
    ...base,
    ...defined,
    env: { ...base.env, ...session.env },
    config: { ...base.config, ...session.config },
    ...((base.passEnv || session.passEnv) && { passEnv: [...(base.passEnv ?? []), ...(session.passEnv ?? [])] }),
    ...((base.extraArgs || session.extraArgs) && { extraArgs: [...(base.extraArgs ?? []), ...(session.extraArgs ?? [])] }),
  };
}

/**
 * A runtime settings change (`session.setModel` / `setPermissionMode`) for `engine`: the permission
 * mode is Codex's approval policy (app-server: untrusted, on-request, never). Throws INVALID_INPUT
 * naming the known ones. Any model name passes (Codex checks it against its catalog).
 */
export function checkCodexSettings(engine: string, settings: EngineSettings): void {
  const policy = settings.permissionMode;
  const known: readonly string[] = engine === 'codex-mcp' ? ['on-request', 'never'] : CODEX_APPROVAL_POLICIES;
  if (typeof policy === 'string' && !known.includes(policy)) {
    throw new AseError('INVALID_INPUT', `${engine} engine: permission mode (approval policy) ${JSON.stringify(policy)} is not one of ${known.join(', ')}`, {
      details: { permissionMode: policy, known: [...known] },
    });
  }
}

/** The host variables a Codex process inherits: `envAllow` (deprecated) or the defaults, plus `passEnv`. */
export function codexEnvAllow(options: CodexEngineOptions): string[] {
  return [...(options.envAllow ?? CODEX_ENV_ALLOW), ...(options.passEnv ?? [])];
}
