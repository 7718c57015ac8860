/**
 * Where the pinned Codex binaries live and which version a binary is.
 *
 * The npm package `@openai/codex` is a JS wrapper; the real CLI is a static native binary in an
 * optional platform package (`@openai/codex-<platform>-<arch>/vendor/<triple>/bin/codex`). We spawn
 * the native binary directly: the wrapper adds a process (and ~90 ms) and only forwards signals.
 * The app-server engine uses `@openai/codex` (0.169.0); the MCP engine uses the npm alias
 * `codex-mcp-cli` (= `@openai/codex@0.153.4`, the last release with `codex mcp-server`).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { AseError } from '../../errors.js';

/** app-server protocol version the `codex` engine is built and tested against. */
export const CODEX_APP_SERVER_VERSION = '0.169.0';
/** The `codex-mcp` engine's pin: `codex mcp-server` was removed in 0.154.0. */
export const CODEX_MCP_VERSION = '0.153.4';

const TARGETS: Record<string, { pkg: string; triple: string }> = {
  'linux-x64': { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'linux-arm64': { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'darwin-x64': { pkg: '@openai/codex-darwin-x64', triple: 'x86_64-apple-darwin' },
  'darwin-arm64': { pkg: '@openai/codex-darwin-arm64', triple: 'aarch64-apple-darwin' },
};

export interface ResolvedCodexBinary {
  /** The native executable. */
  bin: string;
  /** `vendor/<triple>/codex-path` (bundled `rg`), to prepend to PATH, when present. */
  pathDir?: string;
}

function platformTarget(engine: string): { pkg: string; triple: string } {
  const target = TARGETS[`${process.platform}-${process.arch}`];
  if (!target) {
    throw new AseError('ENGINE_START_FAILED', `${engine} engine: no pinned Codex binary for ${process.platform}-${process.arch}; pass one with the \`bin\` option`);
  }
  return target;
}

function resolveFrom(engine: string, requireFrom: NodeJS.Require, hint: string): ResolvedCodexBinary {
  const { pkg, triple } = platformTarget(engine);
  let pkgJson: string;
  try {
    pkgJson = requireFrom.resolve(`${pkg}/package.json`);
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `${engine} engine: ${pkg} is not installed (${hint}, or pass a binary with the \`bin\` option)`, { cause: error });
  }
  const vendor = join(dirname(pkgJson), 'vendor', triple);
  const bin = join(vendor, 'bin', 'codex');
  try {
    accessSync(bin, constants.X_OK);
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `${engine} engine: the Codex binary ${bin} is missing or not executable`, { cause: error });
  }
  const pathDir = join(vendor, 'codex-path');
  return { bin, ...(existsSync(pathDir) && { pathDir }) };
}

/** The pinned `@openai/codex` 0.169.0 native binary (app-server). */
export function resolveCodexAppServerBinary(): ResolvedCodexBinary {
  return resolveFrom('codex', createRequire(import.meta.url), `install @openai/codex@${CODEX_APP_SERVER_VERSION} with its optional platform package`);
}

/** The pinned 0.153.4 native binary, installed under the npm alias `codex-mcp-cli`. */
export function resolveCodexMcpBinary(): ResolvedCodexBinary {
  const hint = `install codex-mcp-cli@npm:@openai/codex@${CODEX_MCP_VERSION} with its optional platform package`;
  let aliasPkg: string;
  try {
    aliasPkg = createRequire(import.meta.url).resolve('codex-mcp-cli/package.json');
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `codex-mcp engine: codex-mcp-cli is not installed (${hint}, or pass a binary with the \`bin\` option)`, { cause: error });
  }
  // The alias nests its own platform package; resolve from inside it, not from the top level
  // (which holds the 0.169.0 one).
  return resolveFrom('codex-mcp', createRequire(aliasPkg), hint);
}

/** Parses `codex --version` output (`codex-cli 0.153.4`) into the version string. */
export function parseCodexVersion(output: string): string | undefined {
  return /codex-cli\s+(\d+\.\d+\.\d+(?:[-+][\w.-]+)?)/.exec(output)?.[1];
}

/** Runs `bin --version` with `env` and returns the version. Rejects with ENGINE_START_FAILED. */
export function probeCodexVersion(engine: string, bin: string, env: Record<string, string>, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--version'], { env, timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8' }, (error, stdout, stderr) => {
      const version = parseCodexVersion(stdout);
      if (error || !version) {
        const why = error ? error.message : `unexpected output ${JSON.stringify(stdout.trim())}`;
        reject(new AseError('ENGINE_START_FAILED', `${engine} engine: \`${bin} --version\` failed: ${why}${stderr.trim() ? `; stderr: ${stderr.trim().slice(-400)}` : ''}`, { cause: error ?? undefined }));
        return;
      }
      resolve(version);
    });
  });
}

/**
 * Why `version` cannot run the `codex-mcp` engine, or undefined when it can. `codex mcp-server`
 * was removed in 0.154.0 (on later versions the word is taken as a TUI prompt and the process
 * dies with "stdin is not a terminal"), so those are always refused; other versions than the pin
 * only with `allowUntested` (the event stream changes between releases).
 */
export function mcpVersionProblem(version: string, allowUntested = false): string | undefined {
  const [major = NaN, minor = NaN] = version.split('.').map(Number);
  if (major > 0 || minor >= 154) return `codex ${version} has no \`mcp-server\` (removed in 0.154.0); use the \`codex\` (app-server) engine or codex ${CODEX_MCP_VERSION}`;
  if (version !== CODEX_MCP_VERSION && !allowUntested) return `codex ${version} is not the supported version ${CODEX_MCP_VERSION} (set allowUntestedVersion to try it anyway)`;
  return undefined;
}
