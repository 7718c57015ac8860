/**
 * Options shared by the two Codex engines (`codex` = app-server, `codex-mcp` = mcp-server), and
 * how factory options and per-session `engineOptions` combine.
 */
import { z } from 'zod';
import { AseError } from '../../errors.js';
import { DEFAULT_ENV_ALLOW } from '../transport/env.js';
import type { ShutdownOptions } from '../transport/process-supervisor.js';
import type { TrafficTap } from '../transport/traffic.js';
import type { NdjsonLauncher } from '../transport/ndjson-process.js';

export type CodexApprovalPolicy = 'untrusted' | 'on-request' | 'never';
export type CodexSandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';

/**
 * Variables a Codex process inherits from the host when set (everything else is dropped):
 * the generic allow-list plus Codex's own home, API-key variables, TLS and proxy settings.
 */
export const CODEX_ENV_ALLOW: readonly string[] = [
  ...DEFAULT_ENV_ALLOW,
  'CODEX_HOME',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  'RUST_LOG',
];

export interface CodexEngineOptions {
  /** The native codex executable. Default: the pinned platform binary (see binary.ts). */
  bin?: string;
  /** Variables set on top of the allow-listed host environment (e.g. CODEX_HOME, an API key). */
  env?: Record<string, string>;
  /** Host variables inherited when set. Default {@link CODEX_ENV_ALLOW}. */
  envAllow?: readonly string[];
  /** `-c key=value` overrides (dotted keys, JSON-like values encoded as TOML). */
  config?: Record<string, unknown>;
  /** Approval policy for the thread. Default: whatever config.toml says (Codex: on-request). */
  approvalPolicy?: CodexApprovalPolicy;
  /** Sandbox mode for the thread. Default: whatever config.toml says. */
  sandbox?: CodexSandboxMode;
  /** Model slug. Default: config.toml's `model`. */
  model?: string;
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
}

/** The JSON-able subset accepted from `createSession({ engineOptions })`. */
export const CodexSessionOptionsSchema = z.object({
  bin: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  approvalPolicy: z.enum(['untrusted', 'on-request', 'never']).optional(),
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
  model: z.string().min(1).optional(),
  developerInstructions: z.string().optional(),
  initializeTimeoutMs: z.number().positive().optional(),
  requestTimeoutMs: z.number().positive().optional(),
  interruptTimeoutMs: z.number().positive().optional(),
});

/**
 * Factory options overlaid with the session's `engineOptions` (which win; `env` and `config`
 * are merged key by key). Unknown keys are ignored; malformed known keys are INVALID_OPTIONS.
 */
export function mergeCodexOptions<T extends CodexEngineOptions>(engine: string, base: T, fromSession: Record<string, unknown>): T {
  const parsed = CodexSessionOptionsSchema.safeParse(fromSession);
  if (!parsed.success) {
    throw new AseError('INVALID_OPTIONS', `${engine} engine: invalid engineOptions: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, {
      cause: parsed.error,
    });
  }
  const session = parsed.data;
  const defined = Object.fromEntries(Object.entries(session).filter(([, v]) => v !== undefined));
  return {
    ...base,
    ...defined,
    env: { ...base.env, ...session.env },
    config: { ...base.config, ...session.config },
  };
}
