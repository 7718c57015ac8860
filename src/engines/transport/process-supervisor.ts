/**
 * Spawns an agent CLI in its own process group and stops it — and everything it spawned — with a
 * ladder: end stdin → `stdinGraceMs` → SIGTERM → `termGraceMs` → SIGKILL.
 *
 * Why `node:child_process` and not execa: execa's `cleanup` option is a documented no-op for
 * `detached` subprocesses (lib/terminate/cleanup.js: `if (!cleanup || detached) return`), its
 * kill helpers target the pid rather than the group, and its result promise settles on stdio
 * close, which a `setsid` grandchild holding the stdout pipe can delay forever. We need the raw
 * 'exit' event, group signals and our own exit hook, so execa would only be in the way.
 *
 * Process tree handling:
 * - The child is spawned `detached` (it becomes a session and process-group leader; pgid = pid),
 *   with no shell and args as an array. Stopping signals the whole group (`kill(-pgid, sig)`).
 * - Linux: Claude Code's Bash tool runs commands under `setsid`, which escapes the group, and such
 *   processes get re-parented to pid 1 (or a subreaper) once their parent dies. So descendants
 *   are COLLECTED: every process whose ppid chain leads to the child (or to an already collected
 *   descendant), or that is in the child's session/group, is remembered with its start time. One
 *   host-wide tick every `descendantPollMs` (default 250 ms, unref'd timer, descendant-scan.ts)
 *   reads only the processes started since the last tick, once for all trees, and nothing at all
 *   when no process was started on the machine (idle sessions cost ~nothing). A spawn reads the
 *   tick's position (the last pid handed out) right before spawning, so the tick covers the tree
 *   from its first process; the child's exit runs a tick at once; right before each signal the
 *   whole /proc/*\/stat table is read. Signals go to remembered pids only while /proc/<pid>/stat
 *   still shows the same start time (no pid-reuse kills; a residual race of microseconds between
 *   check and kill remains). The SIGKILL rung first SIGSTOPs everything and re-scans, so nothing
 *   can fork away between the scan and the kill.
 * - A descendant that setsids and whose parent exits before a tick read it is re-parented to init
 *   (or a subreaper) with no link left in /proc/<pid>/stat (`codex exec` left helpers behind so):
 *   every child carries a mark in its environment that its descendants inherit, and such an orphan
 *   is collected by it (tree-tag.ts).
 * - Limits: a descendant that clears its environment, setsids and whose parent exits before the
 *   next tick escapes collection. Zombies count as dead (pid 1 may not reap). Non-Linux: no /proc,
 *   so only the process group is signalled; setsid escapees survive there.
 * - A `process.on('exit')` hook SIGKILLs the groups and collected descendants of every live
 *   supervised process synchronously, so a crashing host does not leave agents behind.
 * - SIGTERM, SIGINT and SIGHUP of the host (which run no `exit` handlers) run every stop ladder
 *   first, unless the host handles the signal itself (host-signals.ts).
 * - Linux: the child gets a parent-death signal (`setpriv --pdeathsig KILL`, parent-death-signal.ts),
 *   so a SIGKILLed host does not leave the agent itself running; its descendants are found again
 *   through the `observer` (the runtime's process registry records every process in the data dir,
 *   with an environment tag the whole tree inherits, and reaps what a dead host left).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { AseError } from '../../errors.js';
import { attachHostSignals, hostShutdownSignal, syncHostSignals } from './host-signals.js';
import { executableProblem, setprivPath, withParentDeathSignal } from './parent-death-signal.js';
import { hostScan, type ScanSubscriber, type ScanUpdate } from './descendant-scan.js';
import { isThreadGroupLeader, readStat, scanProc, type ProcStat } from './proc.js';
import { newTreeTag, orphanCarries, withTreeTag } from './tree-tag.js';
import type { DescendantInfo, ProcessObserver, ProcessWatch } from './process-observer.js';
import { StderrTail } from './stderr-tail.js';

const IS_LINUX = process.platform === 'linux';

export interface ShutdownOptions {
  /** How long to wait after ending stdin (a PTY child: after hanging up its terminal) before SIGTERM. Default 2000 ms. Not waited when the child had already exited. */
  stdinGraceMs?: number;
  /** How long to wait after SIGTERM before SIGKILL. Default 3000 ms. */
  termGraceMs?: number;
  /** How long to keep re-killing and waiting after SIGKILL before giving up. Default 2000 ms. */
  killWaitMs?: number;
}

