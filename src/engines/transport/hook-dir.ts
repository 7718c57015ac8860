/**
 * The private directory of a local-mode engine's hooks: the unix socket the engine listens on
 * (hook-server.ts) and the hook script (hook-script.ts) the CLI runs, and the shell command that
 * runs it. The directory is 0700, so only this user reaches the socket; it is under the OS temp
 * dir, not the session's data dir, because unix socket paths are limited to ~104 bytes.
 *
 * Its name carries the host's pid (`<prefix><pid>-XXXXXX`): a host that was SIGKILLed could not
 * remove its directory, so the next one created removes those of this user's hosts that are gone.
 */
import { readdirSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { singleQuote } from './shell-quote.js';
import { HOOK_SCRIPT } from './hook-script.js';

export interface HookDir {
  /** The private directory (0700). */
  dir: string;
  socketPath: string;
  /** The command line the CLI runs for each hook (through the shell): node, the script, the socket. */
  command: string;
  remove(): Promise<void>;
}


/** `prefix` names the directory (`ase-cl-` for Claude Code, `ase-cx-` for Codex), so a leak is attributable. */
export async function createHookDir(prefix: string, nodePath: string = process.execPath): Promise<HookDir> {
  await removeAbandonedHookDirs(prefix);
  const dir = await mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`));
  await chmod(dir, 0o700);
  const socketPath = join(dir, 'hooks.sock');
  const scriptPath = join(dir, 'hook.cjs');
  await writeFile(scriptPath, HOOK_SCRIPT, { mode: 0o600 });
  return {
    dir,
    socketPath,
    // Quoted always: both CLIs run a hook `command` through the shell.
    command: `${singleQuote(nodePath)} ${singleQuote(scriptPath)} ${singleQuote(socketPath)}`,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Removes `<prefix><pid>-*` directories of this user whose host process no longer exists. */
export async function removeAbandonedHookDirs(prefix: string, dir: string = tmpdir()): Promise<string[]> {
  // Prefixes are ours (`ase-cl-`, `ase-cx-`): letters and dashes, nothing to escape.
  const named = new RegExp(`^${prefix}(\\d+)-`);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(named.exec(name)?.[1]);
    if (!pid || pid === process.pid || hostAlive(pid)) continue;
    const path = join(dir, name);
    // Only this user's: another user's directory is theirs to clean (and 0700 anyway).
    if (statSync(path, { throwIfNoEntry: false })?.uid !== process.getuid?.()) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

/** Whether a process with this pid exists (a pid reused by another process counts as alive: nothing is removed). */
function hostAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
