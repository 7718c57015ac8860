/**
 * How every engine finds its agent CLI, in one order, so a user knows where to put it:
 *
 *   1. an explicit `bin` (the session's `bin` / `ase --bin`, else `engineOptions.bin`);
 *   2. an environment variable naming it (`ASE_CLAUDE_BIN`, `ASE_CODEX_BIN`, `ASE_GEMINI_BIN`, …);
 *   3. the executable on PATH (`claude`, `codex`, `gemini`, …: a global npm install, a native
 *      installer, a package manager);
 *   4. the npm package installed next to this library, for the current platform and arch (the
 *      CLIs are optional peer dependencies).
 *
 * Nothing found is one typed error, AGENT_NOT_FOUND, naming all four places and what each held.
 * A found executable that is an npm package's launcher script (`codex.js`, `codex-acp.js`, the
 * `claude.exe` copy) is replaced by the native binary that script would run, which saves a
 * process and lets the engine set what the binary needs (Codex's bundled `rg` on PATH); a
 * JavaScript file runs under this process's Node. Agent specs (the names, packages and platform
 * layouts of each CLI) live with their engines; this file knows none of them.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AseError } from '../../errors.js';

/** Which of the four places the CLI came from. */
export type AgentSource = 'bin' | 'env' | 'path' | 'package';

/** A binary inside an installed npm package. */
export interface PackageBinary {
  /** The executable (or script) inside the package. */
  path: string;
  /** The package that holds it (`@anthropic-ai/claude-code-linux-x64`). */
  packageName: string;
  /** Its `version` field, when read. */
  packageVersion?: string;
  /** A directory to put first on the agent's PATH (Codex's bundled tools). */
  pathDir?: string;
}

/** Everything an engine needs to know about one agent CLI to find it. */
export interface AgentCliSpec {
  /** Short name, also the key in `ase doctor` (`claude`, `codex`, `gemini`, …). */
  readonly name: string;
  /** For people: `Claude Code`, `Codex`, `Gemini CLI`. */
  readonly title: string;
  /** The environment variable that names the executable (`ASE_CLAUDE_BIN`). */
  readonly envVar: string;
  /** Executable names searched on PATH, in order. */
  readonly commands: readonly string[];
  /** The npm package users install (`@anthropic-ai/claude-code`), for messages and doctor. */
  readonly packageName: string;
  /** How to install it, for the not-found message. */
  readonly install: string;
  /** The version this library is tested against (the exact devDependency). */
  readonly testedVersion?: string;
  /** The binary from the installed npm package for this platform and arch, or why there is none. */
  fromPackage(): PackageBinary | { missing: string };
  /**
   * Called with the package directory when a found executable lives inside an npm package of
   * this agent (`packageNames`): the native binary to run instead, if any.
   */
  unwrap?(packageDir: string, packageName: string): PackageBinary | undefined;
  /** Names of the npm packages whose launchers `unwrap` understands. */
  readonly packageNames?: readonly string[];
  /**
   * How to read the version by running the CLI (`--version` and a parser). Without it the version
   * comes only from package.json (agents whose `--version` starts a server, or takes seconds).
   */
  readonly versionCommand?: { readonly args: readonly string[]; parse(output: string): string | undefined };
  /**
   * Refuses a candidate found on PATH or in a package (not an explicit one), e.g. a Codex too new
   * for `mcp-server`: the reason, or undefined to accept. Search then goes on to the next place.
   */
  accept?(location: AgentLocation): Promise<string | undefined>;
}

/** What was found, and how to run it. */
export interface AgentLocation {
  /** What to spawn: the binary, or this Node for a script. */
  file: string;
  /** Leading arguments (the script, when `file` is Node). */
  args: string[];
  /** The executable or script found (after unwrapping a launcher). */
  path: string;
  source: AgentSource;
  /** Where, for people: `bin option`, `ASE_CLAUDE_BIN`, `PATH`, `npm package @anthropic-ai/claude-code-linux-x64`. */
  where: string;
  packageName?: string;
  packageVersion?: string;
  pathDir?: string;
}

/** The outcome of a search: what was found (if anything) and what each place held. */
export interface AgentSearch {
  found?: AgentLocation;
  /** One line per place looked in, in order (`ASE_CLAUDE_BIN: not set`). */
  looked: string[];
}

