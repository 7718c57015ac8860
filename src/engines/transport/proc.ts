/**
 * Reading Linux's /proc: one place for the process table the supervisor (descendants), the reaper
 * (what a dead host left) and the stores (is a lock's or lease's owner alive) all consult. A pid
 * alone is not an identity, the kernel reuses them: a process is its pid plus its start time
 * (field 22 of `/proc/<pid>/stat`, clock ticks after boot) within one boot (the boot id).
 * Without /proc (not Linux) every reader returns undefined or nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** The fields of `/proc/<pid>/stat` the library uses. */
export interface ProcStat {
  pid: number;
  /** Field 3: R, S, D, Z (zombie), X (dead), … */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Field 22: clock ticks after boot. */
  starttime: bigint;
}

export function parseStat(text: string): ProcStat | undefined {
  const open = text.indexOf(' (');
  // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const starttime = fields[19];
  if (fields.length < 20 || starttime === undefined || !/^\d+$/.test(starttime)) return undefined;
  return {
    pid: Number(text.slice(0, open)),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    starttime: BigInt(starttime),
  };
}

export function readStat(pid: number): ProcStat | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The pid the kernel handed out last in this pid namespace (the fifth field of `/proc/loadavg`), or
 * undefined without /proc. Pids are handed out in increasing order and wrap at `pid_max`, so the
 * processes started since an earlier reading are those with pids after it: a watcher that sees the
 * same value twice knows no process (and no thread) was started on the machine in between.
 */
export function lastPid(): number | undefined {
  try {
    const text = readFileSync('/proc/loadavg', 'latin1');
    const value = Number(text.slice(text.lastIndexOf(' ') + 1));
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `/proc/sys/kernel/pid_max`: pids wrap around below it. */
export function pidMax(): number {
  try {
    const value = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
    return Number.isSafeInteger(value) && value > 0 ? value : 4_194_304;
  } catch {
    return 4_194_304;
  }
}

/**
 * True when `pid` is a process (a thread group leader), not another thread of one. /proc answers
 * for thread ids too (they are hidden from its listing only), with the thread's parent process as
 * ppid; a watcher reading pids one by one must not take a thread for a child.
 */
export function isThreadGroupLeader(pid: number): boolean {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'latin1');
    const at = text.indexOf('\nTgid:');
    return at >= 0 && Number.parseInt(text.slice(at + 6), 10) === pid;
  } catch {
    return false;
  }
}

/** Every process /proc lists. */
export function scanProc(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = readStat(Number(name));
    if (stat) out.push(stat);
  }
  return out;
}

const isGone = (stat: ProcStat): boolean => stat.state === 'Z' || stat.state === 'X' || stat.state === 'x';

/** The start time of a live process, or undefined when it does not exist, is a zombie, or /proc cannot be read. */
export function processStartTime(pid: number): string | undefined {
  const stat = readStat(pid);
  return stat && !isGone(stat) ? String(stat.starttime) : undefined;
}

/** True while `pid` is the process that started at `startTime` (not a zombie, not a reused pid). */
export function isRunning(pid: number, startTime: string): boolean {
  return processStartTime(pid) === startTime;
}

/** This boot's id (`/proc/sys/kernel/random/boot_id`), '' when unknown. */
export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}