/** What a {@link ProcessTree} needs of the spawn options. */
export interface TreeOptions {
  /** Aborting it runs `stop()`. */
  signal?: AbortSignal;
  shutdown?: ShutdownOptions;
  /** Descendant snapshot interval while running. Default 250 ms. */
  descendantPollMs?: number;
}

export interface SpawnSupervisedOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The complete child environment (see `buildEnv`); `process.env` is not merged in. */
  env: Record<string, string>;
  stdin?: 'pipe';
  /** Aborting it runs `stop()`. If already aborted, nothing is spawned and the call rejects. */
  signal?: AbortSignal;
  shutdown?: ShutdownOptions;
  /** Descendant snapshot interval while running. Default 250 ms. */
  descendantPollMs?: number;
  /** Bytes of stderr kept for error messages. Default 8 KiB. */
  stderrTailBytes?: number;
  /** Records the process (and its tree) for the host: see {@link ProcessObserver}. */
  observer?: ProcessObserver;
  /**
   * Linux: start the child under `setpriv --pdeathsig KILL`, so it is SIGKILLed when the thread
   * that spawned it (Node: the main thread) dies. Default true; without setpriv it is skipped.
   */
  parentDeathSignal?: boolean;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StopResult {
  /**
   * The rung that ended everything: 'stdin' (no signal needed), 'hangup' (a PTY child after its
   * terminal hung up: SIGHUP to its group), 'term' or 'kill'.
   */
  rung: 'stdin' | 'hangup' | 'term' | 'kill';
  exit: ProcessExit;
  /** Collected pids still alive after the SIGKILL wait (normally empty: e.g. stuck in D state). */
  survivors: number[];
}

export interface SupervisedProcess {
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Last bytes of stderr (the stream is followed in flowing mode; add your own 'data' listener too). */
  readonly stderrTail: StderrTail;
  /** Resolves when the child itself exits; never rejects. */
  readonly exited: Promise<ProcessExit>;
  /** The exit, once known. */
  readonly exit: ProcessExit | undefined;
  /**
   * Runs the shutdown ladder. Idempotent (returns the same promise). Resolves once the child has
   * exited and no collected descendant is alive (or the SIGKILL wait ran out: see `survivors`).
   */
  stop(): Promise<StopResult>;
  /** Pids of descendants collected so far (may include ones that already exited). */
  descendants(): number[];
}

// ---------------------------------------------------------------------------------------------
// /proc scanning (Linux)


