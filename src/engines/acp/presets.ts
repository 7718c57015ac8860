/**
 * Agent presets: the ACP agents we know, how the engine finds each (engines/core/agent-discovery.ts:
 * bin → ASE_GEMINI_BIN / ASE_CODEX_ACP_BIN / … → the command on PATH → the npm package), which
 * version it is tested against, what it reads from the environment, and per-agent process
 * settings. No shell, no npx, no `node_modules/.bin` wrapper: a launcher script found on PATH is
 * replaced by what it would run. Anything else runs through the engine's `command`/`args` options.
 *
 * Node-based agents run with `process.execPath` (the host's Node), and that Node's directory goes
 * first on the agent's PATH: claude-code-acp spawns `node` for its bundled Claude Code, which must
 * not pick up an older system Node.
 */
import { join } from 'node:path';
import { AseError } from '../../errors.js';
import { agentNotFound, existingFile, installedPackageDir, packageVersionAt, type AgentCliSpec, type PackageBinary } from '../core/agent-discovery.js';
import { CLAUDE_ENV_ALLOW, CODEX_AGENT_ENV_ALLOW, GEMINI_ENV_ALLOW } from '../transport/env.js';
import type { ShutdownOptions } from '../transport/process-supervisor.js';

export const ACP_PRESET_NAMES = ['gemini', 'codex-acp', 'claude-code-acp', 'claude-agent-acp', 'opencode', 'qwen', 'copilot'] as const;
export type AcpPresetName = (typeof ACP_PRESET_NAMES)[number];

export interface AcpPreset {
  readonly name: AcpPresetName;
  readonly description: string;
  /** The npm package that provides the agent (for error messages). */
  readonly packageName: string;
  /** How the engine finds the agent, and its tested version. */
  readonly cli: AgentCliSpec;
  /** Arguments after the executable (`--acp` for Gemini). */
  readonly args: readonly string[];
  /**
   * The agent from its installed npm package only (the fourth place): executable and argv. Throws
   * AGENT_NOT_FOUND when the package is missing. A start looks in all four places.
   */
  resolve(): { file: string; args: string[] };
  /** Environment every start gets (callers can override each variable). */
  readonly env: Readonly<Record<string, string>>;
  /** Host variables passed by default besides the common ones (names or PREFIX* patterns). */
  readonly passEnv: readonly string[];
  /** Credential and endpoint variables the agent reads (`ase doctor`, auth error hints). */
  readonly credentials: readonly string[];
  /** Runs on the host's Node: its directory goes first on PATH. */
  readonly node: boolean;
  /** Agents that ignore stdin EOF get a short EOF grace before SIGTERM. */
  readonly shutdown?: ShutdownOptions;
}

/** The directory of an installed package, also for packages whose `exports` hide package.json. */
export function packageDir(name: string): string | undefined {
  return installedPackageDir(name);
}

const EOF_IGNORED: ShutdownOptions = { stdinGraceMs: 300 };

/** A package whose agent is a script run by Node (`bundle/gemini.js`). */
function scriptIn(packageName: string, script: string, dir = installedPackageDir(packageName)): PackageBinary | undefined {
  const path = dir && existingFile(join(dir, script), true);
  if (!dir || !path) return undefined;
  const version = packageVersionAt(dir);
  return { path, packageName, ...(version !== undefined && { packageVersion: version }) };
}

function scriptAgent(o: {
  name: string;
  title: string;
  envVar: string;
  command: string;
  packageName: string;
  script: string;
  testedVersion?: string;
  versionFlag?: boolean;
}): AgentCliSpec {
  return {
    name: o.name,
    title: o.title,
    envVar: o.envVar,
    commands: [o.command],
    packageName: o.packageName,
    install: `npm install ${o.packageName}`,
    ...(o.testedVersion !== undefined && { testedVersion: o.testedVersion }),
    fromPackage: () => scriptIn(o.packageName, o.script) ?? { missing: `${o.packageName} not installed` },
    packageNames: [o.packageName],
    unwrap: (dir) => scriptIn(o.packageName, o.script, dir),
    ...(o.versionFlag && { versionCommand: { args: ['--version'], parse: (out: string) => /^\s*(\d+\.\d+\.\d+(?:-[\w.]+)?)\s*$/m.exec(out)?.[1] } }),
  };
}

const CODEX_ACP_PACKAGE = '@zed-industries/codex-acp';
/** Every platform codex-acp ships (its optionalDependencies). */
export const CODEX_ACP_PLATFORMS = ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-arm64', 'win32-x64'] as const;

