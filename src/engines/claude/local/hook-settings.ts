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
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHookDir } from '../../transport/hook-dir.js';
import { writeCommandPlugin } from './terminal-commands.js';

/** A hook waiting on a remote answer gives up after this long (Claude Code's `timeout`, seconds). */
const PERMISSION_HOOK_TIMEOUT_S = 24 * 60 * 60;
/** Every other hook only reports: a short bound. */
const REPORT_HOOK_TIMEOUT_S = 10;

export interface HookFiles {
  /** The private directory (0700) holding the socket, the script and the settings. */
  dir: string;
  socketPath: string;
  settingsPath: string;
  /** The plugin of the host's `/ase:*` commands (terminal-commands.ts), for `--plugin-dir`. */
  pluginDir: string;
  remove(): Promise<void>;
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

/** Creates the private hook directory (transport/hook-dir.ts) with the settings file beside the script. */
export async function writeHookFiles(nodePath: string = process.execPath): Promise<HookFiles> {
  const hooks = await createHookDir('ase-cl-', nodePath);
  const settingsPath = join(hooks.dir, 'settings.json');
  await writeFile(settingsPath, JSON.stringify(hookSettings(hooks.command), null, 2), { mode: 0o600 });
  const pluginDir = await writeCommandPlugin(hooks.dir);
  return { dir: hooks.dir, socketPath: hooks.socketPath, settingsPath, pluginDir, remove: hooks.remove };
}
