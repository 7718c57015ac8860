/**
 * The Codex CLIs as the two Codex engines find them (engines/core/agent-discovery.ts has the
 * order: bin → ASE_CODEX_BIN / ASE_CODEX_MCP_BIN → `codex` on PATH → the npm package), and which
 * version a binary is.
 *
 * The npm package `@openai/codex` is a JS wrapper; the real CLI is a static native binary in an
 * optional platform package (`@openai/codex-<platform>-<arch>/vendor/<triple>/bin/codex`). We spawn
 * the native binary directly, also when `codex` on PATH is that wrapper: the wrapper adds a
 * process (and ~90 ms) and only forwards signals. The app-server engine is tested with
 * `@openai/codex` 0.169.0; the MCP engine with the npm alias `codex-mcp-cli`
 * (= `@openai/codex@0.153.4`, the last release with `codex mcp-server`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AseError } from '../../errors.js';
import { agentNotFound, existingFile, installedPackageDir, packageVersionAt, type AgentCliSpec, type PackageBinary } from '../core/agent-discovery.js';
import { readAgentVersion } from '../core/agent-version.js';

/** app-server protocol version the `codex` engine is built and tested against. */
export const CODEX_APP_SERVER_VERSION = '0.169.0';
/** The `codex-mcp` engine's pin: `codex mcp-server` was removed in 0.154.0. */
export const CODEX_MCP_VERSION = '0.153.4';

/** Every platform Codex ships (the optionalDependencies of `@openai/codex`), with its Rust target triple. */
export const CODEX_PLATFORM_PACKAGES: Readonly<Record<string, { pkg: string; triple: string }>> = {
  'linux-x64': { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'linux-arm64': { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'android-x64': { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'android-arm64': { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'darwin-x64': { pkg: '@openai/codex-darwin-x64', triple: 'x86_64-apple-darwin' },
  'darwin-arm64': { pkg: '@openai/codex-darwin-arm64', triple: 'aarch64-apple-darwin' },
  'win32-x64': { pkg: '@openai/codex-win32-x64', triple: 'x86_64-pc-windows-msvc' },
  'win32-arm64': { pkg: '@openai/codex-win32-arm64', triple: 'aarch64-pc-windows-msvc' },
};

export interface ResolvedCodexBinary {
  /** The native executable. */
  bin: string;
  /** `vendor/<triple>/codex-path` (bundled `rg`), to prepend to PATH, when present. */
  pathDir?: string;
}

function target(): { pkg: string; triple: string } | undefined {
  return CODEX_PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
}

/** The native binary in the platform package (`vendor/<triple>/bin/codex`) resolved from `from` (a package dir) or from here. */
function platformBinary(from: string | undefined): PackageBinary | undefined {
  const t = target();
  if (!t) return undefined;
  // The platform package nests under its main package, or sits beside it; the wrapper looks the same way.
  const dir = installedPackageDir(t.pkg, from) ?? (from && existsSync(join(from, 'vendor', t.triple)) ? from : undefined);
  if (!dir) return undefined;
  const vendor = join(dir, 'vendor', t.triple);
  const path = existingFile(join(vendor, 'bin', process.platform === 'win32' ? 'codex.exe' : 'codex'));
  if (!path) return undefined;
  const pathDir = join(vendor, 'codex-path');
  const version = packageVersionAt(dir);
  return { path, packageName: t.pkg, ...(version !== undefined && { packageVersion: version }), ...(existsSync(pathDir) && { pathDir }) };
}

function fromMainPackage(main: string): PackageBinary | { missing: string } {
  const t = target();
  if (!t) return { missing: `Codex ships no build for ${process.platform}-${process.arch}` };
  const dir = installedPackageDir(main);
  if (!dir) return { missing: `${main} (with ${t.pkg}) not installed` };
  return platformBinary(dir) ?? { missing: `${main} is installed but its platform package ${t.pkg} is not` };
}

const versionCommand = { args: ['--version'], parse: (output: string) => parseCodexVersion(output) } as const;

/** `codex` for the app-server engine. */
export const CODEX_CLI: AgentCliSpec = {
  name: 'codex',
  title: 'Codex',
  envVar: 'ASE_CODEX_BIN',
  commands: ['codex'],
  packageName: '@openai/codex',
  install: 'npm install @openai/codex',
  testedVersion: CODEX_APP_SERVER_VERSION,
  fromPackage: () => fromMainPackage('@openai/codex'),
  packageNames: ['@openai/codex', 'codex-mcp-cli'],
  unwrap: (dir) => platformBinary(dir),
  versionCommand,
};

/** `codex` 0.153.x for the mcp-server engine: a newer `codex` found on PATH is passed over. */
export const CODEX_MCP_CLI: AgentCliSpec = {
  name: 'codex-mcp',
  title: 'Codex (mcp-server)',
  envVar: 'ASE_CODEX_MCP_BIN',
  commands: ['codex'],
  packageName: 'codex-mcp-cli',
  install: `npm install codex-mcp-cli@npm:@openai/codex@${CODEX_MCP_VERSION}`,
  testedVersion: CODEX_MCP_VERSION,
  fromPackage: () => fromMainPackage('codex-mcp-cli'),
  packageNames: ['@openai/codex', 'codex-mcp-cli'],
  unwrap: (dir) => platformBinary(dir),
  versionCommand,
  async accept(location) {
    const { version } = await readAgentVersion(CODEX_MCP_CLI, location);
    if (version === undefined) return undefined; // the engine's preflight reports an unreadable version
    const [major = NaN, minor = NaN] = version.split('.').map(Number);
    return major > 0 || minor >= 154 ? `codex ${version} has no mcp-server (removed in 0.154.0)` : undefined;
  },
};

function resolvePackaged(spec: AgentCliSpec): ResolvedCodexBinary {
  const found = spec.fromPackage();
  if ('missing' in found) throw agentNotFound(spec, [`npm package: ${found.missing}`]);
  return { bin: found.path, ...(found.pathDir !== undefined && { pathDir: found.pathDir }) };
}

/** The `@openai/codex` native binary of the installed npm package (app-server); AGENT_NOT_FOUND when absent. */
export function resolveCodexAppServerBinary(): ResolvedCodexBinary {
  return resolvePackaged(CODEX_CLI);
}

/** The 0.153.4 native binary installed under the npm alias `codex-mcp-cli`; AGENT_NOT_FOUND when absent. */
export function resolveCodexMcpBinary(): ResolvedCodexBinary {
  return resolvePackaged(CODEX_MCP_CLI);
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