function trySignal(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

interface TableIndex {
  byPid: Map<number, ProcStat>;
  children: Map<number, ProcStat[]>;
}
/** Indexes of whole tables handed to many trees at once (the backstop tick, the exit hook): built once per table. */
const tableIndexes = new WeakMap<readonly ProcStat[], TableIndex>();

function indexTable(table: readonly ProcStat[]): TableIndex {
  let index = tableIndexes.get(table);
  if (index) return index;
  index = { byPid: new Map(), children: new Map() };
  for (const st of table) {
    index.byPid.set(st.pid, st);
    const list = index.children.get(st.ppid);
    if (list) list.push(st);
    else index.children.set(st.ppid, [st]);
  }
  tableIndexes.set(table, index);
  return index;
}

/** Remembers the child's descendants by (pid, start time). Linux only; a no-op elsewhere. */
class DescendantTracker {
  private readonly known = new Map<number, bigint>();
  /** Set when a snapshot added or forgot a pid; cleared by {@link takeChanged}. */
  private changed = false;
  constructor(
    private readonly rootPid: number,
    private readonly rootStart: bigint | undefined,
    /** The mark in the tree's environment (tree-tag.ts): finds members whose parent link is gone. */
    private readonly tag: string | undefined,
  ) {}

  /** Not a member by parent, session or group, but orphaned and carrying the tree's mark. */
  private orphanOfOurs(st: ProcStat): boolean {
    return this.tag !== undefined && orphanCarries(st, this.tag);
  }

  pids(): number[] {
    return [...this.known.keys()];
  }

  /** Whether the remembered set changed since the last call. */
  takeChanged(): boolean {
    const changed = this.changed;
    this.changed = false;
    return changed;
  }

  entries(): DescendantInfo[] {
    return [...this.known].map(([pid, start]) => ({ pid, startTime: String(start) }));
  }

  /** Reads the whole process table (or uses `table`, one just read) and re-derives the tree from it. */
  snapshot(table?: readonly ProcStat[]): void {
    if (!IS_LINUX || this.rootStart === undefined) return;
    const all = table ?? scanProc();
    const { byPid, children } = indexTable(all);
    // Forget remembered pids that are gone or were reused.
    for (const [pid, start] of this.known) {
      if (byPid.get(pid)?.starttime !== start) {
        this.known.delete(pid);
        this.changed = true;
      }
    }
    const queue: number[] = [];
    const root = byPid.get(this.rootPid);
    if (root && root.starttime === this.rootStart) queue.push(this.rootPid);
    queue.push(...this.known.keys());
    // Members of the child's session/group (not escaped by setsid) started after the child.
    for (const st of all) {
      if (st.pid === this.rootPid || this.known.has(st.pid)) continue;
      if ((st.session === this.rootPid || st.pgrp === this.rootPid) && st.starttime >= this.rootStart) {
        this.known.set(st.pid, st.starttime);
        this.changed = true;
        queue.push(st.pid);
      }
    }
    // Orphans that left the session before their parent exited (tree-tag.ts).
    for (const st of all) {
      if (st.pid === this.rootPid || this.known.has(st.pid) || st.starttime < this.rootStart) continue;
      if (this.orphanOfOurs(st) && isThreadGroupLeader(st.pid)) {
        this.known.set(st.pid, st.starttime);
        this.changed = true;
        queue.push(st.pid);
      }
    }
    const seen = new Set<number>(queue);
    while (queue.length > 0) {
      const pid = queue.pop()!;
      for (const child of children.get(pid) ?? []) {
        if (seen.has(child.pid)) continue;
        seen.add(child.pid);
        if (!this.known.has(child.pid)) this.changed = true;
        this.known.set(child.pid, child.starttime);
        queue.push(child.pid);
      }
    }
  }

  /**
   * Takes in the processes started since the last tick (descendant-scan.ts): a new one belongs to
   * the tree when its parent is the child or a remembered descendant (possibly one just found), or
   * when it is in the child's session or group. A remembered pid that shows up again as a new
   * process was reused: forgotten. /proc answers for thread ids too: a match is kept only when it
   * is a process of its own.
   */
  addStarted(stats: readonly ProcStat[]): void {
    if (!IS_LINUX || this.rootStart === undefined || stats.length === 0) return;
    let rootAlive = true;
    const fresh: ProcStat[] = [];
    for (const st of stats) {
      if (st.pid === this.rootPid) {
        if (st.starttime !== this.rootStart) rootAlive = false; // our child's pid, reused
        continue;
      }
      const start = this.known.get(st.pid);
      if (start === st.starttime) continue;
      if (start !== undefined) {
        this.known.delete(st.pid);
        this.changed = true;
      }
      if (st.starttime >= this.rootStart) fresh.push(st);
    }
    // Parents start before their children: in start order one pass finds most; repeat until nothing is added.
    fresh.sort((a, b) => (a.starttime < b.starttime ? -1 : a.starttime > b.starttime ? 1 : 0));
    const rejected = new Set<number>();
    for (let added = true; added; ) {
      added = false;
      for (const st of fresh) {
        if (this.known.has(st.pid) || rejected.has(st.pid)) continue;
        const member =
          (rootAlive && st.ppid === this.rootPid) ||
          this.known.has(st.ppid) ||
          st.session === this.rootPid ||
          st.pgrp === this.rootPid ||
          this.orphanOfOurs(st);
        if (!member) continue;
        if (!isThreadGroupLeader(st.pid)) {
          rejected.add(st.pid);
          continue;
        }
        this.known.set(st.pid, st.starttime);
        this.changed = true;
        added = true;
      }
    }
  }

  /** Forgets remembered pids that exited (the tick never re-reads them otherwise); bounded to large sets. */
  forgetExited(): void {
    for (const [pid, start] of this.known) {
      if (readStat(pid)?.starttime !== start) {
        this.known.delete(pid);
        this.changed = true;
      }
    }
  }

  get size(): number {
    return this.known.size;
  }

  /** Remembered pids that are still the same process and not zombies. */
  alive(): number[] {
    const out: number[] = [];
    for (const [pid, start] of this.known) {
      const st = readStat(pid);
      if (st && st.starttime === start && st.state !== 'Z' && st.state !== 'X') out.push(pid);
    }
    return out;
  }

  signal(sig: NodeJS.Signals): void {
    for (const pid of this.alive()) trySignal(pid, sig);
  }
}

// ---------------------------------------------------------------------------------------------
// Exit safety net

const live = new Set<ProcessTree>();
let exitHookInstalled = false;
/** Observer work still running (record removals), awaited before a host signal ends the process. */
const observerWork = new Set<Promise<unknown>>();
/** The longest a host signal waits for {@link observerWork}. */
const OBSERVER_WAIT_MS = 1_000;

function killAllSync(): void {
  // One table read for every tree: the exit hook runs synchronously while the host goes down.
  const table = IS_LINUX && live.size > 0 ? scanProc() : undefined;
  for (const handle of live) handle.killSync(table);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllSync);
  attachHostSignals({
    active: () => live.size > 0,
    stopAll: async () => {
      await Promise.allSettled([...live].map((handle) => handle.stop()));
      const timer = new Promise<void>((resolve) => setTimeout(resolve, OBSERVER_WAIT_MS).unref());
      await Promise.race([Promise.allSettled([...observerWork]), timer]);
    },
    killAllSync,
  });
}

