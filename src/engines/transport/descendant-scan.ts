/**
 * The host-wide tick that finds new processes for every supervised process tree (process-supervisor.ts)
 * at once, so that sessions that sit still cost (next to) nothing, however many there are and however
 * many processes the machine runs (issue 24).
 *
 * Why not one /proc scan per tree per tick: that is sessions × machine processes stat reads every
 * 250 ms (100 idle sessions on a machine of 1,100 processes kept a core busy). Instead:
 * - One timer for the whole host, running only while some tree is supervised.
 * - Each tick reads the pid the kernel handed out last (`/proc/loadavg`). Pids are handed out in
 *   increasing order (wrapping at pid_max), so a process started since the last tick has a pid in
 *   (previous, now]: only those are read, once, for every tree. When no pid was handed out, no
 *   process was started anywhere and the tick reads nothing else.
 * - A tree's own members are never re-read while running: a process cannot become a descendant
 *   later than its start (its parent is fixed at fork; only re-parenting to init or a subreaper,
 *   never to us, changes it; joining a session or group needs to be in it already).
 * - The whole table is still read where that is cheaper or the only way: when more pids were handed
 *   out than the machine has processes, when /proc cannot be trusted to match our pid namespace,
 *   and every {@link BACKSTOP_MS} as a backstop (forgetting exited descendants; a privileged process
 *   choosing its child's pid via clone3 set_tid would otherwise go unseen until the stop's scan).
 * - A pid handed out but not yet visible (the kernel allocates the pid a little before it attaches
 *   the task) is read again on the next tick; see {@link RETRY_TOP}.
 * - A tree joins with the last pid read before its spawn: when the tick has moved on meanwhile, the
 *   pids in between are read for that tree alone (no whole-table read per spawn).
 * - A process read here after its parent exited, out of the tree's session, is matched by the
 *   tree's environment mark (tree-tag.ts), not by parent links.
 * The stop ladder and the exit hook keep their full scans (process-supervisor.ts): what is signalled
 * at stop never depends on this tick.
 */
import { HAS_PROC, lastPid, parseStat, pidMax, readStat, scanProc, type ProcStat } from './proc.js';
import { readdirSync, readFileSync } from 'node:fs';
import { pruneTreeTags } from './tree-tag.js';

/** A supervised tree's side of the tick. */
export interface ScanSubscriber {
  /** The interval it asked for (the tick runs at the smallest one). */
  readonly pollMs: number;
  /**
   * One tick's news: `full` — the whole process table; otherwise the processes (and threads) started
   * since the previous tick (usually none).
   */
  scanned(update: ScanUpdate): void;
}

export interface ScanUpdate {
  full: boolean;
  stats: readonly ProcStat[];
}

/** A full table read at least this often while trees are supervised. */
export const BACKSTOP_MS = 30_000;
/** Below this many new pids they are read one by one; above it (or above the machine's process count) the table is read instead. */
const MAX_DIRECT_READS = 512;
/** Pids not found among the newest this many of a range are read again on the next tick (pid allocated, task not attached yet). */
const RETRY_TOP = 16;
/** Above this many new pids, the /proc listing picks the processes among them before any is read. */
const LIST_ABOVE = 16;

/** The pids /proc lists (processes, not threads). */
function processIds(): Set<number> {
  const out = new Set<number>();
  try {
    for (const name of readdirSync('/proc')) {
      const c = name.charCodeAt(0);
      if (c >= 48 && c <= 57) out.add(Number(name));
    }
  } catch {
    // no /proc: nothing listed
  }
  return out;
}

/** Whether /proc describes our own pid namespace (else `lastPid()` and /proc/<pid> do not agree). */
const FAST_PATH = (() => {
  if (!HAS_PROC) return false;
  try {
    return parseStat(readFileSync('/proc/self/stat', 'latin1'))?.pid === process.pid && lastPid() !== undefined;
  } catch {
    return false;
  }
})();

class HostScan {
  readonly #subscribers = new Set<ScanSubscriber>();
  #timer: NodeJS.Timeout | undefined;
  #intervalMs = 0;
  /** The last pid covered; undefined: the next tick reads the whole table. */
  #cursor: number | undefined;
  #retry: number[] = [];
  #lastFull = 0;
  #tableSize = 0;
  /** Counters for tests and benchmarks. */
  readonly counts = { ticks: 0, quiet: 0, direct: 0, full: 0, statReads: 0 };

