/**
 * The PTY runner (src/engines/transport/pty-process.ts) with real processes: a TTY for the child,
 * its own session and process group, read/write/resize through the terminal, and the same stop
 * ladder, descendant reaping and process-registry records as the stdio supervisor.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import { buildEnv } from '../../src/engines/transport/env.js';
import type { DescendantInfo, ProcessObserver, SpawnedProcessInfo } from '../../src/engines/transport/process-observer.js';
import { spawnPty, type PtyProcess, type SpawnPtyOptions } from '../../src/engines/transport/pty-process.js';

const linux = process.platform === 'linux';
const env = buildEnv();
const shutdown = { stdinGraceMs: 300, termGraceMs: 300 };
const started: PtyProcess[] = [];

async function sh(script: string, extra: Partial<SpawnPtyOptions> = {}): Promise<PtyProcess> {
  const p = await spawnPty({ file: 'sh', args: ['-c', script], cwd: tmpdir(), env, shutdown, ...extra });
  started.push(p);
  return p;
}

/**
 * Resolves with everything the terminal printed once `pattern` appears in it. The deadline is
 * generous (a `sh` starting on a loaded 2-core CI machine took seconds); it only bounds a failure.
 */
function output(p: PtyProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no ${pattern} in terminal output: ${JSON.stringify(seen)}`));
    }, timeoutMs);
    const stop = p.onData((data) => {
      seen += data;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        stop();
        resolve(seen);
      }
    });
  });
}

function stat(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  const state = stat(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
});

describe('spawnPty', () => {
  it('gives the child a terminal: it reads what is typed and its output comes back', async () => {
    const p = await sh('[ -t 0 ] && [ -t 1 ] && echo tty-yes; read line; echo "got:$line"');
    await output(p, /tty-yes/);
    const echoed = output(p, /got:hello/);
    p.write('hello\r');
    expect(await echoed).toContain('got:hello');
    expect(await p.exited).toEqual({ code: 0, signal: null });
  });

  it.runIf(linux)('runs the child as the leader of its own session and process group', async () => {
    const p = await sh('echo up; sleep 5');
    await output(p, /up/);
    const fields = stat(p.pid)!;
    // fields: state ppid pgrp session tty_nr
    expect(Number(fields[2])).toBe(p.pid);
    expect(Number(fields[3])).toBe(p.pid);
    expect(Number(fields[4])).not.toBe(0); // it has a controlling terminal
  });

  it('resizes the terminal (the child sees the new size)', async () => {
    const p = await sh('stty size; read _; stty size', { cols: 90, rows: 20 });
    await output(p, /20 90/);
    expect([p.cols, p.rows]).toEqual([90, 20]);
    const after = output(p, /33 101/);
    p.resize(101, 33);
    p.write('\r');
    expect(await after).toMatch(/33 101/);
  });

  it('stops a child that exits on hang-up at the first rung', async () => {
    // A long grace: the trap runs only after the current `sleep` and a fork, which under load can
    // take longer than the suite's 300 ms, and the rung then reads 'terminate'. It costs nothing
    // when the child exits at once.
    const p = await sh("trap 'exit 3' HUP; echo up; while :; do sleep 0.05; done", { shutdown: { stdinGraceMs: 60_000, termGraceMs: 300 } });
    await output(p, /up/);
    const result = await p.stop();
    expect(result.rung).toBe('hangup');
    expect(result.exit).toEqual({ code: 3, signal: null });
    expect(p.stop()).toBe(p.stop());
  });

  it('stops a child that ignores hang-up and SIGTERM with SIGKILL', async () => {
    const p = await sh("trap '' HUP TERM; echo up; while :; do sleep 0.05; done");
    await output(p, /up/);
    const result = await p.stop();
    expect(result.rung).toBe('kill');
    expect(result.exit.signal).toBe('SIGKILL');
    expect(alive(p.pid)).toBe(false);
  });

  it.runIf(linux)('reaps a descendant that escaped the group with setsid, as the stdio supervisor does', async () => {
    const p = await sh("setsid sh -c 'trap \"\" HUP TERM; echo escaped:$$; while :; do sleep 0.05; done' & echo up; wait", { descendantPollMs: 20 });
    const text = await output(p, /escaped:(\d+)/);
    const escaped = Number(/escaped:(\d+)/.exec(text)![1]);
    expect(alive(escaped)).toBe(true);
    // The supervisor's poll (every 20 ms, later under load) finds it: wait for that, not a fixed time.
    await expect.poll(() => p.descendants(), { timeout: 30_000, interval: 20 }).toContain(escaped);
    const result = await p.stop();
    expect(result.survivors).toEqual([]);
    expect(alive(escaped)).toBe(false);
  });

  it.runIf(linux)('reports the process and its tree to the observer, like every other spawn', async () => {
    const calls: string[] = [];
    let spawned: SpawnedProcessInfo | undefined;
    let tree: readonly DescendantInfo[] = [];
    let sawTree = false;
    let marker = '';
    const observer: ProcessObserver = {
      spawning: (file) => {
        calls.push(`spawning ${file}`);
        return {
          env: { ASE_TEST_PTY_MARK: 'mark-1' },
          spawned: (info) => {
            spawned = info;
            calls.push('spawned');
          },
          descendants: (list) => {
            tree = list;
            sawTree ||= list.length > 0;
          },
          reaped: () => void calls.push('reaped'),
        };
      },
    };
    // The descendant lives until the stop (a short-lived one could end unseen when polls run late under load).
    const p = await sh('echo "mark=$ASE_TEST_PTY_MARK"; sleep 60 & wait', { observer, descendantPollMs: 20 });
    marker = await output(p, /mark=mark-1/);
    expect(marker).toContain('mark=mark-1');
    expect(spawned).toMatchObject({ pid: p.pid, pgid: p.pid });
    await expect.poll(() => sawTree, { timeout: 30_000, interval: 20 }).toBe(true);
    await p.stop();
    await p.exited;
    expect(calls).toEqual(['spawning sh', 'spawned', 'reaped']);
  });

  it('refuses a missing executable and a missing working directory before spawning', async () => {
    const missing = await spawnPty({ file: '/nonexistent/agent', args: [], cwd: tmpdir(), env }).catch((e: unknown) => e);
    expect(isAseError(missing) && missing.code).toBe('ENGINE_START_FAILED');
    const noDir = await spawnPty({ file: 'sh', args: [], cwd: '/nonexistent/dir', env }).catch((e: unknown) => e);
    expect(isAseError(noDir) && noDir.code).toBe('INVALID_OPTIONS');
  });

  it('ignores writes and resizes after the child exited', async () => {
    const p = await sh('exit 5');
    expect(await p.exited).toEqual({ code: 5, signal: null });
    expect(() => p.write('late')).not.toThrow();
    expect(() => p.resize(100, 40)).not.toThrow();
  });
});