// ---------------------------------------------------------------------------------------------

/** Above this many remembered descendants a tick also forgets the exited ones (the backstop scan does it for smaller sets). */
const FORGET_ABOVE = 256;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What the spawner knew at the spawn (both undefined: the tree reads the whole table once at its start). */
export interface TreeSpawn {
  /** The mark put into the child's environment (tree-tag.ts). */
  tag: string | undefined;
  /** `hostScan.cursor()` read right before the spawn. */
  coveredUpTo: number | undefined;
  /** `hostScan.counts.ticks` read with it (no tick since: nothing to catch up on). */
  ticksAt?: number;
}

/** Before a spawn: the tree's mark, added to `env`, and the host tick's position. */
export function prepareTreeSpawn(env: Readonly<Record<string, string>>): { env: Record<string, string>; spawned: TreeSpawn } {
  if (!IS_LINUX) return { env: { ...env }, spawned: { tag: undefined, coveredUpTo: undefined } };
  const tag = newTreeTag();
  return { env: withTreeTag(env, tag), spawned: { tag, coveredUpTo: hostScan.cursor(), ticksAt: hostScan.counts.ticks } };
}

/** How a supervised root asks its process to finish before any signal (the ladder's first rung). */
export interface TreeRoot {
  readonly pid: number;
  /** The rung's name in {@link StopResult}. */
  readonly firstRung: 'stdin' | 'hangup';
  /** Asks the child to finish (end its stdin, hang up its terminal). */
  endInput(): void;
}

/**
 * One supervised process tree: descendant collection, the stop ladder, the exit safety net and the
 * observer calls. Shared by the stdio supervisor and the PTY runner (pty-process.ts), so both stop
 * and reap the same way.
 */
export class ProcessTree {
  readonly pid: number;
  readonly exited: Promise<ProcessExit>;
  exit: ProcessExit | undefined;

  private readonly tracker: DescendantTracker;
  /** This tree's side of the host-wide tick (descendant-scan.ts). */
  private readonly subscriber: ScanSubscriber;
  private stopping: Promise<StopResult> | undefined;
  private released = false;
  private readonly stdinGraceMs: number;
  private readonly termGraceMs: number;
  private readonly killWaitMs: number;
  private readonly onAbort = (): void => void this.stop();

