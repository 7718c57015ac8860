/**
 * The setsid escape (issue 24, the codex-exec `resume` leftovers): a grandchild that leaves the
 * tree's session and outlives its parent, with nothing having read it while the parent lived. Once
 * re-parented to init (or a subreaper), nothing in /proc/<pid>/stat links it to the tree: it is found
 * by the mark every supervised child carries in its environment (tree-tag.ts) — at the root's exit,
 * and at stop when an intermediate process exited while the root lived. The tick is slowed down to a
 * minute here, so only those two moments can find it, as under a loaded machine's late ticks.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEnv } from '../../src/engines/transport/env.js';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';
import { readStat } from '../../src/engines/transport/proc.js';
import { TREE_TAG_VAR } from '../../src/engines/transport/tree-tag.js';
import { isAlive } from '../support/processes.js';

const linux = process.platform === 'linux';
const shutdown = { stdinGraceMs: 300, termGraceMs: 1_000 };
const started: SupervisedProcess[] = [];
const strays: number[] = [];
/** A minute: no regular tick reads the grandchild while its parent lives. */
const SLOW_TICK_MS = 60_000;

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

async function sh(script: string, env = buildEnv()): Promise<SupervisedProcess> {
  const p = await spawnSupervised({ file: 'sh', args: ['-c', script], cwd: tmpdir(), env, shutdown, descendantPollMs: SLOW_TICK_MS });
  started.push(p);
  return p;
}

async function firstLine(p: SupervisedProcess): Promise<number> {
  let text = '';
  for await (const chunk of p.stdout) {
    text += (chunk as Buffer).toString();
    if (text.includes('\n')) break;
  }
  const pid = Number(text.split('\n')[0]);
  strays.push(pid);
  return pid;
}

async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The grandchild escaped: its own session, and no parent link to `root` any more. */
function escaped(pid: number, root: number): boolean {
  const st = readStat(pid);
  if (!st || st.session !== pid) return false;
  const parent = readStat(st.ppid);
  return st.ppid !== root && parent?.ppid !== root;
}

/** The grandchild: a new session (setsid), prints its pid, sleeps. Started 0.3 s after the spawn, past any read at the spawn. */
const GRANDCHILD = "sleep 0.3; setsid sh -c 'echo $$; exec sleep 300' &";

describe.runIf(linux)('a setsid grandchild that outlives its parent', () => {
  it('started by the root just before it exits: found at the exit, stopped by stop()', async () => {
    // It has left the session (setsid) before the root exits: no session link either.
    const p = await sh(`${GRANDCHILD} sleep 0.2; exit 0`);
    const pid = await firstLine(p);
    expect(await p.exited).toEqual({ code: 0, signal: null });
    await until(() => escaped(pid, p.pid), 'the grandchild re-parented out of the tree');
    expect(p.descendants()).toContain(pid);
    const result = await p.stop();
    expect(result.rung).toBe('term');
    expect(result.survivors).toEqual([]);
    expect(isAlive(pid)).toBe(false);
  });

  it('left by an intermediate process while the root lives: found and stopped by stop()', async () => {
    // root → middle (a subshell) → grandchild; the middle exits at once, the root waits on stdin.
    const p = await sh(`( ${GRANDCHILD} exit 0 ); cat >/dev/null`);
    const pid = await firstLine(p);
    await until(() => escaped(pid, p.pid), 'the middle process gone and the grandchild re-parented');
    expect(p.exit).toBeUndefined();
    const result = await p.stop();
    expect(result.survivors).toEqual([]);
    expect(isAlive(pid)).toBe(false);
  });

  it('an outer mark in the environment is kept: nested hosts both recognize the tree', async () => {
    const p = await sh(`${GRANDCHILD} cat >/dev/null`, { ...buildEnv(), [TREE_TAG_VAR]: 'outer-host-mark' });
    const pid = await firstLine(p);
    const marks = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').find((e) => e.startsWith(`${TREE_TAG_VAR}=`));
    expect(marks).toMatch(new RegExp(`^${TREE_TAG_VAR}=outer-host-mark,[0-9a-f-]{36}$`));
    await p.stop();
    expect(isAlive(pid)).toBe(false);
  });
});
