/**
 * The hooks of a local Codex, given as `-c hooks.<Event>=[…]` overrides (Codex reads the same
 * `[hooks]` tables from config.toml and `-c`), each running the shipped hook script
 * (transport/hook-script.ts) with the engine's socket. Observed on the pinned 0.169.0
 * (test/real-cli/codex-local.test.ts):
 *
 * - `SessionStart` (source `startup` | `resume`) comes with the thread's first prompt, not when
 *   the terminal UI opens; it carries `session_id` (the thread id) and `transcript_path` (the
 *   rollout).
 * - `UserPromptSubmit`: a turn starts. `Stop`: it ended (`last_assistant_message`).
 * - `PermissionRequest`: Codex runs the hook BEFORE it shows its own approval dialog, and shows
 *   "Running hook" meanwhile. An answer (`allow`/`deny`) decides; a hook that prints no decision
 *   lets the terminal UI ask the person. `updatedInput`, `updatedPermissions` and `interrupt: true`
 *   make Codex fail the hook closed, so they are never sent.
 *
 * Non-managed hooks must be trusted before they run: `--dangerously-bypass-hook-trust` trusts
 * these for this process only (they are ours, written by the engine into its private directory),
 * without touching the user's `[hooks.state]`.
 */
import { tomlValue } from '../config-overrides.js';

/** A hook waiting on a remote answer gives up after this long (Codex's `timeout`, seconds). */
const PERMISSION_HOOK_TIMEOUT_S = 24 * 60 * 60;
/** Every other hook only reports: a short bound. */
const REPORT_HOOK_TIMEOUT_S = 10;

const REPORTED_EVENTS = ['SessionStart', 'UserPromptSubmit', 'Stop'] as const;

export function codexHookArgs(command: string): string[] {
  const handler = (timeout: number) => tomlValue([{ hooks: [{ type: 'command', command, timeout }] }]);
  return [
    ...REPORTED_EVENTS.flatMap((event) => ['-c', `hooks.${event}=${handler(REPORT_HOOK_TIMEOUT_S)}`]),
    '-c',
    `hooks.PermissionRequest=${handler(PERMISSION_HOOK_TIMEOUT_S)}`,
    '--dangerously-bypass-hook-trust',
  ];
}
