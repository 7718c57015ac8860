/**
 * Helpers for running the real, pinned Codex binaries hermetically in tests, against
 * test/mocks/openai-responses-mock.ts on 127.0.0.1. See /work/shared/reference/codex.md §2.
 *
 * - {@link codexBinary}: the native binary of a pinned version (0.169.0: exec/app-server;
 *   0.153.4: the last one with `mcp-server`) plus its `codex-path` dir (bundled `rg`).
 * - {@link codexAcpBinary}: zed codex-acp 0.16.0 (embeds codex 0.137; reads the same CODEX_HOME).
 * - {@link codexConfigToml} / {@link writeCodexHome}: a CODEX_HOME whose config.toml points a custom
 *   `mock` provider (wire_api="responses", no retries) at the mock, with plugins/analytics off
 *   (without that Codex contacts github.com / chatgpt.com) and the work dir trusted.
 * - {@link hermeticCodexEnv}: the complete env, built from scratch (never a copy of process.env).
 * - {@link hermeticCodex}: all of the above in one call for a per-test root directory.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testRunEnv } from './orphan-check.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The two pinned codex versions (package.json: @openai/codex and the codex-mcp-cli alias). */
export const CODEX_VERSIONS = ['0.169.0', '0.153.4'] as const;
export type CodexVersion = (typeof CODEX_VERSIONS)[number];
export const CODEX_APP_SERVER_VERSION: CodexVersion = '0.169.0';
export const CODEX_MCP_VERSION: CodexVersion = '0.153.4';
export const CODEX_ACP_VERSION = '0.16.0';

/**
 * Model slugs known to each binary's bundled catalog. An unknown slug works but adds a warning
 * item and fallback tool metadata without `apply_patch` (reference §2.1); codex-acp embeds an
 * older catalog, hence gpt-5.4 (reference acp.md §4).
 */
export const CODEX_DEFAULT_MODEL = 'gpt-5.5';
export const CODEX_ACP_DEFAULT_MODEL = 'gpt-5.4';

/**
 * codex-acp's default sandbox mode here: "danger-full-access", not "workspace-write". Its embedded
 * Linux sandbox (codex 0.137's codex-linux-sandbox) needs bubblewrap: a `bwrap` on PATH or a bundled
 * `codex-resources/bwrap` next to the executable. The native @openai/codex packages ship that
 * bundle; @zed-industries/codex-acp 0.16.0 ships only the binary, and this host (and CI) has no
 * system bwrap. So every sandboxed command panics in launcher.rs ("bubblewrap is unavailable: no
 * system bwrap was found on PATH and no bundled codex-resources/bwrap binary was found next to the
 * Codex executable") and exits 101 before running: the tool "completes" as failed and nothing is
 * written. The codex-acp tests are about the ACP protocol (permission prompts come from
 * approval_policy, which still applies), not Codex's sandbox; the sandbox is tested through the
 * native binaries (codex-exec / app-server tests). Pass `sandboxMode` to opt back in.
 */
export const CODEX_ACP_DEFAULT_SANDBOX_MODE: CodexSandboxMode = 'danger-full-access';

/** The env var holding the mock's API key (the provider's `env_key`). */
export const MOCK_API_KEY_VAR = 'MOCK_API_KEY';

export interface CodexBinary {
  version: CodexVersion;
  /** the native `codex` executable */
  bin: string;
  /** `vendor/<triple>/codex-path`: must be on PATH so the bundled `rg` is found */
  pathDir: string;
}

function linuxTriple(): string {
  if (process.platform !== 'linux') throw new Error(`codex-hermetic: only linux is supported here, not ${process.platform}`);
  if (process.arch === 'x64') return 'x86_64-unknown-linux-musl';
  if (process.arch === 'arm64') return 'aarch64-unknown-linux-musl';
  throw new Error(`codex-hermetic: unsupported arch ${process.arch}`);
}

function platformPackage(): string {
  return `codex-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`;
}

function assertExecutable(path: string, what: string): void {
  try {
    accessSync(path, constants.X_OK);
    // Real native binaries are hundreds of MB; anything tiny is a placeholder.
    if (statSync(path).size > 1_000_000) return;
  } catch {
    // reported below
  }
  throw new Error(`${what} not found or not executable at ${path}. Run \`npm install\` (pinned devDependencies).`);
}

