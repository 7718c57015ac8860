/**
 * Reaps what a dead host left running: opening a data dir (createSession, later a supervisor) reads
 * the process registry's records (process-registry.ts) and, for every record whose host process is
 * gone, kills the recorded process tree before anything new starts, then removes the record.
 *
 * A pid alone never decides a kill: the kernel reuses pids. A process is killed only when
 * - it is the recorded process or a recorded descendant AND its start time (field 22 of
 *   /proc/<pid>/stat) is the recorded one, or
 * - its environment carries the record's tag (`ASE_PROCESS_TAG=<random uuid>`, inherited by the
 *   whole tree) and it started after the host did, or
 * - it is in the recorded process group while that group is shown to be ours (its leader is the
 *   recorded process, or a process identified above is in it) and it started after the agent, or
 * - its parent is one of the above (its children, found again after everything was stopped).
 * Everything found is SIGSTOPped first, then the table is read again (so nothing forks away between
 * the scan and the kill), then SIGKILLed. The reaping process and its ancestors are never touched
 * (a host started from a dead host's agent, e.g. by its Bash tool, carries that host's tag).
 *
 * A host is dead when it ran on this machine and its pid is gone, shows another start time, or
 * belongs to an earlier boot (then its processes are gone too: only the record is removed).
 * Records of live hosts (another process using the same data dir) and of other machines (a shared
 * data dir) are left alone. Linux only (/proc); elsewhere nothing is killed and records of dead
 * hosts are only removed once their recorded pid is gone.
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { HAS_PROC, isRunning, readStat, scanProc, type ProcStat } from '../engines/transport/proc.js';
import { PROCESS_TAG_VAR, recordFileHost, type ProcessRecord } from './process-registry.js';
import { currentProcess, liveness } from './store/process-identity.js';

export interface ReapReport {
  /** Records of dead hosts found. */
  orphaned: number;
  /** Pids killed. */
  killed: number[];
  /** Pids still alive after the wait (e.g. stuck in uninterruptible sleep): their records are kept. */
  survivors: number[];
}

export interface ReapOptions {
  /** How long to wait for the killed processes to disappear. Default 2000 ms. */
  waitMs?: number;
}

type Stat = ProcStat;

/** Kills what the dead hosts recorded in `dir` (`<dataDir>/processes`) left running, and removes their records. */
export async function reapOrphanedProcesses(dir: string, options: ReapOptions = {}): Promise<ReapReport> {
  const report: ReapReport = { orphaned: 0, killed: [], survivors: [] };
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return report; // no registry yet
  }
  const me = currentProcess();
  const orphans: { file: string; record: ProcessRecord }[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    if (name.endsWith('.tmp')) {
      await removeStaleTemp(file);
      continue;
    }
    if (!name.endsWith('.json')) continue;
    // A live host's records are skipped by name (same pid and start time: its process still runs).
    const named = recordFileHost(name);
    if (named && HAS_PROC && named.startTime !== '0' && isRunning(named.pid, named.startTime)) continue;
    const record = await readRecord(file);
    if (!record) {
      await fs.rm(file, { force: true }); // not a record (torn writes cannot happen: writes are renames)
      continue;
    }
    if (liveness(record.host, me) !== 'dead') continue;
    orphans.push({ file, record });
  }
  report.orphaned = orphans.length;
  if (orphans.length === 0) return report;

  const sameBoot = orphans.filter(({ record }) => !record.host.bootId || !me.bootId || record.host.bootId === me.bootId);
  if (HAS_PROC && sameBoot.length > 0) {
    const records = sameBoot.map((o) => o.record);
    const first = findVictims(records);
    signalAll(first, 'SIGSTOP');
    // Stopped processes cannot fork: children started between the first scan and the stop are found now.
    const all = findVictims(records, first);
    signalAll(all, 'SIGSTOP');
    signalAll(all, 'SIGKILL');
    report.killed = [...all.keys()];
    report.survivors = await waitGone(all, options.waitMs ?? 2_000);
  } else if (!HAS_PROC) {
    // Without /proc a dead host's processes cannot be told from strangers: keep the record while its pid exists.
    for (const { record } of sameBoot) if (pidExists(record.pid)) report.survivors.push(record.pid);
  }
  if (report.survivors.length === 0) {
    for (const { file } of orphans) await fs.rm(file, { force: true });
  }
  return report;
}

