/**
 * Recognizing a supervised tree's orphans by a mark in their environment (Linux).
 *
 * Why: descendants are collected by parent links (process-supervisor.ts), read by the host-wide tick
 * (descendant-scan.ts) only some time after a process starts. A process that leaves the tree's
 * session (`setsid`) and whose parent exits before the tick read it is re-parented to init or a
 * subreaper: by the time it is read, nothing in /proc/<pid>/stat links it to the tree any more
 * (`codex exec` exits at the end of each turn, so a helper it starts in its own session just before
 * exiting escaped this way). Becoming the subreaper of our own children would keep the link, but
 * `prctl(PR_SET_CHILD_SUBREAPER)` is not reachable from Node without a native addon.
 *
 * So every supervised child gets `ASE_SUPERVISED_TREE=<random id>` in its environment, which its
 * descendants inherit. A process that is not otherwise a member is checked for the mark only when it
 * looks orphaned: its parent is one of the processes an orphan of ours is re-parented to (init, or a
 * subreaper; both are ancestors of this host, since a supervised root is our child — see
 * {@link orphanParents}). Each process's environment is read at most once per host (cached by pid and
 * start time), and only for processes the tick reads anyway (new ones) or at stop.
 * A descendant that clears its environment (`env -i`) and escapes this way is still missed.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readStat, type ProcStat } from './proc.js';

/** The environment variable carrying the marks of the supervised trees a process belongs to (comma-separated: nested hosts add theirs). */
export const TREE_TAG_VAR = 'ASE_SUPERVISED_TREE';

/** A new tree's mark. */
export function newTreeTag(): string {
  return randomUUID();
}

/** `env` with `tag` added to {@link TREE_TAG_VAR} (kept: an outer host's marks). */
export function withTreeTag(env: Readonly<Record<string, string>>, tag: string): Record<string, string> {
  const outer = env[TREE_TAG_VAR];
  return { ...env, [TREE_TAG_VAR]: outer ? `${outer},${tag}` : tag };
}

/** pid → its start time and whether its environment was read, with the marks it carries. */
const environs = new Map<number, { start: bigint; marks: string }>();
/** The processes orphans of ours are re-parented to: this host and its ancestors up to init. */
let reapers: Set<number> | undefined;

/**
 * This host's ancestors (and itself): an orphaned descendant of a supervised root is re-parented to
 * the nearest of them that is a subreaper, or to init (pid 1 of the pid namespace).
 */
export function orphanParents(): ReadonlySet<number> {
  if (reapers) return reapers;
  const out = new Set<number>([1, process.pid]);
  for (let pid = process.ppid, hops = 0; pid > 1 && hops < 64; hops++) {
    out.add(pid);
    const st = readStat(pid);
    if (!st) break;
    pid = st.ppid;
  }
  reapers = out;
  return out;
}

/** Whether `st` (not a member by its parent, session or group) looks orphaned and carries `tag`. */
export function orphanCarries(st: ProcStat, tag: string): boolean {
  if (!orphanParents().has(st.ppid)) return false;
  let entry = environs.get(st.pid);
  if (!entry || entry.start !== st.starttime) {
    let text = '';
    try {
      text = readFileSync(`/proc/${st.pid}/environ`, 'latin1');
    } catch {
      // gone, or another user's process (never ours)
    }
    entry = { start: st.starttime, marks: marksIn(text) };
    environs.set(st.pid, entry);
  }
  return entry.marks !== '' && entry.marks.split(',').includes(tag);
}

/** The value of {@link TREE_TAG_VAR} in a /proc/<pid>/environ text ('' when absent). */
function marksIn(environ: string): string {
  const name = `${TREE_TAG_VAR}=`;
  const at = environ.startsWith(name) ? 0 : environ.indexOf(`\0${name}`) + 1;
  if (at === 0 && !environ.startsWith(name)) return '';
  const from = at + name.length;
  const end = environ.indexOf('\0', from);
  return environ.slice(from, end < 0 ? undefined : end);
}

/** Forgets cached environments of processes not in `table` (a whole process table just read), and re-reads the host's ancestors. */
export function pruneTreeTags(table: readonly ProcStat[]): void {
  reapers = undefined;
  if (environs.size === 0) return;
  const present = new Map<number, bigint>();
  for (const st of table) present.set(st.pid, st.starttime);
  for (const [pid, entry] of environs) if (present.get(pid) !== entry.start) environs.delete(pid);
}
