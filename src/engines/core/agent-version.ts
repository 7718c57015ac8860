/**
 * Which version a found agent CLI is, and whether it is the one this library was tested against.
 * A different version is worth a warning, never a refusal: protocols drift slowly and the user
 * may know better; the engines report it as a `warning` AgentEvent (docs/engines.md).
 *
 * The version comes from the package.json of the CLI's own npm package when the binary lies in one
 * (no process; discovery never takes another package's, such as the host application's that sits
 * above a pnpm shim or a copied binary), else from running the CLI's version command (`claude --version`), with stdin
 * closed, a bounded wait and nothing of the host's environment but PATH and HOME. Results are
 * cached per file, keyed by its real path, size and mtime, so an upgrade in place is noticed and
 * a session's restarts cost nothing.
 */
import { execFile } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import type { AgentCliSpec, AgentLocation } from './agent-discovery.js';

export interface AgentVersionInfo {
  /** The version, when it could be read. */
  version?: string;
  /** Where it came from. */
  from?: 'package' | 'command';
  /** Why it could not be read. */
  error?: string;
}

const cache = new Map<string, Promise<AgentVersionInfo>>();
const DEFAULT_TIMEOUT_MS = 10_000;

/** `0.169.0-linux-x64` (a platform package's version) → `0.169.0`; anything else as it is. */
export function normalizeVersion(version: string): string {
  return version.replace(/-(?:linux|darwin|win32)-[A-Za-z0-9_-]+$/, '');
}

/** The version of the CLI at `location` (cached per real path, size and mtime). */
export function readAgentVersion(spec: AgentCliSpec, location: AgentLocation, options: { timeoutMs?: number } = {}): Promise<AgentVersionInfo> {
  if (location.packageVersion !== undefined) return Promise.resolve({ version: normalizeVersion(location.packageVersion), from: 'package' });
  const command = spec.versionCommand;
  if (!command) return Promise.resolve({ error: `${spec.title} has no version command; the version is known only for an npm install` });
  let key: string;
  try {
    const real = realpathSync(location.path);
    const st = statSync(real);
    key = `${spec.name}\0${real}\0${st.size}\0${st.mtimeMs}`;
  } catch (error) {
    return Promise.resolve({ error: `cannot read ${location.path}: ${(error as Error).message}` });
  }
  let pending = cache.get(key);
  if (!pending) {
    pending = runVersionCommand(location, command, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    cache.set(key, pending);
    // A failure (a timeout under load) is not remembered: the next start asks again.
    void pending.then((info) => info.error !== undefined && cache.delete(key));
  }
  return pending;
}

function runVersionCommand(location: AgentLocation, command: NonNullable<AgentCliSpec['versionCommand']>, timeoutMs: number): Promise<AgentVersionInfo> {
  return new Promise((resolve) => {
    const env: Record<string, string> = {};
    for (const name of ['PATH', 'HOME', 'SYSTEMROOT']) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    const child = execFile(
      location.file,
      [...location.args, ...command.args],
      { env, timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', windowsHide: true, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        const version = command.parse(stdout) ?? command.parse(stderr);
        if (version) resolve({ version, from: 'command' });
        else {
          const output = `${stdout}${stderr}`.trim().slice(0, 200);
          resolve({ error: error ? `${[location.file, ...location.args].join(' ')} ${command.args.join(' ')} failed: ${error.message.split('\n')[0]}` : `unexpected version output ${JSON.stringify(output)}` });
        }
      },
    );
    // A CLI that reads stdin for its protocol must see EOF, not wait for input that never comes.
    child.stdin?.end();
  });
}

/**
 * The warning for a CLI that is not the tested version, or undefined when it is (or when either
 * version is unknown: an unreadable version is shown by `ase doctor`, not warned about per start).
 */
export function versionWarning(spec: Pick<AgentCliSpec, 'title' | 'testedVersion'>, version: string | undefined, where: string): string | undefined {
  if (version === undefined || spec.testedVersion === undefined || version === spec.testedVersion) return undefined;
  return `${spec.title} ${version} (${where}) is not the version this library is tested against (${spec.testedVersion}); it may work, but protocol changes are possible`;
}

/** Forgets every cached version (tests). */
export function clearAgentVersionCache(): void {
  cache.clear();
}
