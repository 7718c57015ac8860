/**
 * The process registry (records of every spawned process in `<dataDir>/processes`) and the reaper
 * (what a dead host left is killed when the data dir is opened again), with real processes.
 * The reaper must never kill a process it cannot prove is ours: a reused pid (same number, other
 * start time), a live host's processes, another machine's or an earlier boot's records.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';
import { reapOrphanedProcesses } from '../../src/effects/process-reaper.js';
import { PROCESS_TAG_VAR, ProcessRegistry, recordFileName, type ProcessRecord } from '../../src/effects/process-registry.js';
import { processStartTime } from '../../src/engines/transport/proc.js';
import { currentProcess } from '../../src/effects/store/process-identity.js';

const linux = process.platform === 'linux';
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const shutdown = { stdinGraceMs: 50, termGraceMs: 1_000 };
const roots: string[] = [];
const started: SupervisedProcess[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ase-registry-'));
  roots.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  return processStartTime(pid) !== undefined; // undefined for gone and zombie
}

async function waitFor(check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function readRecords(dir: string): ProcessRecord[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.json')).map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as ProcessRecord);
}

/** A process that is not supervised (as if a dead host had left it), optionally carrying a tag. */
async function stray(extraEnv: Record<string, string> = {}): Promise<ChildProcess & { pid: number }> {
  const child = spawn('sleep', ['30'], { env: { ...env, ...extraEnv }, stdio: 'ignore', detached: true });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child as ChildProcess & { pid: number };
}

/** A host identity that is dead: this pid, another start time. */
const deadHost = () => ({ ...currentProcess(), startTime: '1' });

function plant(dir: string, record: Partial<ProcessRecord> & { tag: string; host: ProcessRecord['host'] }): string {
  mkdirSync(dir, { recursive: true });
  const full: ProcessRecord = { version: 1, sessionId: 's', file: 'agent', spawnedAt: Date.now(), pid: 999_999_999, pgid: 999_999_999, startTime: '1', descendants: [], ...record };
  const file = join(dir, recordFileName(record.host, record.tag));
  writeFileSync(file, JSON.stringify(full));
  return file;
}

