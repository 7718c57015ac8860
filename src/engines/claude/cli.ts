/**
 * The Claude Code CLI as the claude engine finds it (engines/core/agent-discovery.ts has the order:
 * bin → ASE_CLAUDE_BIN → `claude` on PATH → the npm package), which version it is tested against,
 * and what it reads from the environment: the variables passed by default and the ones that hold
 * credentials (for `ase doctor` and for the hint an `auth` error carries).
 *
 * The npm package `@anthropic-ai/claude-code` is a placeholder whose postinstall copies the native
 * binary of an optional platform package over `bin/claude.exe`; we spawn the platform package's
 * binary directly (the copy is the same file, and a stub when install scripts were skipped).
 */
import { join } from 'node:path';
import { existingFile, installedPackageDir, packageVersionAt, platformKey, type AgentCliSpec, type PackageBinary } from '../core/agent-discovery.js';
import { CLAUDE_ENV_ALLOW, DEFAULT_ENV_ALLOW, NETWORK_ENV_ALLOW } from '../transport/env.js';

/** The Claude Code version this engine is built and tested against (the exact devDependency). */
export const CLAUDE_CODE_VERSION = '2.1.330';

const PACKAGE = '@anthropic-ai/claude-code';

/** Every platform package the CLI ships (its optionalDependencies, plus the Android builds its installer knows). */
export const CLAUDE_PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'darwin-arm64': `${PACKAGE}-darwin-arm64`,
  'darwin-x64': `${PACKAGE}-darwin-x64`,
  'linux-x64': `${PACKAGE}-linux-x64`,
  'linux-arm64': `${PACKAGE}-linux-arm64`,
  'linux-x64-musl': `${PACKAGE}-linux-x64-musl`,
  'linux-arm64-musl': `${PACKAGE}-linux-arm64-musl`,
  'android-arm64': `${PACKAGE}-linux-arm64-android`,
  'android-x64': `${PACKAGE}-linux-x64-android`,
  'win32-x64': `${PACKAGE}-win32-x64`,
  'win32-arm64': `${PACKAGE}-win32-arm64`,
};

/** Platform packages to try for this process, best first (musl Linux prefers the musl build). */
function platformPackages(): string[] {
  const { key, musl } = platformKey();
  const plain = CLAUDE_PLATFORM_PACKAGES[key];
  const muslPkg = CLAUDE_PLATFORM_PACKAGES[`${key}-musl`];
  return (musl ? [muslPkg, plain] : [plain, muslPkg]).filter((p): p is string => p !== undefined);
}

function platformBinary(from?: string): PackageBinary | undefined {
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  for (const pkg of platformPackages()) {
    const dir = installedPackageDir(pkg, from);
    const path = dir && existingFile(join(dir, exe));
    if (dir && path) return { path, packageName: pkg, ...versionOf(dir) };
  }
  return undefined;
}

function versionOf(dir: string): { packageVersion?: string } {
  const version = packageVersionAt(dir);
  return version === undefined ? {} : { packageVersion: version };
}

export const CLAUDE_CLI: AgentCliSpec = {
  name: 'claude',
  title: 'Claude Code',
  envVar: 'ASE_CLAUDE_BIN',
  commands: ['claude'],
  packageName: PACKAGE,
  install: `npm install ${PACKAGE}`,
  testedVersion: CLAUDE_CODE_VERSION,
  fromPackage() {
    const found = platformBinary();
    if (found) return found;
    const wanted = platformPackages();
    return wanted.length === 0
      ? { missing: `${PACKAGE} ships no build for ${process.platform}-${process.arch}` }
      : { missing: `${wanted.join(' or ')} not installed` };
  },
  packageNames: [PACKAGE],
  // `claude` on PATH from an npm install is bin/claude.exe: the platform binary beside it is the same CLI.
  unwrap: (dir) => platformBinary(dir),
  versionCommand: { args: ['--version'], parse: (output) => /(\d+\.\d+\.\d+(?:-[\w.]+)?)\s*\(Claude Code\)/.exec(output)?.[1] },
};

/** Variables the claude engine passes from the host by default (names and PREFIX* patterns). */
export const CLAUDE_DEFAULT_PASS_ENV: readonly string[] = [...DEFAULT_ENV_ALLOW, ...NETWORK_ENV_ALLOW, ...CLAUDE_ENV_ALLOW];

/** The variables an `auth` error names first: where Claude Code takes an API key or token from, or a provider switch. */
export const CLAUDE_AUTH_VARS: readonly string[] = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'CLAUDE_CODE_USE_FOUNDRY'];

/**
 * Where Claude Code takes credentials and endpoints from: the Anthropic API (key, token, gateway),
 * a subscription token, Bedrock, Vertex, Foundry, and the config directory a `/login` lives in.
 */
export const CLAUDE_CREDENTIAL_VARS: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CONFIG_DIR',
  'CLAUDE_CODE_USE_BEDROCK',
  'AWS_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_BEARER_TOKEN_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'ANTHROPIC_VERTEX_PROJECT_ID',
  'CLOUD_ML_REGION',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'CLAUDE_CODE_USE_FOUNDRY',
  'ANTHROPIC_FOUNDRY_API_KEY',
];