function codexAcpBinary(from?: string): PackageBinary | undefined {
  const key = `${process.platform}-${process.arch}`;
  if (!(CODEX_ACP_PLATFORMS as readonly string[]).includes(key)) return undefined;
  const pkg = `${CODEX_ACP_PACKAGE}-${key}`;
  const dir = installedPackageDir(pkg, from);
  const path = dir && existingFile(join(dir, 'bin', process.platform === 'win32' ? 'codex-acp.exe' : 'codex-acp'));
  if (!dir || !path) return undefined;
  const version = packageVersionAt(dir);
  return { path, packageName: pkg, ...(version !== undefined && { packageVersion: version }) };
}

const CODEX_ACP_CLI: AgentCliSpec = {
  name: 'codex-acp',
  title: 'codex-acp',
  envVar: 'ASE_CODEX_ACP_BIN',
  commands: ['codex-acp'],
  packageName: CODEX_ACP_PACKAGE,
  install: `npm install ${CODEX_ACP_PACKAGE}`,
  testedVersion: '0.16.0',
  fromPackage() {
    const key = `${process.platform}-${process.arch}`;
    if (!(CODEX_ACP_PLATFORMS as readonly string[]).includes(key)) return { missing: `${CODEX_ACP_PACKAGE} ships no build for ${key}` };
    const main = installedPackageDir(CODEX_ACP_PACKAGE);
    return codexAcpBinary(main) ?? { missing: `${CODEX_ACP_PACKAGE}-${key} not installed` };
  },
  packageNames: [CODEX_ACP_PACKAGE],
  // `codex-acp` from npm is a Node launcher of the platform binary: run the binary itself.
  unwrap: (dir) => codexAcpBinary(dir),
  // No version command: `codex-acp --version` is a usage error. The agent reports it in initialize.
};

const OPENCODE_PACKAGE = 'opencode-ai';
const OPENCODE_OS: Readonly<Record<string, string>> = { linux: 'linux', darwin: 'darwin', win32: 'windows' };

/**
 * opencode's platform binary (`opencode-<os>-<arch>[-baseline][-musl]`, an optionalDependency of
 * opencode-ai). Looked up directly rather than through opencode-ai's `bin/opencode.exe`, which only
 * its postinstall script fills in, and npm 11 does not run install scripts unless approved.
 */
