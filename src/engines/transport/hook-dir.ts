/**
 * The private directory of a local-mode engine's hooks: the unix socket the engine listens on
 * (hook-server.ts) and the hook script (hook-script.ts) the CLI runs, and the shell command that
 * runs it. The directory is 0700, so only this user reaches the socket; it is under the OS temp
 * dir, not the session's data dir, because unix socket paths are limited to ~104 bytes.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOOK_SCRIPT } from './hook-script.js';

export interface HookDir {
  /** The private directory (0700). */
  dir: string;
  socketPath: string;
  /** The command line the CLI runs for each hook (through the shell): node, the script, the socket. */
  command: string;
  remove(): Promise<void>;
}

/** POSIX shell single quoting (both CLIs run a hook `command` through the shell). */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `prefix` names the directory (`ase-cl-` for Claude Code, `ase-cx-` for Codex), so a leak is attributable. */
export async function createHookDir(prefix: string, nodePath: string = process.execPath): Promise<HookDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o700);
  const socketPath = join(dir, 'hooks.sock');
  const scriptPath = join(dir, 'hook.cjs');
  await writeFile(scriptPath, HOOK_SCRIPT, { mode: 0o600 });
  return {
    dir,
    socketPath,
    command: `${shellQuote(nodePath)} ${shellQuote(scriptPath)} ${shellQuote(socketPath)}`,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