export interface AgentSearchOptions {
  /** An explicit executable (the session's `bin`, `engineOptions.bin`). */
  bin?: string;
  /** Where `ASE_*_BIN` and PATH are read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

const SCRIPT = /\.(?:c|m)?js$/;

/** Looks in the four places in order; never throws for a missing CLI (see {@link findAgent}). */
export async function searchAgent(spec: AgentCliSpec, options: AgentSearchOptions = {}): Promise<AgentSearch> {
  const env = options.env ?? process.env;
  const looked: string[] = [];
  // 1. explicit bin
  if (options.bin !== undefined) {
    const path = executablePath(options.bin, env['PATH']);
    if (path) return { found: locate(spec, path, 'bin', 'the bin option'), looked: [`bin option: ${options.bin}`] };
    looked.push(`bin option: ${options.bin} (${hasSeparator(options.bin) ? 'no such executable file' : 'not on PATH'})`);
    return { looked };
  }
  looked.push('bin option: not given');
  // 2. the environment variable
  const fromEnv = env[spec.envVar];
  if (fromEnv !== undefined && fromEnv !== '') {
    const path = executablePath(fromEnv, env['PATH']);
    if (path) return { found: locate(spec, path, 'env', spec.envVar), looked: [...looked, `${spec.envVar}: ${fromEnv}`] };
    // A variable that names nothing is a mistake to report, not a reason to run some other CLI.
    looked.push(`${spec.envVar}: ${fromEnv} (${hasSeparator(fromEnv) ? 'no such executable file' : 'not on PATH'})`);
    return { looked };
  }
  looked.push(`${spec.envVar}: not set`);
  // 3. PATH
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  let onPath: string | undefined;
  for (const command of spec.commands) {
    onPath = searchPath(command, dirs);
    if (onPath) break;
  }
  if (onPath) {
    const location = locate(spec, onPath, 'path', 'PATH');
    const refused = await spec.accept?.(location);
    if (!refused) return { found: location, looked: [...looked, `PATH: ${onPath}`] };
    looked.push(`PATH: ${onPath} (not used: ${refused})`);
  } else {
    looked.push(`PATH: no ${spec.commands.map((c) => `"${c}"`).join(' or ')} in ${dirs.length} director${dirs.length === 1 ? 'y' : 'ies'}`);
  }
  // 4. the npm package
  const pkg = spec.fromPackage();
  if ('missing' in pkg) {
    looked.push(`npm package: ${pkg.missing}`);
    return { looked };
  }
  const location = fromPackageBinary(pkg, 'package', `npm package ${pkg.packageName}`);
  const refused = await spec.accept?.(location);
  if (refused) {
    looked.push(`npm package ${pkg.packageName}: ${pkg.path} (not used: ${refused})`);
    return { looked };
  }
  return { found: location, looked: [...looked, `npm package ${pkg.packageName}: ${pkg.path}`] };
}

/** Like {@link searchAgent}, but a missing CLI is an AseError AGENT_NOT_FOUND naming every place looked in. */
export async function findAgent(spec: AgentCliSpec, options: AgentSearchOptions = {}): Promise<AgentLocation> {
  const search = await searchAgent(spec, options);
  if (search.found) return search.found;
  throw agentNotFound(spec, search.looked);
}

export function agentNotFound(spec: AgentCliSpec, looked: readonly string[]): AseError {
  return new AseError(
    'AGENT_NOT_FOUND',
    `${spec.name}: the ${spec.title} CLI was not found. Looked in: ${looked.join('; ')}. ` +
      `Install it (${spec.install}), put ${spec.commands[0]} on PATH, or name it with ${spec.envVar} or the bin option.`,
    { details: { agent: spec.name, looked: [...looked] } },
  );
}

/**
 * The location of `path` found in `source`: a launcher inside one of the agent's packages is
 * replaced by its native binary; a script runs under this Node.
 */
function locate(spec: AgentCliSpec, path: string, source: AgentSource, where: string): AgentLocation {
  // Only the CLI's own package says which CLI this is: the nearest package.json above a shim
  // (pnpm's `.bin/claude`, a copied binary) is often the host application's, whose version is not the CLI's.
  const owner = owningPackage(path, (name) => isCliPackage(spec, name));
  if (owner) {
    const names = spec.packageNames ?? [spec.packageName];
    if (spec.unwrap && names.includes(owner.name)) {
      const native = spec.unwrap(owner.dir, owner.name);
      if (native) return fromPackageBinary(native, source, where);
    }
    return { ...runnable(path), path, source, where, packageName: owner.name, ...(owner.version && { packageVersion: owner.version }) };
  }
  return { ...runnable(path), path, source, where };
}

function fromPackageBinary(pkg: PackageBinary, source: AgentSource, where: string): AgentLocation {
  return {
    ...runnable(pkg.path),
    path: pkg.path,
    source,
    where,
    packageName: pkg.packageName,
    ...(pkg.packageVersion !== undefined && { packageVersion: pkg.packageVersion }),
    ...(pkg.pathDir !== undefined && { pathDir: pkg.pathDir }),
  };
}

/** A JavaScript file runs under this process's Node (the agent SDKs do the same); anything else is exec'd. */
function runnable(path: string): { file: string; args: string[] } {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // keep the path as given
  }
  return SCRIPT.test(real) ? { file: process.execPath, args: [path] } : { file: path, args: [] };
}