  constructor(
    private readonly root: TreeRoot,
    exited: Promise<ProcessExit>,
    private readonly options: TreeOptions,
    private readonly watch: ProcessWatch | undefined,
    spawned: TreeSpawn = { tag: undefined, coveredUpTo: undefined },
  ) {
    this.pid = root.pid;
    this.exited = exited.then((exit) => {
      this.exit = exit;
      this.afterRootExit();
      return exit;
    });
    this.stdinGraceMs = options.shutdown?.stdinGraceMs ?? 2000;
    this.termGraceMs = options.shutdown?.termGraceMs ?? 3000;
    this.killWaitMs = options.shutdown?.killWaitMs ?? 2000;
    const startTime = IS_LINUX ? readStat(this.pid)?.starttime : undefined;
    this.tracker = new DescendantTracker(this.pid, startTime, spawned.tag);
    // The tick covers every pid handed out after `coveredUpTo`. Read before the spawn, it covers the
    // whole tree (no table read: that cost ~170 ms of CPU per spawn on a machine of 1,000 processes);
    // otherwise a whole-table snapshot covers what came before this reading.
    let coveredUpTo = spawned.coveredUpTo;
    let ticksAt = spawned.ticksAt;
    if (coveredUpTo === undefined) {
      coveredUpTo = hostScan.cursor();
      ticksAt = hostScan.counts.ticks;
      this.tracker.snapshot();
    }
    this.subscriber = { pollMs: options.descendantPollMs ?? 250, scanned: (update) => this.pollTick(update) };
    live.add(this);
    installExitHook();
    syncHostSignals();
    this.tell((w) => w.spawned({ pid: this.pid, pgid: this.pid, startTime: startTime === undefined ? undefined : String(startTime) }));
    hostScan.add(this.subscriber, coveredUpTo, ticksAt);
    this.reportDescendants();
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  descendants(): number[] {
    return this.tracker.pids();
  }

  stop(): Promise<StopResult> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  /** Sends `sig` to the child's process group (and nothing else). */
  signal(sig: NodeJS.Signals): boolean {
    return trySignal(-this.pid, sig);
  }

  /** Synchronous last-resort kill (exit hook); `table`: the process table just read for every tree. */
  killSync(table?: readonly ProcStat[]): void {
    this.tracker.snapshot(table);
    this.signalGroup('SIGKILL');
    this.tracker.signal('SIGKILL');
  }

  private pollTick(update: ScanUpdate): void {
    if (update.full) this.tracker.snapshot(update.stats);
    else {
      this.tracker.addStarted(update.stats);
      // A tree that keeps spawning short-lived processes (a build) forgets the exited ones now and then.
      if (this.tracker.size > FORGET_ABOVE) this.tracker.forgetExited();
    }
    this.reportDescendants();
    if (this.exit && this.allGone()) this.release();
  }

  private reportDescendants(): void {
    if (this.tracker.takeChanged()) this.tell((w) => w.descendants(this.tracker.entries()));
  }

  private tell(call: (watch: ProcessWatch) => void | Promise<void>): void {
    if (!this.watch) return;
    try {
      const work = call(this.watch);
      if (work instanceof Promise) {
        const settled = work.catch(() => undefined);
        observerWork.add(settled);
        void settled.finally(() => observerWork.delete(settled));
      }
    } catch {
      // An observer's failure must not break supervision.
    }
  }

  private afterRootExit(): void {
    // A tick now reads what started since the last one, while it is still fresh: a process the root
    // started just before exiting is found by its parent, session or group, or (re-parented and out
    // of the session) by the tree's mark (tree-tag.ts). Everything older was read by earlier ticks.
    if (!this.released) hostScan.tick();
    if (!this.stopping && this.allGone()) this.release();
  }

  /** Supervision ends. `survivors`: collected pids still alive (their record is kept for a later reaping). */
  private release(survivors: readonly number[] = []): void {
    if (this.released) return;
    this.released = true;
    hostScan.remove(this.subscriber);
    live.delete(this);
    syncHostSignals();
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (survivors.length === 0) this.tell((w) => w.reaped());
  }

  private signalGroup(sig: NodeJS.Signals): void {
    // The pgid cannot be reused while the group has members; once the group is empty this is an
    // ESRCH no-op (unless a new, unrelated group leader got the same pid — vanishingly rare).
    if (!IS_LINUX || !this.exit || this.tracker.alive().length > 0) trySignal(-this.pid, sig);
  }

  private allGone(): boolean {
    if (!this.exit) return false;
    if (IS_LINUX) return this.tracker.alive().length === 0;
    return !trySignal(-this.pid, 0);
  }

  /** Waits up to `ms` for everything to be gone, re-snapshotting as it goes. */
  private async waitGone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      this.tracker.snapshot();
      if (this.allGone()) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await Promise.race([delay(Math.min(20, left)), this.exit ? new Promise<never>(() => {}) : this.exited]);
    }
  }

  private async runStop(): Promise<StopResult> {
    const finish = (rung: StopResult['rung'], survivors: number[] = []): StopResult => {
      this.release(survivors);
      return { rung, exit: this.exit!, survivors };
    };
    this.tracker.snapshot();
    this.root.endInput();
    // The first rung asks the child itself to finish. A child that already exited (crashed) cannot:
    // what it left behind goes straight to SIGTERM instead of waiting out the grace for nobody.
    if (await this.waitGone(this.exit ? 0 : this.stdinGraceMs)) return finish(this.root.firstRung);

    this.tracker.snapshot();
    this.signalGroup('SIGTERM');
    this.tracker.signal('SIGTERM');
    if (await this.waitGone(this.termGraceMs)) return finish('term');

    const deadline = Date.now() + this.killWaitMs;
    for (;;) {
      // Freeze first so nothing can fork between the scan and the kill, then scan again.
      this.tracker.snapshot();
      this.signalGroup('SIGSTOP');
      this.tracker.signal('SIGSTOP');
      this.tracker.snapshot();
      this.signalGroup('SIGKILL');
      this.tracker.signal('SIGKILL');
      if (await this.waitGone(Math.min(50, Math.max(0, deadline - Date.now())))) return finish('kill');
      if (Date.now() >= deadline) break;
    }
    if (!this.exit) await this.exited; // SIGKILL of our own child cannot fail to land.
    return finish('kill', this.tracker.alive());
  }
}

