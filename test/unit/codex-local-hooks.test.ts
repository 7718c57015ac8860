/**
 * The hooks of a local Codex (`-c hooks.<Event>=[…]` overrides, codex/local/hook-config.ts) and the
 * private hook directory both local engines share (transport/hook-dir.ts). The overrides are
 * checked against a TOML reading of their values: Codex parses each `-c` value as TOML and falls
 * back to the raw string when that fails, which would silently register nothing.
 */
import { execFile } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexHookArgs } from '../../src/engines/codex/local/hook-config.js';
import { createHookDir, removeAbandonedHookDirs, type HookDir } from '../../src/engines/transport/hook-dir.js';
import { singleQuote } from '../../src/engines/transport/shell-quote.js';
import { HookServer, MAX_HOOK_LINE_CHARS } from '../../src/engines/transport/hook-server.js';
import { createConnection } from 'node:net';

const dirs: HookDir[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => d.remove()));
});

/** The inline TOML the overrides use (arrays of inline tables of strings and integers), read back as JSON. */
function readInlineToml(text: string): unknown {
  // Keys are bare; strings are JSON-compatible basic strings: quote the keys and swap `=` for `:`.
  return JSON.parse(text.replace(/([{,]\s*)([A-Za-z_][A-Za-z0-9_-]*)\s*=/g, '$1"$2":'));
}

describe('codex local hooks', () => {
  it('registers SessionStart, UserPromptSubmit, Stop and PermissionRequest with our command, trusted for this process only', () => {
    const command = singleQuote('/usr/bin/node') + ' ' + singleQuote("/tmp/it's here/hook.cjs") + ' ' + singleQuote('/tmp/x/hooks.sock');
    const args = codexHookArgs(command);
    expect(args.at(-1)).toBe('--dangerously-bypass-hook-trust');
    const overrides = new Map<string, unknown>();
    for (let i = 0; i < args.length - 1; i += 2) {
      expect(args[i]).toBe('-c');
      const [key, ...value] = args[i + 1]!.split('=');
      overrides.set(key!, readInlineToml(value.join('=')));
    }
    expect([...overrides.keys()].sort()).toEqual(['hooks.PermissionRequest', 'hooks.SessionStart', 'hooks.Stop', 'hooks.UserPromptSubmit']);
    for (const [key, value] of overrides) {
      const [group] = value as { hooks: { type: string; command: string; timeout: number }[] }[];
      expect(group!.hooks).toEqual([{ type: 'command', command, timeout: key === 'hooks.PermissionRequest' ? 86_400 : 10 }]);
    }
  });

  it('the hook directory is private, holds the script, and its command reaches the socket', async () => {
    const dir = await createHookDir('ase-cx-test-');
    dirs.push(dir);
    expect(statSync(dir.dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(`${dir.dir}/hook.cjs`, 'utf8')).toContain('PermissionRequest');
    const server = await HookServer.listen(dir.socketPath, (call) => call.reply({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }));
    try {
      const stdout = await new Promise<string>((resolve, reject) => {
        const child = execFile('/bin/sh', ['-c', dir.command], (error, out) => (error ? reject(error) : resolve(out)));
        child.stdin!.end(JSON.stringify({ hook_event_name: 'PermissionRequest', tool_name: 'Bash' }));
      });
      expect(JSON.parse(stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    } finally {
      await server.close();
    }
    await dir.remove();
    expect(() => statSync(dir.dir)).toThrow();
  });

  it("names the directory after the host's pid, and removes those of hosts that are gone (a SIGKILLed host could not)", async () => {
    const dir = await createHookDir('ase-cx-test-');
    dirs.push(dir);
    expect(dir.dir).toMatch(new RegExp(`/ase-cx-test-${process.pid}-[A-Za-z0-9]+$`));

    const base = mkdtempSync(join(tmpdir(), 'ase-hookdir-sweep-'));
    try {
      // A pid that existed and is gone: a child that already exited.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout.trim();
      const abandoned = join(base, `ase-cx-${gone}-abc123`);
      const ours = join(base, `ase-cx-${process.pid}-def456`);
      const living = join(base, `ase-cx-1-ghi789`); // init: alive
      const other = join(base, `ase-cl-${gone}-jkl012`); // another prefix
      for (const path of [abandoned, ours, living, other]) mkdirSync(join(path, 'inner'), { recursive: true });
      expect(await removeAbandonedHookDirs('ase-cx-', base)).toEqual([abandoned]);
      expect([abandoned, ours, living, other].map((path) => existsSync(path))).toEqual([false, true, true, true]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a line that never ends is cut off at the bound: the connection closes, no call reaches the engine', async () => {
    const dir = await createHookDir('ase-cx-test-');
    dirs.push(dir);
    let calls = 0;
    const server = await HookServer.listen(dir.socketPath, (call) => {
      calls++;
      call.reply();
    });
    try {
      const closed = await new Promise<boolean>((resolve) => {
        const socket = createConnection(dir.socketPath);
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(true));
        const chunk = 'x'.repeat(1024 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent <= MAX_HOOK_LINE_CHARS + chunk.length && !socket.destroyed) {
            sent += chunk.length;
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
        };
        socket.on('connect', pump);
      });
      expect(closed).toBe(true);
      expect(calls).toBe(0);
    } finally {
      await server.close();
    }
  });
});
