/**
 * The temporary `--settings` file of a local Claude Code: every hook the local engine listens to
 * runs the shipped hook script (hook-script.ts) with the engine's socket. Verified on the pinned CLI
 * (2.1.330, test/real-cli/claude-local.test.ts): `--settings <file>` adds these hooks to the user's
 * own; the hooks get `session_id` and `transcript_path` on stdin.
 *
 * - `SessionStart` (startup, resume, clear, compact): the real session id and transcript file.
 * - `UserPromptSubmit`: a turn starts (typed in the terminal).
 * - `Stop`: the turn ended (the transcript is read to its end before `turn_complete`).
 * - `Notification` (`permission_prompt`, `idle_prompt`): signs of life while a dialog waits.
 * - `PermissionRequest`: the dialog is on screen; the hook waits (up to a day) for a remote answer
 *   while the person at the terminal may answer first.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOOK_SCRIPT } from './hook-script.js';

/** A hook waiting on a remote answer gives up after this long (Claude Code's `timeout`, seconds). */
const PERMISSION_HOOK_TIMEOUT_S = 24 * 60 * 60;
/** Every other hook only reports: a short bound. */
const REPORT_HOOK_TIMEOUT_S = 10;

export interface HookFiles {
  /** The private directory (0700) holding the socket, the script and the settings. */
  dir: string;
  socketPath: string;
  settingsPath: string;
  remove(): Promise<void>;
}

/** POSIX shell single quoting (Claude Code runs a hook `command` through the shell). */
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function hookSettings(command: string): Record<string, unknown> {
  const report = (matcher?: string) => [{ ...(matcher !== undefined && { matcher }), hooks: [{ type: 'command', command, timeout: REPORT_HOOK_TIMEOUT_S }] }];
  return {
    hooks: {
      SessionStart: report(),
      UserPromptSubmit: report(),
      Stop: report(),
      Notification: report('permission_prompt|idle_prompt'),
      PermissionRequest: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: PERMISSION_HOOK_TIMEOUT_S }] }],
    },
  };
}

/**
 * Creates the private directory with the hook script and the settings file. The socket path is
 * kept short (unix socket paths are limited to ~104 bytes), so the directory is under the OS temp
 * dir, not the session's data dir.
 */
export async function writeHookFiles(nodePath: string = process.execPath): Promise<HookFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'ase-cl-'));
  await chmod(dir, 0o700);
  const socketPath = join(dir, 'hooks.sock');
  const scriptPath = join(dir, 'hook.cjs');
  const settingsPath = join(dir, 'settings.json');
  await writeFile(scriptPath, HOOK_SCRIPT, { mode: 0o600 });
  const command = `${quote(nodePath)} ${quote(scriptPath)} ${quote(socketPath)}`;
  await writeFile(settingsPath, JSON.stringify(hookSettings(command), null, 2), { mode: 0o600 });
  return { dir, socketPath, settingsPath, remove: () => rm(dir, { recursive: true, force: true }) };
}