function opencodeBinary(from?: string): PackageBinary | undefined {
  const os = OPENCODE_OS[process.platform];
  if (!os || (process.arch !== 'x64' && process.arch !== 'arm64')) return undefined;
  const base = `opencode-${os}-${process.arch}`;
  const variants = process.arch === 'x64' ? [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`] : [base, `${base}-musl`];
  for (const pkg of variants) {
    const dir = installedPackageDir(pkg, from);
    const path = dir && existingFile(join(dir, 'bin', os === 'windows' ? 'opencode.exe' : 'opencode'));
    if (!dir || !path) continue;
    const version = packageVersionAt(dir);
    return { path, packageName: pkg, ...(version !== undefined && { packageVersion: version }) };
  }
  return undefined;
}

const OPENCODE_CLI: AgentCliSpec = {
  name: 'opencode',
  title: 'opencode',
  envVar: 'ASE_OPENCODE_BIN',
  commands: ['opencode'],
  packageName: OPENCODE_PACKAGE,
  install: `npm install ${OPENCODE_PACKAGE}`,
  testedVersion: '1.18.33',
  fromPackage() {
    const main = installedPackageDir(OPENCODE_PACKAGE);
    if (!main) return { missing: `${OPENCODE_PACKAGE} not installed` };
    return opencodeBinary(main) ?? { missing: `${OPENCODE_PACKAGE} has no platform binary for ${process.platform}-${process.arch} installed` };
  },
  packageNames: [OPENCODE_PACKAGE],
  unwrap: (dir) => opencodeBinary(dir),
  versionCommand: { args: ['--version'], parse: (out: string) => /^\s*(\d+\.\d+\.\d+(?:-[\w.]+)?)\s*$/m.exec(out)?.[1] },
};

const COPILOT_PACKAGE = '@github/copilot';
/** Every platform Copilot CLI ships (its optionalDependencies `@github/copilot-<key>`). */
export const COPILOT_PLATFORMS = ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'linuxmusl-arm64', 'linuxmusl-x64', 'win32-arm64', 'win32-x64'] as const;

/**
 * Copilot CLI's platform binary (`@github/copilot-<platform>-<arch>`, on Linux the glibc or the
 * `linuxmusl` build, whichever npm installed), a Node single-executable app. Looked up directly
 * rather than through the package's `npm-loader.js`, which would only spawn it (one Node less).
 */
function copilotBinary(from?: string): PackageBinary | undefined {
  const keys = [`${process.platform}-${process.arch}`, ...(process.platform === 'linux' ? [`linuxmusl-${process.arch}`] : [])];
  for (const key of keys.filter((k) => (COPILOT_PLATFORMS as readonly string[]).includes(k))) {
    const pkg = `${COPILOT_PACKAGE}-${key}`;
    const dir = installedPackageDir(pkg, from);
    const path = dir && existingFile(join(dir, process.platform === 'win32' ? 'copilot.exe' : 'copilot'));
    if (!dir || !path) continue;
    const version = packageVersionAt(dir);
    return { path, packageName: pkg, ...(version !== undefined && { packageVersion: version }) };
  }
  return undefined;
}

const COPILOT_CLI: AgentCliSpec = {
  name: 'copilot',
  title: 'GitHub Copilot CLI',
  envVar: 'ASE_COPILOT_BIN',
  commands: ['copilot'],
  packageName: COPILOT_PACKAGE,
  install: `npm install ${COPILOT_PACKAGE}`,
  testedVersion: '1.0.102',
  fromPackage() {
    const main = installedPackageDir(COPILOT_PACKAGE);
    if (!main) return { missing: `${COPILOT_PACKAGE} not installed` };
    return copilotBinary(main) ?? { missing: `${COPILOT_PACKAGE} has no platform binary for ${process.platform}-${process.arch} installed` };
  },
  packageNames: [COPILOT_PACKAGE],
  unwrap: (dir) => copilotBinary(dir),
  // Only for a copilot that is not an npm install (native installer, Homebrew): it prints
  // "GitHub Copilot CLI 1.0.102." and, the first time, unpacks its bundle into ~/.cache/copilot.
  versionCommand: { args: ['--version'], parse: (out: string) => /Copilot CLI (\d+\.\d+\.\d+(?:-[\w.]+)?)/.exec(out)?.[1] },
};

/** What Copilot CLI reads: its own variables (`COPILOT_PROVIDER_*` for a model endpoint of your own) and the GitHub token and host. */
const COPILOT_ENV_ALLOW: readonly string[] = ['COPILOT_*', 'GH_TOKEN', 'GITHUB_TOKEN', 'GH_HOST'];

/** What opencode reads: its own variables, and the keys of the providers it bundles (anthropic, openai, google, openrouter, …). */
const OPENCODE_ENV_ALLOW: readonly string[] = ['OPENCODE_*', 'XDG_*', 'ANTHROPIC_*', 'OPENAI_*', 'GOOGLE_*', 'OPENROUTER_*', 'GROQ_*', 'XAI_*', 'DEEPSEEK_*', 'AWS_*', 'AZURE_*'];
/** What Qwen Code reads: its own variables and the OpenAI-compatible endpoint (and Alibaba's DashScope). */
const QWEN_ENV_ALLOW: readonly string[] = ['QWEN_*', 'OPENAI_*', 'DASHSCOPE_*', 'ANTHROPIC_*', 'GEMINI_*', 'GOOGLE_*'];

function preset(p: Omit<AcpPreset, 'resolve' | 'packageName'>): AcpPreset {
  return {
    ...p,
    packageName: p.cli.packageName,
    resolve() {
      const found = p.cli.fromPackage();
      if ('missing' in found) throw agentNotFound(p.cli, [`npm package: ${found.missing}`]);
      const script = /\.(?:c|m)?js$/.test(found.path);
      return script ? { file: process.execPath, args: [found.path, ...p.args] } : { file: found.path, args: [...p.args] };
    },
  };
}

const CLAUDE_CREDENTIALS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'CLAUDE_CONFIG_DIR', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX'];

export const ACP_PRESETS: Readonly<Record<AcpPresetName, AcpPreset>> = {
  gemini: preset({
    name: 'gemini',
    description: 'Gemini CLI in ACP mode (`gemini --acp`)',
    cli: scriptAgent({
      name: 'gemini',
      title: 'Gemini CLI',
      envVar: 'ASE_GEMINI_BIN',
      command: 'gemini',
      packageName: '@google/gemini-cli',
      script: 'bundle/gemini.js',
      testedVersion: '0.61.0',
      // `gemini --version` works (about 5 s); used only for a gemini that is not an npm install.
      versionFlag: true,
    }),
    args: ['--acp'],
    // Without it the CLI re-launches itself in a child Node with other heap flags (two processes).
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    passEnv: GEMINI_ENV_ALLOW,
    credentials: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GEMINI_BASE_URL'],
    node: true,
  }),
  'codex-acp': preset({
    name: 'codex-acp',
    description: "Zed's codex-acp (native binary embedding Codex)",
    cli: CODEX_ACP_CLI,
    args: [],
    env: {},
    passEnv: CODEX_AGENT_ENV_ALLOW,
    credentials: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_ACCESS_TOKEN', 'OPENAI_BASE_URL', 'CODEX_HOME'],
    node: false,
    shutdown: EOF_IGNORED,
  }),
  'claude-code-acp': preset({
    name: 'claude-code-acp',
    description: "Zed's claude-code-acp (Claude Agent SDK; routes file and shell tools through the client)",
    cli: scriptAgent({
      name: 'claude-code-acp',
      title: 'claude-code-acp',
      envVar: 'ASE_CLAUDE_CODE_ACP_BIN',
      command: 'claude-code-acp',
      packageName: '@zed-industries/claude-code-acp',
      script: 'dist/index.js',
      testedVersion: '0.16.2',
    }),
    args: [],
    env: {},
    passEnv: CLAUDE_ENV_ALLOW,
    credentials: CLAUDE_CREDENTIALS,
    node: true,
    shutdown: EOF_IGNORED,
  }),
  'claude-agent-acp': preset({
    name: 'claude-agent-acp',
    description: "Zed's claude-agent-acp (successor of claude-code-acp; not in this library's test suite)",
    cli: scriptAgent({
      name: 'claude-agent-acp',
      title: 'claude-agent-acp',
      envVar: 'ASE_CLAUDE_AGENT_ACP_BIN',
      command: 'claude-agent-acp',
      packageName: '@zed-industries/claude-agent-acp',
      script: 'dist/index.js',
    }),
    args: [],
    env: {},
    passEnv: CLAUDE_ENV_ALLOW,
    credentials: CLAUDE_CREDENTIALS,
    node: true,
    shutdown: EOF_IGNORED,
  }),
  opencode: preset({
    name: 'opencode',
    description: 'opencode in ACP mode (`opencode acp`; native binary)',
    cli: OPENCODE_CLI,
    args: ['acp'],
    // A supervised agent must not replace its own binary (the tested version) mid-session.
    env: { OPENCODE_DISABLE_AUTOUPDATE: 'true' },
    passEnv: OPENCODE_ENV_ALLOW,
    credentials: ['OPENCODE_CONFIG', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY', 'OPENROUTER_API_KEY'],
    node: false,
  }),
  qwen: preset({
    name: 'qwen',
    description: 'Qwen Code in ACP mode (`qwen --acp`)',
    cli: scriptAgent({
      name: 'qwen',
      title: 'Qwen Code',
      envVar: 'ASE_QWEN_BIN',
      command: 'qwen',
      packageName: '@qwen-code/qwen-code',
      // cli.js itself: `qwen` (cli-entry.js) relaunches it in a second Node with --expose-gc.
      script: 'cli.js',
      testedVersion: '0.24.4',
      versionFlag: true,
    }),
    args: ['--acp'],
    env: {},
    passEnv: QWEN_ENV_ALLOW,
    credentials: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'DASHSCOPE_API_KEY', 'QWEN_HOME'],
    node: true,
  }),
  copilot: preset({
    name: 'copilot',
    description: 'GitHub Copilot CLI in ACP mode (`copilot --acp`; native binary)',
    cli: COPILOT_CLI,
    args: ['--acp'],
    // A supervised agent must not replace its own binary (the tested version) mid-session; with
    // updates off it also ignores a newer version already in its package cache.
    env: { COPILOT_AUTO_UPDATE: 'false' },
    passEnv: COPILOT_ENV_ALLOW,
    credentials: [
      'COPILOT_GITHUB_TOKEN',
      'GH_TOKEN',
      'GITHUB_TOKEN',
      'COPILOT_PROVIDER_BASE_URL',
      'COPILOT_PROVIDER_TYPE',
      'COPILOT_PROVIDER_API_KEY',
      'COPILOT_PROVIDER_BEARER_TOKEN',
      'COPILOT_MODEL',
      'COPILOT_OFFLINE',
      'COPILOT_HOME',
    ],
    node: false,
  }),
};

export function isAcpPresetName(value: unknown): value is AcpPresetName {
  return typeof value === 'string' && (ACP_PRESET_NAMES as readonly string[]).includes(value);
}

/** The preset named `name`, or INVALID_OPTIONS listing the known ones. */
export function acpPreset(name: string): AcpPreset {
  if (isAcpPresetName(name)) return ACP_PRESETS[name];
  throw new AseError('INVALID_OPTIONS', `acp engine: unknown preset ${JSON.stringify(name)}; known presets: ${ACP_PRESET_NAMES.join(', ')}`);
}