/** A child with piped stdio, supervised as one {@link ProcessTree}. */
class Supervised implements SupervisedProcess {
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly stderrTail: StderrTail;
  readonly exited: Promise<ProcessExit>;
  private readonly tree: ProcessTree;

  constructor(child: ChildProcess, exited: Promise<ProcessExit>, options: SpawnSupervisedOptions, watch: ProcessWatch | undefined, spawned: TreeSpawn) {
    this.pid = child.pid!;
    this.stdin = child.stdin!;
    this.stdout = child.stdout!;
    this.stderr = child.stderr!;
    // An EPIPE on a dead child's stdin must not crash the host; users observe it via their own
    // listeners (e.g. NdjsonWriter).
    for (const stream of [this.stdin, this.stdout, this.stderr]) stream.on('error', () => {});
    this.stderrTail = new StderrTail(options.stderrTailBytes);
    this.stderrTail.attach(this.stderr);
    const stdin = this.stdin;
    this.tree = new ProcessTree(
      {
        pid: this.pid,
        firstRung: 'stdin',
        endInput: () => {
          if (!stdin.destroyed && !stdin.writableEnded) stdin.end();
        },
      },
      exited,
      options,
      watch,
      spawned,
    );
    this.exited = this.tree.exited;
  }

  get exit(): ProcessExit | undefined {
    return this.tree.exit;
  }

  descendants(): number[] {
    return this.tree.descendants();
  }

  stop(): Promise<StopResult> {
    return this.tree.stop();
  }
}

/**
 * Spawns `file args` detached (own process group), stdio piped, no shell. Rejects with
 * `AseError('ENGINE_START_FAILED')` when the executable cannot be spawned and with
 * `AseError('ABORTED')` when `signal` is already aborted.
 */
export async function spawnSupervised(options: SpawnSupervisedOptions): Promise<SupervisedProcess> {
  if (options.signal?.aborted) throw new AseError('ABORTED', `spawn of ${options.file} aborted before it started`);
  // spawn reports a missing cwd as ENOENT of the executable: say what is really missing.
  if (!statSync(options.cwd, { throwIfNoEntry: false })?.isDirectory()) {
    throw new AseError('INVALID_OPTIONS', `cannot start ${options.file}: the working directory ${options.cwd} does not exist or is not a directory`, { details: { cwd: options.cwd } });
  }
  const shutdown = hostShutdownSignal();
  if (shutdown) throw new AseError('ENGINE_START_FAILED', `not spawning ${options.file}: the host is shutting down (${shutdown})`);
  let command = { file: options.file, args: [...options.args] };
  const setpriv = options.parentDeathSignal === false ? undefined : await setprivPath();
  if (setpriv) {
    // Through the wrapper a missing binary would start setpriv and exit 127: refuse it here, as spawn() would.
    const problem = executableProblem(options.file, options.cwd, options.env);
    if (problem) throw new AseError('ENGINE_START_FAILED', `failed to spawn ${options.file}: spawn ${options.file} ${problem}`, { details: { errno: problem } });
    command = withParentDeathSignal(setpriv, options.file, options.args);
  }
  if (options.signal?.aborted) throw new AseError('ABORTED', `spawn of ${options.file} aborted before it started`);
  const watch = options.observer?.spawning(options.file);
  const { env, spawned } = prepareTreeSpawn(watch ? { ...options.env, ...watch.env } : options.env);
  const child = spawn(command.file, command.args, {
    cwd: options.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    shell: false,
    windowsHide: true,
  });
  // 'exit', not 'close': a grandchild holding the stdout pipe must not delay the exit report.
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `failed to spawn ${options.file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  child.on('error', () => {}); // later errors (e.g. a failed kill) surface through exit/stop
  return new Supervised(child, exited, options, watch, spawned);
}
