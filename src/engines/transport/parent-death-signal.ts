/**
 * A parent-death signal for the agent (Linux): the agent is started as
 * `setpriv --pdeathsig KILL -- <file> <args…>` (util-linux), which sets PR_SET_PDEATHSIG and then
 * execs the agent in the same process (same pid, same start time, nothing in between). If the host
 * dies without stopping it (SIGKILL, OOM kill) the kernel SIGKILLs the agent at once instead of
 * leaving it reading a dead pipe. Its descendants do not inherit the setting (the kernel clears it
 * on fork); the process registry reaps them when the data dir is opened again.
 *
 * Facts this relies on:
 * - The signal fires when the THREAD that forked the agent ends. Node spawns from the thread that
 *   calls `spawn()`: the main thread, which lives as long as the process. An engine run inside a
 *   `worker_thread` gets its agent killed when that worker ends (test/unit/parent-death-signal.test.ts).
 * - The setting survives `execve` except for set-user-ID/set-group-ID or file-capability binaries
 *   (not the case for agent CLIs).
 * - A host killed between the fork and the prctl is not noticed (a window of microseconds).
 *
 * Without a usable `setpriv` (not Linux, not installed, or too old for `--pdeathsig`: util-linux
 * < 2.33) the agent is spawned directly, as before. `setpriv` is looked for once per process in
 * the host's own PATH, then /usr/bin and /bin, and probed by running it once.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

let probe: Promise<string | undefined> | undefined;

/** The absolute path of a `setpriv` that supports `--pdeathsig`, or undefined (probed once). */
export function setprivPath(): Promise<string | undefined> {
  probe ??= findSetpriv();
  return probe;
}

async function findSetpriv(): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const dirs = [...(process.env['PATH'] ?? '').split(path.delimiter), '/usr/bin', '/bin'].filter((d) => path.isAbsolute(d));
  const candidate = dirs.map((d) => path.join(d, 'setpriv')).find(isExecutableFile);
  if (!candidate) return undefined;
  // `setpriv --pdeathsig KILL -- setpriv --version` succeeds only where the option exists.
  const works = await new Promise<boolean>((resolve) =>
    execFile(candidate, ['--pdeathsig', 'KILL', '--', candidate, '--version'], { timeout: 5_000, env: {} }, (error) => resolve(!error)),
  );
  return works ? candidate : undefined;
}

/** `file args` wrapped so the agent gets SIGKILL when its parent (thread) dies. */
export function withParentDeathSignal(setpriv: string, file: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: setpriv, args: ['--pdeathsig', 'KILL', '--', file, ...args] };
}

/**
 * Where `spawn(file)` would find the executable, or why it cannot: the wrapper must not turn a
 * missing agent binary into a process that starts and exits 127, so the spawn error is raised
 * here, as `spawn()` itself would (`ENOENT`, `EACCES`). `file` with a slash is taken relative to
 * `cwd`; a bare name is looked up in the child's PATH.
 */
export function executableProblem(file: string, cwd: string, env: Record<string, string>): 'ENOENT' | 'EACCES' | undefined {
  if (file.includes('/')) return fileProblem(path.resolve(cwd, file));
  const dirs = (env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter);
  let denied = false;
  for (const dir of dirs) {
    const problem = fileProblem(path.resolve(cwd, dir || '.', file));
    if (problem === undefined) return undefined;
    if (problem === 'EACCES') denied = true;
  }
  return denied ? 'EACCES' : 'ENOENT';
}

function fileProblem(candidate: string): 'ENOENT' | 'EACCES' | undefined {
  try {
    if (!statSync(candidate).isFile()) return 'EACCES';
    accessSync(candidate, constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code === 'EACCES' ? 'EACCES' : 'ENOENT';
  }
}

function isExecutableFile(candidate: string): boolean {
  return fileProblem(candidate) === undefined;
}