describe.runIf(linux)('ProcessRegistry', () => {
  it('records a spawned process durably (pid, start time, group, session, host), tags its environment, removes it once reaped', async () => {
    const dir = join(tempDir(), 'processes');
    const registry = new ProcessRegistry({ dir });
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown, observer: registry.observer('session-1') });
    started.push(p);
    await registry.settled();
    const [record, ...more] = readRecords(dir);
    expect(more).toEqual([]);
    expect(record).toMatchObject({
      version: 1,
      sessionId: 'session-1',
      file: 'sleep',
      pid: p.pid,
      pgid: p.pid,
      startTime: processStartTime(p.pid),
      host: { pid: process.pid, startTime: processStartTime(process.pid), host: os.hostname() },
    });
    expect(readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0')).toContain(`${PROCESS_TAG_VAR}=${record!.tag}`);
    await p.stop();
    await registry.settled();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('records the descendants the supervisor collects, a setsid one included', async () => {
    const dir = join(tempDir(), 'processes');
    const registry = new ProcessRegistry({ dir });
    const p = await spawnSupervised({
      file: 'sh',
      args: ['-c', 'setsid sleep 30 & sleep 30 & wait'],
      cwd: tmpdir(),
      env,
      shutdown,
      descendantPollMs: 20,
      observer: registry.observer('s'),
    });
    started.push(p);
    await waitFor(() => p.descendants().length >= 2);
    await new Promise((r) => setTimeout(r, 1_200)); // descendants are written at most once a second
    await registry.settled();
    const [record] = readRecords(dir);
    const recorded = record!.descendants.map((d) => d.pid).sort();
    expect(recorded).toEqual(p.descendants().filter((pid) => pid !== p.pid).sort());
    for (const d of record!.descendants) expect(d.startTime).toBe(processStartTime(d.pid));
  });

  it('a spawn that fails leaves no record', async () => {
    const dir = join(tempDir(), 'processes');
    const registry = new ProcessRegistry({ dir });
    await expect(spawnSupervised({ file: '/nonexistent/agent', args: [], cwd: tmpdir(), env, observer: registry.observer('s') })).rejects.toMatchObject({ code: 'ENGINE_START_FAILED' });
    await registry.settled();
    expect(readRecords(dir)).toEqual([]);
  });
});

describe.runIf(linux)('reapOrphanedProcesses', () => {
  it('kills what a dead host left, found by tag, by recorded pid + start time, by group, and their children; removes the record', async () => {
    const dir = join(tempDir(), 'processes');
    const tag = randomUUID();
    const tagged = await stray({ [PROCESS_TAG_VAR]: tag }); // e.g. a setsid child (env inherited)
    const recorded = await stray(); // e.g. a collected descendant that scrubbed its environment
    const file = plant(dir, { tag, host: deadHost(), descendants: [{ pid: recorded.pid, startTime: processStartTime(recorded.pid)! }] });
    const report = await reapOrphanedProcesses(dir);
    expect(report.orphaned).toBe(1);
    expect(report.killed.sort()).toEqual([tagged.pid, recorded.pid].sort());
    expect(report.survivors).toEqual([]);
    expect(alive(tagged.pid) || alive(recorded.pid)).toBe(false);
    expect(readdirSync(dir)).not.toContain(file.split('/').at(-1));
  });

  it('never kills a reused pid: the recorded pid alive with another start time is left alone', async () => {
    const dir = join(tempDir(), 'processes');
    const stranger = await stray();
    plant(dir, { tag: randomUUID(), host: deadHost(), pid: stranger.pid, pgid: stranger.pid, startTime: '12345', descendants: [{ pid: stranger.pid, startTime: '12345' }] });
    const report = await reapOrphanedProcesses(dir);
    expect(report).toMatchObject({ orphaned: 1, killed: [], survivors: [] });
    expect(alive(stranger.pid)).toBe(true);
    expect(readRecords(dir)).toEqual([]); // the dead host's record is gone
  });

  it("leaves a live host's records and processes alone (another host using the same data dir)", async () => {
    const dir = join(tempDir(), 'processes');
    const tag = randomUUID();
    const mine = await stray({ [PROCESS_TAG_VAR]: tag });
    plant(dir, { tag, host: currentProcess(), pid: mine.pid, pgid: mine.pid, startTime: processStartTime(mine.pid)! });
    expect(await reapOrphanedProcesses(dir)).toMatchObject({ orphaned: 0, killed: [] });
    expect(alive(mine.pid)).toBe(true);
    expect(readRecords(dir)).toHaveLength(1);
  });

  it("leaves another machine's records alone (a shared data dir), and drops an earlier boot's without killing", async () => {
    const dir = join(tempDir(), 'processes');
    const tag = randomUUID();
    const p = await stray({ [PROCESS_TAG_VAR]: tag });
    const start = processStartTime(p.pid)!;
    plant(dir, { tag, host: { ...deadHost(), host: 'some-other-machine' }, pid: p.pid, pgid: p.pid, startTime: start });
    expect(await reapOrphanedProcesses(dir)).toMatchObject({ orphaned: 0, killed: [] });
    expect(readRecords(dir)).toHaveLength(1);
    rmSync(dir, { recursive: true });
    plant(dir, { tag, host: { ...deadHost(), bootId: 'an-earlier-boot' }, pid: p.pid, pgid: p.pid, startTime: start });
    expect(await reapOrphanedProcesses(dir)).toMatchObject({ orphaned: 1, killed: [] });
    expect(alive(p.pid)).toBe(true);
    expect(readRecords(dir)).toEqual([]);
  });

  it('removes files that are not records, and temp files of writes a crash interrupted (once a minute old)', async () => {
    const dir = join(tempDir(), 'processes');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'garbage.json'), '{"not": "a record"');
    writeFileSync(join(dir, 'old.json.123.abc.tmp'), '{');
    utimesSync(join(dir, 'old.json.123.abc.tmp'), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    writeFileSync(join(dir, 'new.json.123.def.tmp'), '{');
    await reapOrphanedProcesses(dir);
    expect(readdirSync(dir)).toEqual(['new.json.123.def.tmp']);
  });

  it('a missing directory is nothing to reap', async () => {
    expect(await reapOrphanedProcesses(join(tempDir(), 'nope'))).toEqual({ orphaned: 0, killed: [], survivors: [] });
  });
});
