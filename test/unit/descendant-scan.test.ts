/**
 * The host-wide descendant tick (descendant-scan.ts): descendants started after the spawn are found
 * from the pids handed out since the last tick, not by re-reading the whole process table; a thread
 * is never taken for a child process; and a tick's cost follows the pids the machine handed out,
 * not how many trees are supervised or how many processes run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { hostScan, type ScanUpdate } from '../../src/engines/transport/descendant-scan.js';
import { buildEnv } from '../../src/engines/transport/env.js';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';
import { lastPid } from '../../src/engines/transport/proc.js';
import { isAlive } from '../support/processes.js';

const linux = process.platform === 'linux';
const env = buildEnv();
const shutdown = { stdinGraceMs: 200, termGraceMs: 500 };
const started: SupervisedProcess[] = [];
const others: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
  for (const child of others.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

async function sh(script: string, pollMs = 20): Promise<SupervisedProcess> {
  const p = await spawnSupervised({ file: 'sh', args: ['-c', script], cwd: tmpdir(), env, shutdown, descendantPollMs: pollMs });
  started.push(p);
  return p;
}

async function firstLine(p: SupervisedProcess): Promise<string> {
  let text = '';
  for await (const chunk of p.stdout) {
    text += (chunk as Buffer).toString();
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!;
}

async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(linux)('host-wide descendant tick', () => {
  it('finds a descendant started after the spawn from the new pids alone, and the setsid one it left', async () => {
    const fullBefore = hostScan.counts.full;
    // The grandchild starts later than the spawn's own table read, and leaves the group with setsid.
    const p = await sh("sleep 0.5; setsid sleep 300 & echo $!; cat >/dev/null");
    const pid = Number(await firstLine(p));
    await until(() => p.descendants().includes(pid), 'the setsid grandchild collected');
    // Found by the tick reading started pids, not by a table read (unless the 30 s backstop fell in).
    expect(hostScan.counts.full - fullBefore).toBeLessThanOrEqual(1);
    expect(hostScan.counts.direct).toBeGreaterThan(0);
    const result = await p.stop();
    expect(result.survivors).toEqual([]);
    expect(isAlive(pid)).toBe(false);
  });

  it('never takes a thread for a child process', async () => {
    // A node grandchild has several threads; /proc/<tid>/stat names the grandchild's parent as their ppid.
    const script = `sleep 0.3; "${process.execPath}" -e "new (require('worker_threads').Worker)('setInterval(()=>{},1000)',{eval:true}); setInterval(()=>{},1000)" & echo $!; cat >/dev/null`;
    const p = await sh(script);
    const nodePid = Number(await firstLine(p));
    await until(() => p.descendants().includes(nodePid), 'the node grandchild collected');
    await until(() => readdirSync(`/proc/${nodePid}/task`).length > 2, 'its threads running');
    // Let a few more ticks pass over the threads' pids.
    const ticks = hostScan.counts.ticks;
    await until(() => hostScan.counts.ticks > ticks + 5, 'more ticks');
    const threads = readdirSync(`/proc/${nodePid}/task`).map(Number).filter((tid) => tid !== nodePid);
    expect(threads.length).toBeGreaterThan(0);
    for (const tid of threads) expect(p.descendants()).not.toContain(tid);
    expect((await p.stop()).survivors).toEqual([]);
  });

  it('a tick reads the pids handed out since the last one, not every process, however many trees wait', async () => {
    // 10 idle trees and 300 other sleeping processes: a per-tree or whole-table read would be thousands.
    await Promise.all(Array.from({ length: 10 }, () => sh('cat >/dev/null', 250)));
    const crowd = spawn('sh', ['-c', 'i=0; while [ $i -lt 300 ]; do sleep 300 & i=$((i+1)); done; echo up; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    others.push(crowd);
    await new Promise<void>((resolve) => crowd.stdout!.on('data', () => resolve()));
    const processes = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
    expect(processes).toBeGreaterThan(300);
    hostScan.tick(); // catches up with the crowd's pids
    const samples: { reads: number; full: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const reads = hostScan.counts.statReads;
      const full = hostScan.counts.full;
      hostScan.tick();
      samples.push({ reads: hostScan.counts.statReads - reads, full: hostScan.counts.full - full });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Each tick read at most the pids handed out around it plus the few retried ones, never the table.
    const quiet = samples.filter((s) => s.full === 0);
    expect(quiet.length).toBeGreaterThanOrEqual(19);
    for (const s of quiet) expect(s.reads).toBeLessThan(processes / 2);
  });
  it('a tree that joins after the tick moved past its spawn gets the pids in between read for it alone', async () => {
    // What a spawn meets when the tick runs while it waits for the child's 'spawn' event.
    const other = { pollMs: 60_000, scanned: () => undefined };
    hostScan.add(other, hostScan.cursor());
    try {
      const before = lastPid()!;
      const child = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
      others.push(child);
      await new Promise((resolve) => child.once('spawn', resolve));
      await until(() => lastPid()! >= child.pid!, 'the pid visible in /proc/loadavg');
      hostScan.tick(); // the host's cursor is now past the child's pid
      const updates: ScanUpdate[] = [];
      const late = { pollMs: 60_000, scanned: (update: ScanUpdate) => void updates.push(update) };
      hostScan.add(late, before);
      hostScan.remove(late);
      expect(updates).toHaveLength(1);
      expect(updates[0]!.stats.map((st) => st.pid)).toContain(child.pid);
    } finally {
      hostScan.remove(other);
    }
  });
});

describe.runIf(linux)('a tree joining while another is supervised', () => {
  it('reads nothing at once when no tick ran since its spawn read the cursor (the next tick covers it)', async () => {
    const other = { pollMs: 60_000, scanned: () => undefined };
    hostScan.add(other, hostScan.cursor());
    try {
      hostScan.tick();
      // Pids handed out after that tick, before the spawn's reading: the reading is ahead of the cursor.
      const before = spawn('true', [], { stdio: 'ignore' });
      await new Promise((resolve) => before.once('exit', resolve));
      const coveredUpTo = hostScan.cursor();
      const ticksAt = hostScan.counts.ticks;
      // Pids handed out after the reading (a spawn's own child among them): the cursor is now behind.
      const child = spawn('true', [], { stdio: 'ignore' });
      await new Promise((resolve) => child.once('exit', resolve));
      await until(() => lastPid()! !== coveredUpTo, 'a pid handed out after the reading');
      if (hostScan.counts.ticks !== ticksAt) return; // a tick of the other tree ran meanwhile: nothing to check
      const full = hostScan.counts.full;
      const reads = hostScan.counts.statReads;
      const updates: ScanUpdate[] = [];
      const joining = { pollMs: 60_000, scanned: (update: ScanUpdate) => void updates.push(update) };
      hostScan.add(joining, coveredUpTo, ticksAt);
      hostScan.remove(joining);
      expect(updates).toEqual([]);
      expect(hostScan.counts.full - full).toBe(0);
      expect(hostScan.counts.statReads - reads).toBe(0);
    } finally {
      hostScan.remove(other);
    }
  });
});
