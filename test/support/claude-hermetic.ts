/**
 * Helpers for running the real, pinned Claude Code CLI hermetically in tests.
 * See docs of the team reference "claude-stream-json.md" §3 (hermetic recipe).
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testRunEnv } from './orphan-check.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The exact CLI version pinned in package.json devDependencies. */
export const CLAUDE_PINNED_VERSION = '2.1.330';

/**
 * Path to the native CLI binary of the pinned platform package
 * (`@anthropic-ai/claude-code-<platform>-<arch>/claude`, falling back to the `-musl` variant on
 * Linux). The `bin/claude.exe` of the main package is only a stub unless its postinstall ran, so
 * it is deliberately not used. Throws a clear error if the binary is missing.
 */
export function claudeBinary(): string {
  const base = `${process.platform}-${process.arch}`;
  const candidates = [base, ...(process.platform === 'linux' ? [`${base}-musl`] : [])].map((suffix) =>
    join(repoRoot, 'node_modules', '@anthropic-ai', `claude-code-${suffix}`, process.platform === 'win32' ? 'claude.exe' : 'claude'),
  );
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      // A real native binary is hundreds of MB; anything tiny is a placeholder.
      if (statSync(candidate).size > 1_000_000) return candidate;
    } catch {
      // try the next candidate
    }
  }
  throw new Error(
    `Claude Code CLI binary not found (looked for ${candidates.join(', ')}). ` +
      `Run \`npm install\` (devDependency @anthropic-ai/claude-code@${CLAUDE_PINNED_VERSION} with its optional platform package).`,
  );
}

export interface HermeticClaudeEnvOptions {
  /** port of the mock Messages API on 127.0.0.1 */
  port: number;
  /** per-test temp directory; home/config/tmp/xdg dirs are created below it */
  root: string;
}

/**
 * Creates `home`, `config`, `tmp` and `xdg/{config,cache,data,state}` under `root` and returns
 * the complete environment for the CLI — built from scratch, never a copy of `process.env` — with
 * the suite's orphan-check marker.
 */
export function hermeticClaudeEnv({ port, root }: HermeticClaudeEnvOptions): Record<string, string> {
  const dirs = {
    home: join(root, 'home'),
    config: join(root, 'config'),
    tmp: join(root, 'tmp'),
    xdgConfig: join(root, 'xdg', 'config'),
    xdgCache: join(root, 'xdg', 'cache'),
    xdgData: join(root, 'xdg', 'data'),
    xdgState: join(root, 'xdg', 'state'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: dirs.home,
    CLAUDE_CONFIG_DIR: dirs.config,
    TMPDIR: dirs.tmp,
    CLAUDE_CODE_TMPDIR: dirs.tmp,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_CACHE_HOME: dirs.xdgCache,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_STATE_HOME: dirs.xdgState,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: 'dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  if (typeof process.getuid === 'function' && process.getuid() === 0) env.IS_SANDBOX = '1';
  return { ...env, ...testRunEnv() };
}
