/**
 * The local-mode hook script (shipped as source, hook-script.ts) and the engine's socket
 * (hook-server.ts), with real processes: what Claude Code's hook runner would see on stdout, and
 * that the script fails closed and fast when the engine is gone.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookServer, type HookCall } from '../../src/engines/transport/hook-server.js';
import { hookSettings, writeHookFiles, type HookFiles } from '../../src/engines/claude/local/hook-settings.js';

const files: HookFiles[] = [];
const servers: HookServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(files.splice(0).map((f) => f.remove()));
});

/** Runs the hook script as Claude Code does: the hook JSON on stdin, its stdout is the answer. */
function runHook(dir: string, socketPath: string, input: unknown): Promise<{ code: number | null; stdout: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(dir, 'hook.cjs'), socketPath], (error, stdout) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, ms: performance.now() - started });
    });
    child.stdin!.end(JSON.stringify(input));
  });
}

describe('claude local hooks', () => {
  it('registers the five hooks with the command, a long timeout only for PermissionRequest', () => {
    const settings = hookSettings("'node' 'hook.cjs' 'sock'") as { hooks: Record<string, { matcher?: string; hooks: { command: string; timeout: number }[] }[]> };
    expect(Object.keys(settings.hooks).sort()).toEqual(['Notification', 'PermissionRequest', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(settings.hooks.Notification![0]!.matcher).toBe('permission_prompt|idle_prompt');
    expect(settings.hooks.PermissionRequest![0]!.hooks[0]!.timeout).toBeGreaterThanOrEqual(3600);
    expect(settings.hooks.Stop![0]!.hooks[0]!.timeout).toBeLessThanOrEqual(10);
  });

  it('fails closed and fast when the engine is gone: a permission is denied, other hooks return nothing', async () => {
    const hook = await writeHookFiles();
    files.push(hook);
    const denied = await runHook(hook.dir, hook.socketPath, { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'rm -rf /' } });
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny' } } });
    expect(denied.ms).toBeLessThan(5_000);
    const stop = await runHook(hook.dir, hook.socketPath, { hook_event_name: 'Stop' });
    expect(stop).toMatchObject({ code: 0, stdout: '' });
  });

  it('carries the hook JSON to the engine and the engine answer back; a hook the engine drops fails closed', async () => {
    const hook = await writeHookFiles();
    files.push(hook);
    const calls: HookCall[] = [];
    servers.push(
      await HookServer.listen(hook.socketPath, (call) => {
        calls.push(call);
        const name = call.input['hook_event_name'];
        if (name === 'PermissionRequest' && (call.input['tool_input'] as { command?: string }).command === 'ls') {
          call.reply({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
        } else if (name === 'PermissionRequest') {
          void servers[0]!.close(); // the engine goes away while the dialog waits
        } else call.reply();
      }),
    );
    const started = await runHook(hook.dir, hook.socketPath, { hook_event_name: 'SessionStart', session_id: 'abc' });
    expect(started).toMatchObject({ code: 0, stdout: '' });
    expect(calls[0]!.input).toEqual({ hook_event_name: 'SessionStart', session_id: 'abc' });
    const allowed = await runHook(hook.dir, hook.socketPath, { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } });
    expect(JSON.parse(allowed.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    const dropped = await runHook(hook.dir, hook.socketPath, { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'rm x' } });
    expect(JSON.parse(dropped.stdout)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } });
  });
});