/** The pinned native codex binary of `version` (default 0.169.0). Throws a clear error if missing. */
export function codexBinary(version: CodexVersion = CODEX_APP_SERVER_VERSION): CodexBinary {
  const modules =
    version === CODEX_APP_SERVER_VERSION
      ? join(repoRoot, 'node_modules')
      : join(repoRoot, 'node_modules', 'codex-mcp-cli', 'node_modules');
  const vendor = join(modules, '@openai', platformPackage(), 'vendor', linuxTriple());
  const bin = join(vendor, 'bin', 'codex');
  assertExecutable(bin, `codex ${version}`);
  return { version, bin, pathDir: join(vendor, 'codex-path') };
}

/** The pinned zed codex-acp 0.16.0 native binary. */
export function codexAcpBinary(): string {
  const bin = join(repoRoot, 'node_modules', '@zed-industries', `codex-acp-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`, 'bin', 'codex-acp');
  assertExecutable(bin, `codex-acp ${CODEX_ACP_VERSION}`);
  return bin;
}

export type CodexApprovalPolicy = 'never' | 'on-request' | 'on-failure' | 'untrusted';
export type CodexSandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';

export interface CodexConfigOptions {
  /** the mock's provider base URL, `http://127.0.0.1:<port>/v1` (mock.providerBaseUrl) */
  baseUrl: string;
  /** default {@link CODEX_DEFAULT_MODEL} */
  model?: string;
  /** default "never" (no approvals asked); codex 0.153.4 mcp `codex` tool accepts only never|on-request */
  approvalPolicy?: CodexApprovalPolicy;
  /** default "workspace-write" (hermeticCodex with target 'codex-acp': {@link CODEX_ACP_DEFAULT_SANDBOX_MODE}) */
  sandboxMode?: CodexSandboxMode;
  /** directories written as `[projects."<dir>"] trust_level = "trusted"` */
  trustedDirs?: string[];
  /** default {@link MOCK_API_KEY_VAR} */
  envKey?: string;
  /** ms; default 20000 */
  streamIdleTimeoutMs?: number;
  /**
   * Extra `[features]` flags, merged over the defaults (`plugins=false`, `remote_plugin=false`,
   * `apps=false`). Unknown flags are ignored by older binaries with a warning.
   */
  features?: Record<string, boolean>;
  /** raw TOML appended at the end (top-level keys must not follow a table: use `extraTopLevelToml`) */
  extraToml?: string;
  /** raw TOML inserted among the top-level keys (before any table) */
  extraTopLevelToml?: string;
}

const tomlString = (value: string) => JSON.stringify(value); // TOML basic strings share JSON's escapes