  /**
   * Adds a tree. `coveredUpTo`: the last pid handed out before anything of the tree could start
   * (read before its spawn, or before its own first whole-table snapshot), so the tick covers
   * everything started after it. When the tick has already moved past that pid (it ran while the
   * spawn was under way), the pids in between are read now for this tree alone. `ticksAt`: the
   * tick count read with `coveredUpTo`; when no tick ran since, the next one covers the tree and
   * nothing is read now (without it, a cursor behind `coveredUpTo` would look like a wrap past
   * pid_max and cost a whole-table read on every spawn while another tree is supervised).
   */
  add(subscriber: ScanSubscriber, coveredUpTo: number | undefined, ticksAt?: number): void {
    if (this.#subscribers.size === 0) {
      this.#cursor = FAST_PATH ? coveredUpTo : undefined;
      this.#retry = [];
      this.#lastFull = Date.now();
    } else if (FAST_PATH && coveredUpTo !== undefined && this.#cursor !== undefined && coveredUpTo !== this.#cursor && ticksAt !== this.counts.ticks) {
      const range = this.#range(coveredUpTo, this.#cursor);
      const catchUp: ScanUpdate = range ? { full: false, stats: this.#readPids(range).stats } : { full: true, stats: scanProc() };
      try {
        subscriber.scanned(catchUp);
      } catch {
        // as in tick()
      }
    }
    this.#subscribers.add(subscriber);
    this.#schedule();
  }

  remove(subscriber: ScanSubscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    this.#schedule();
  }

  /** The last pid handed out, read before a full snapshot (see {@link add}). */
  cursor(): number | undefined {
    return FAST_PATH ? lastPid() : undefined;
  }

  #schedule(): void {
    let interval = Infinity;
    for (const s of this.#subscribers) interval = Math.min(interval, s.pollMs);
    if (this.#subscribers.size === 0) {
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = undefined;
      this.#intervalMs = 0;
      return;
    }
    if (this.#timer && interval === this.#intervalMs) return;
    if (this.#timer) clearInterval(this.#timer);
    this.#intervalMs = interval;
    this.#timer = setInterval(() => this.tick(), interval);
    this.#timer.unref();
  }

  /** One tick for every tree (also called directly by tests). */
  tick(): void {
    this.counts.ticks++;
    const update = this.#read();
    for (const subscriber of [...this.#subscribers]) {
      try {
        subscriber.scanned(update);
      } catch {
        // One tree's failure must not stop the others' supervision.
      }
    }
  }

  #read(): ScanUpdate {
    if (!HAS_PROC) return { full: false, stats: [] };
    const now = FAST_PATH ? lastPid() : undefined;
    const cursor = this.#cursor;
    if (now === undefined || cursor === undefined || Date.now() - this.#lastFull >= BACKSTOP_MS) return this.#full(now);
    if (now === cursor && this.#retry.length === 0) {
      this.counts.quiet++;
      return { full: false, stats: [] };
    }
    const range = this.#range(cursor, now);
    if (range === undefined) return this.#full(now);
    const { stats, missing } = this.#readPids(range, this.#retry);
    // Only the newest pids of this range can be in flight (a retried one still missing is gone).
    const newest = new Set(range.slice(-RETRY_TOP));
    this.#retry = missing.filter((pid) => newest.has(pid));
    this.#cursor = now;
    this.counts.direct++;
    return { full: false, stats };
  }

  /** Reads `range` (new pids) and `retry` (pids not visible last time); `missing`: pids of `range` without a process. */
  #readPids(range: readonly number[], retry: readonly number[] = []): { stats: ProcStat[]; missing: number[] } {
    const stats: ProcStat[] = [];
    const missing: number[] = [];
    for (const pid of retry) {
      const stat = readStat(pid);
      if (stat) stats.push(stat);
    }
    this.counts.statReads += retry.length;
    // Many new pids (a busy machine: mostly threads and short-lived processes of others) are
    // filtered by the listing first, which names processes only: one directory read instead of a
    // failed open per thread.
    const listed = range.length > LIST_ABOVE ? processIds() : undefined;
    for (const pid of range) {
      if (listed && !listed.has(pid)) {
        missing.push(pid);
        continue;
      }
      this.counts.statReads++;
      const stat = readStat(pid);
      if (stat) stats.push(stat);
      else missing.push(pid);
    }
    return { stats, missing };
  }

  /** The pids in (from, to], wrapping at pid_max; undefined when reading the table is cheaper. */
  #range(from: number, to: number): number[] | undefined {
    const limit = Math.min(MAX_DIRECT_READS, Math.max(64, this.#tableSize));
    const out: number[] = [];
    if (to >= from) {
      if (to - from > limit) return undefined;
      for (let pid = from + 1; pid <= to; pid++) out.push(pid);
      return out;
    }
    const max = pidMax();
    if (max - 1 - from + to > limit) return undefined;
    for (let pid = from + 1; pid < max; pid++) out.push(pid);
    for (let pid = 1; pid <= to; pid++) out.push(pid);
    return out;
  }

  #full(now: number | undefined): ScanUpdate {
    const stats = scanProc();
    this.counts.full++;
    this.counts.statReads += stats.length;
    this.#tableSize = stats.length;
    pruneTreeTags(stats);
    this.#cursor = now;
    this.#retry = [];
    this.#lastFull = Date.now();
    return { full: true, stats };
  }
}

/** The one tick of this host process. */
export const hostScan = new HostScan();
