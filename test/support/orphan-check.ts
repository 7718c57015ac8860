/**
 * Suite-wide orphan check (a vitest `globalSetup` module).
 *
 * Setup puts a per-run marker `ASE_TEST_RUN=<uuid>` into `process.env`, so test workers inherit
 * it; tests that build a hermetic (from-scratch) environment for the CLI pass it on explicitly
 * via {@link testRunEnv}. Teardown scans `/proc/<pid>/environ` for the marker: any process
 * carrying it that is still alive after the whole suite, other than vitest's own (the main process
 * running this teardown and its direct children: workers, the watchdog), is a leak (an
 * agent CLI, a child it renamed — claude-code-acp's Claude Code shows up as `claude` —, a
 * terminal's `sh -c`, a Bash tool command). It is killed (SIGKILL) and teardown throws, naming
 * the pids, so the run fails.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

export const TEST_RUN_VAR = 'ASE_TEST_RUN';

/** `{ ASE_TEST_RUN: <uuid> }` when running under the suite's global setup, else `{}`. */
export function testRunEnv(): Record<string, string> {
  const value = process.env[TEST_RUN_VAR];
  return value ? { [TEST_RUN_VAR]: value } : {};
}

export interface LeakedProcess {
  pid: number;
  cmdline: string;
}

/** Processes whose environment carries `marker`, other than this one and its direct children (vitest's own). */
export function findMarkedProcesses(marker: string): LeakedProcess[] {
  const needle = `${TEST_RUN_VAR}=${marker}`;
  const found: LeakedProcess[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found; // no procfs (not Linux): nothing to check
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\u0000');
      if (!environ.includes(needle)) continue;
      // `pid (comm) state ppid …`; comm may contain spaces and parentheses, so parse after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie is already dead (only waiting to be reaped): not a leak.
      if (state === 'Z' || Number(ppid) === process.pid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      found.push({ pid: Number(entry), cmdline: cmdline.split('\u0000').join(' ').trim() });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

export default function setup(): () => Promise<void> {
  const marker = process.env[TEST_RUN_VAR] ?? randomUUID();
  process.env[TEST_RUN_VAR] = marker;
  return async () => {
    // Processes being stopped right at the end get a moment to go away on their own.
    let leaked = findMarkedProcesses(marker);
    for (let i = 0; i < 20 && leaked.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      leaked = findMarkedProcesses(marker);
    }
    if (leaked.length === 0) return;
    for (const { pid } of leaked) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    throw new Error(`orphan check: ${leaked.length} test process(es) outlived the suite and were killed: ${leaked.map((p) => `pid ${p.pid} (${p.cmdline.slice(0, 160)})`).join(', ')}`);
  };
}