function hasSeparator(name: string): boolean {
  return name.includes('/') || (sep === '\\' && name.includes('\\'));
}

/** `name` as an executable file: a path (relative to the cwd) when it has a separator, else looked up on PATH. */
function executablePath(name: string, path: string | undefined): string | undefined {
  if (hasSeparator(name) || isAbsolute(name)) {
    const full = resolve(name);
    return isExecutableFile(full) || (SCRIPT.test(full) && isFile(full)) ? full : undefined;
  }
  return searchPath(name, (path ?? '').split(delimiter).filter((d) => d !== ''));
}

function searchPath(command: string, dirs: readonly string[]): string | undefined {
  const extensions = process.platform === 'win32' ? ['', ...(process.env['PATHEXT'] ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)] : [''];
  for (const dir of dirs) {
    for (const ext of extensions) {
      const candidate = join(dir, command + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  if (!isFile(path)) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether npm package `name` is the CLI's own: its package, one of `packageNames`, or a platform
 * build of one of them (`@anthropic-ai/claude-code-linux-x64`, `@openai/codex-darwin-arm64`).
 */
export function isCliPackage(spec: Pick<AgentCliSpec, 'packageName' | 'packageNames'>, name: string): boolean {
  const own = [spec.packageName, ...(spec.packageNames ?? [])];
  return own.some((p) => name === p || (name.startsWith(`${p}-`) && PLATFORM_SUFFIX.test(name.slice(p.length + 1))));
}

const PLATFORM_SUFFIX = /^(?:linux|darwin|win32|android|freebsd)-[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The npm package a file belongs to, following symlinks: the nearest package.json above it with a
 * name `accept` takes (default: any name). Package.json files of other packages on the way (the
 * host application's) are walked past.
 */
export function owningPackage(path: string, accept: (name: string) => boolean = () => true): { dir: string; name: string; version?: string } | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(path));
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i++) {
    const manifest = readManifest(dir);
    if (manifest?.name && accept(manifest.name)) return { dir, name: manifest.name, ...(manifest.version && { version: manifest.version }) };
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

function readManifest(dir: string): { name?: string; version?: string } | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    return {
      ...(typeof json.name === 'string' && { name: json.name }),
      ...(typeof json.version === 'string' && { version: json.version }),
    };
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------------------------------------
// Helpers for the agent specs: where an installed package is

const here = createRequire(import.meta.url);

/**
 * The directory of installed package `name`, resolved from this library (so from the application
 * that depends on it), or from `from` (a package directory, for platform packages nested under
 * their main package). Works for packages whose `exports` hide package.json.
 */
export function installedPackageDir(name: string, from?: string): string | undefined {
  const requireFrom = from ? createRequire(join(from, 'package.json')) : here;
  try {
    return dirname(requireFrom.resolve(`${name}/package.json`));
  } catch {
    // `exports` may not list package.json: walk up node_modules directories instead.
  }
  let dir = from ?? dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The `version` of the package in `dir`, if readable. */
export function packageVersionAt(dir: string): string | undefined {
  return readManifest(dir)?.version;
}

/** `file` when it exists and is executable (or readable, for scripts), else undefined. */
export function existingFile(file: string, script = false): string | undefined {
  return isExecutableFile(file) || (script && isFile(file)) ? file : undefined;
}

/** `${platform}-${arch}` of this process, with `-musl` on Linux without glibc. */
export function platformKey(): { key: string; musl: boolean } {
  const key = `${process.platform}-${process.arch}`;
  if (muslCache === undefined) {
    muslCache = false;
    if (process.platform === 'linux') {
      // The report is the one portable way to ask which libc this Node runs on (taken once).
      const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
      muslCache = header !== undefined && header.glibcVersionRuntime === undefined;
    }
  }
  return { key, musl: muslCache };
}

let muslCache: boolean | undefined;