async function readRecord(file: string): Promise<ProcessRecord | undefined> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<ProcessRecord>;
    const host = value.host as Partial<ProcessRecord['host']> | undefined;
    if (value.version !== 1 || typeof value.tag !== 'string' || !Number.isSafeInteger(value.pid) || !Number.isSafeInteger(value.pgid)) return undefined;
    if (typeof host !== 'object' || host === null || typeof host.host !== 'string' || !Number.isSafeInteger(host.pid)) return undefined;
    return { ...value, descendants: Array.isArray(value.descendants) ? value.descendants : [] } as ProcessRecord;
  } catch {
    return undefined;
  }
}

/** A temp file of a write that died with its host: removed once it is a minute old. */
async function removeStaleTemp(file: string): Promise<void> {
  try {
    const { mtimeMs } = await fs.stat(file);
    if (Date.now() - mtimeMs > 60_000) await fs.rm(file, { force: true });
  } catch {
    // gone meanwhile
  }
}

/** pid → start time of every process the records own (see the header), starting from `known`. */
function findVictims(records: readonly ProcessRecord[], known: ReadonlyMap<number, bigint> = new Map()): Map<number, bigint> {
  const table = scanProc();
  const byPid = new Map(table.map((st) => [st.pid, st]));
  const victims = new Map<number, bigint>();
  // Never this process or its ancestors (a host started by a dead host's agent carries its tag).
  const spared = new Set<number>();
  for (let pid: number | undefined = process.pid; pid !== undefined && pid > 1 && !spared.has(pid); pid = byPid.get(pid)?.ppid) spared.add(pid);
  const take = (st: Stat | undefined): void => {
    if (!st || spared.has(st.pid) || st.pid <= 1 || st.state === 'Z' || st.state === 'X') return;
    victims.set(st.pid, st.starttime);
  };
  for (const [pid, start] of known) if (byPid.get(pid)?.starttime === start) take(byPid.get(pid));
  const tags = new Map<string, bigint>(); // tag → earliest start a tagged process may have (the host's)
  for (const record of records) {
    const same = (pid: number, start: string): boolean => start !== '' && byPid.get(pid)?.starttime === safeBigInt(start);
    if (same(record.pid, record.startTime)) take(byPid.get(record.pid));
    for (const d of record.descendants) if (Number.isSafeInteger(d.pid) && typeof d.startTime === 'string' && same(d.pid, d.startTime)) take(byPid.get(d.pid));
    tags.set(`${PROCESS_TAG_VAR}=${record.tag}`, safeBigInt(record.host.startTime) ?? 0n);
  }
  for (const st of table) {
    if (victims.has(st.pid)) continue;
    const environ = readEnviron(st.pid);
    if (environ === undefined) continue;
    for (const [entry, notBefore] of tags) {
      if (st.starttime >= notBefore && environ.includes(entry)) {
        take(st);
        break;
      }
    }
  }
  // Whole groups: only those shown to be ours (a process group id cannot be reused while a member lives).
  for (const record of records) {
    const agentStart = safeBigInt(record.startTime);
    if (agentStart === undefined) continue;
    const leader = byPid.get(record.pgid);
    const ours = (leader !== undefined && leader.starttime === agentStart) || [...victims.keys()].some((pid) => byPid.get(pid)?.pgrp === record.pgid);
    if (!ours) continue;
    for (const st of table) if (st.pgrp === record.pgid && st.starttime >= agentStart) take(st);
  }
  // Children of anything taken (a parent's start time precedes its child's by construction).
  const children = new Map<number, Stat[]>();
  for (const st of table) {
    const list = children.get(st.ppid);
    if (list) list.push(st);
    else children.set(st.ppid, [st]);
  }
  const queue = [...victims.keys()];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (victims.has(child.pid)) continue;
      take(child);
      if (victims.has(child.pid)) queue.push(child.pid);
    }
  }
  return victims;
}

function safeBigInt(text: string | undefined): bigint | undefined {
  if (!text || !/^\d+$/.test(text)) return undefined;
  return BigInt(text);
}

function readEnviron(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined; // gone, or not ours to read (another user's process is never ours)
  }
}

function signalAll(victims: ReadonlyMap<number, bigint>, signal: NodeJS.Signals): void {
  for (const [pid, start] of victims) {
    // Checked right before each signal: the pid must still be the process we found.
    if (readStat(pid)?.starttime !== start) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

async function waitGone(victims: ReadonlyMap<number, bigint>, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const alive = [...victims].filter(([pid, start]) => {
      const st = readStat(pid);
      return st !== undefined && st.starttime === start && st.state !== 'Z' && st.state !== 'X';
    });
    if (alive.length === 0) return [];
    if (Date.now() >= deadline) return alive.map(([pid]) => pid);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
