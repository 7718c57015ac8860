/**
 * /proc scans for the processes a test started (Linux), so a test can assert that nothing of
 * its own outlives `stop()`. What makes a process "ours" differs per test (a marker in the command
 * line or in the environment, the binary it runs) and stays with the test; the walk over /proc,
 * the lazy reads and the polling are here.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One process, read on demand (a process can vanish between two reads). */
export interface ProcView {
  readonly pid: number;
  /** NUL-separated argv */
  cmdline(): string;
  /** NUL-separated `KEY=value` entries */
  environ(): string;
  /** `pid (comm) state ppid …` */
  stat(): string;
}

/**
 * pids other than this process for which `match` is true. A process whose files cannot be read
 * while `match` looks at them (gone meanwhile, or not ours to read) is skipped.
 */
export function findProcesses(match: (proc: ProcView) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const read = (file: string) => readFileSync(`/proc/${entry}/${file}`, 'utf8');
    const proc: ProcView = { pid: Number(entry), cmdline: () => read('cmdline'), environ: () => read('environ'), stat: () => read('stat') };
    try {
      if (match(proc)) found.push(proc.pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * Live (non-zombie) pids whose command line or environment mentions `marker`: a test's temp root
 * is such a marker, since the hermetic HOME lives under it and every child inherits it.
 */
export function processesUnder(marker: string): number[] {
  return findProcesses((proc) => {
    if (/\) Z /.test(proc.stat())) return false;
    const cmdline = proc.cmdline();
    const environ = proc.environ();
    return cmdline.includes(marker) || environ.includes(marker);
  });
}

/** Polls `scan` every `everyMs` until it finds nothing or `ms` have passed; returns its last answer. */
export async function waitUntilNone(scan: () => number[], ms: number, everyMs: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = scan();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    left = scan();
  }
  return left;
}

/** Waits until no process of ours is left (the stop ladder's last SIGKILLs need a moment). */
export function waitNoProcessesUnder(marker: string, ms = 3_000): Promise<number[]> {
  return waitUntilNone(() => processesUnder(marker), ms, 50);
}

/**
 * The private hook directory (`<tmp>/<prefix><pid>-XXXXXX`) a local-mode engine gave the process `pid`:
 * read off its command line, so a test checks its own directory and not one a test running in
 * parallel created.
 */
export function hookDirOf(pid: number, prefix: string): string {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const found = new RegExp(`(/[^\\0'"]*/${prefix}[A-Za-z0-9-]+)/`).exec(cmdline);
  if (!found) throw new Error(`no ${prefix} directory on the command line of ${pid}: ${cmdline.replace(/\0/g, ' ')}`);
  return found[1]!;
}

/** Whether `pid` runs: in /proc and neither a zombie nor dead. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls `check` every 20 ms; resolves whether it came true within `ms`. */
export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