/** The config.toml text for a hermetic CODEX_HOME (reference §2.1). */
export function codexConfigToml(options: CodexConfigOptions): string {
  const features = { plugins: false, remote_plugin: false, apps: false, ...options.features };
  const lines = [
    `model = ${tomlString(options.model ?? CODEX_DEFAULT_MODEL)}`,
    `model_provider = "mock"`,
    `approval_policy = ${tomlString(options.approvalPolicy ?? 'never')}`,
    `sandbox_mode = ${tomlString(options.sandboxMode ?? 'workspace-write')}`,
    `check_for_update_on_startup = false`,
    `web_search = "disabled"`,
    ...(options.extraTopLevelToml ? [options.extraTopLevelToml] : []),
    '',
    '[model_providers.mock]',
    'name = "Mock Responses"',
    `base_url = ${tomlString(options.baseUrl)}`,
    `env_key = ${tomlString(options.envKey ?? MOCK_API_KEY_VAR)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    `stream_idle_timeout_ms = ${options.streamIdleTimeoutMs ?? 20_000}`,
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[features]',
    ...Object.entries(features).map(([k, v]) => `${k} = ${v}`),
  ];
  for (const dir of options.trustedDirs ?? []) lines.push('', `[projects.${tomlString(dir)}]`, 'trust_level = "trusted"');
  if (options.extraToml) lines.push('', options.extraToml);
  return lines.join('\n') + '\n';
}

/** Creates `codexHome` (if needed) and writes its config.toml; returns the config path. */
export function writeCodexHome(codexHome: string, options: CodexConfigOptions): string {
  mkdirSync(codexHome, { recursive: true });
  const path = join(codexHome, 'config.toml');
  writeFileSync(path, codexConfigToml(options));
  return path;
}

export interface HermeticCodexEnvOptions {
  home: string;
  codexHome: string;
  tmp: string;
  /** directories put before /usr/local/bin:/usr/bin:/bin (e.g. the binary's codex-path) */
  pathDirs?: string[];
  /** default {@link MOCK_API_KEY_VAR} */
  envKey?: string;
  /** default "dummy" */
  apiKey?: string;
  /** e.g. `{ RUST_LOG: 'warn' }` */
  extra?: Record<string, string>;
}

/**
 * The complete environment for a codex / codex-acp process, built from scratch: HOME, CODEX_HOME,
 * PATH (must contain bash), TMPDIR, the API key var, the suite's orphan-check marker.
 */
export function hermeticCodexEnv(options: HermeticCodexEnvOptions): Record<string, string> {
  return {
    PATH: [...(options.pathDirs ?? []), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: options.home,
    CODEX_HOME: options.codexHome,
    TMPDIR: options.tmp,
    LANG: 'C.UTF-8',
    [options.envKey ?? MOCK_API_KEY_VAR]: options.apiKey ?? 'dummy',
    ...options.extra,
    ...testRunEnv(),
  };
}

export type CodexTarget = CodexVersion | 'codex-acp';

export interface HermeticCodexOptions extends Omit<CodexConfigOptions, 'baseUrl' | 'trustedDirs'> {
  /** per-test temp directory; `home`, `codex-home`, `tmp` and `work` are created below it */
  root: string;
  /** the mock's provider base URL (mock.providerBaseUrl) */
  baseUrl: string;
  /** which binary (default 0.169.0); 'codex-acp' picks the zed binary and its default model */
  target?: CodexTarget;
  /** work dir (default `<root>/work`); always trusted */
  workDir?: string;
  /** more trusted dirs */
  trustedDirs?: string[];
  /** extra env entries (e.g. RUST_LOG) */
  extraEnv?: Record<string, string>;
}

export interface HermeticCodex {
  target: CodexTarget;
  /** executable to spawn (native codex, or codex-acp) */
  bin: string;
  home: string;
  codexHome: string;
  tmp: string;
  workDir: string;
  configPath: string;
  /** `<codexHome>/sessions`: where rollouts land */
  sessionsDir: string;
  env: Record<string, string>;
}

/**
 * One call for a test: resolves the binary, creates home / CODEX_HOME (config.toml) / tmp / work
 * under `root`, and returns the from-scratch env. The workdir is trusted.
 */
export function hermeticCodex(options: HermeticCodexOptions): HermeticCodex {
  const { root, target = CODEX_APP_SERVER_VERSION, workDir = join(root, 'work'), trustedDirs = [], extraEnv, ...config } = options;
  const home = join(root, 'home');
  const codexHome = join(root, 'codex-home');
  const tmp = join(root, 'tmp');
  for (const dir of [home, codexHome, tmp, workDir]) mkdirSync(dir, { recursive: true });
  const native = target === 'codex-acp' ? undefined : codexBinary(target);
  const bin = native?.bin ?? codexAcpBinary();
  const configPath = writeCodexHome(codexHome, {
    ...config,
    model: config.model ?? (target === 'codex-acp' ? CODEX_ACP_DEFAULT_MODEL : CODEX_DEFAULT_MODEL),
    sandboxMode: config.sandboxMode ?? (target === 'codex-acp' ? CODEX_ACP_DEFAULT_SANDBOX_MODE : 'workspace-write'),
    trustedDirs: [workDir, ...trustedDirs],
  });
  const env = hermeticCodexEnv({
    home,
    codexHome,
    tmp,
    pathDirs: native ? [native.pathDir] : [],
    ...(config.envKey ? { envKey: config.envKey } : {}),
    ...(extraEnv ? { extra: extraEnv } : {}),
  });
  return { target, bin, home, codexHome, tmp, workDir, configPath, sessionsDir: join(codexHome, 'sessions'), env };
}

/** All rollout files under `<codexHome>/sessions` (recursive), sorted by path. */
export function findRollouts(codexHome: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/^rollout-.*\.jsonl$/.test(entry.name)) out.push(path);
    }
  };
  walk(join(codexHome, 'sessions'));
  return out.sort();
}
