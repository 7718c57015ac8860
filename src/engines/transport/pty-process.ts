/**
 * Runs an agent's own terminal UI in a pseudo-terminal (local mode): the agent sees a real TTY, the
 * host reads its output bytes and writes keystrokes, and resizes it like a terminal window.
 *
 * Why a PTY and not inherited stdio: the host stays the single owner of the terminal. It can render
 * the screen anywhere (the user's terminal, an IDE panel, a headless emulator in tests), stop the
 * agent exactly, and give the user's terminal back intact after a switch.
 *
 * `@lydell/node-pty` (node-pty with prebuilt binaries, no node-gyp at install) forks the child as a
 * session leader with the PTY as its controlling terminal, so it leads its own process group
 * (pgid = pid). Supervision is the stdio supervisor's {@link ProcessTree}: the same descendant
 * collection, process registry records and stop ladder, whose first rung here is a hang-up
 * (SIGHUP to the group: what a closed terminal window sends) instead of closing stdin.
 */
import { statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { spawn as spawnTerminal, type IPty } from '@lydell/node-pty';
import { AseError } from '../../errors.js';
import { hostShutdownSignal } from './host-signals.js';
import { executableProblem, setprivPath, withParentDeathSignal } from './parent-death-signal.js';
import { prepareTreeSpawn, ProcessTree, type ProcessExit, type StopResult, type TreeOptions, type TreeSpawn } from './process-supervisor.js';
import type { ProcessObserver } from './process-observer.js';

export interface SpawnPtyOptions extends TreeOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The complete child environment; `process.env` is not merged in. `TERM` defaults to `xterm-256color`. */
  env: Record<string, string>;
  /** Terminal size. Default 80×24. */
  cols?: number;
  rows?: number;
  /** Records the process (and its tree) for the host: see {@link ProcessObserver}. */
  observer?: ProcessObserver;
  /** Linux: start the child under `setpriv --pdeathsig KILL` (see process-supervisor.ts). Default true. */
  parentDeathSignal?: boolean;
}

/** What the host sees of a terminal UI running in a PTY. */
export interface PtyProcess {
  readonly pid: number;
  readonly cols: number;
  readonly rows: number;
  /** Subscribes to the terminal's output (UTF-8 text, escape sequences included); returns the unsubscribe. */
  onData(listener: (data: string) => void): () => void;
  /** Types into the terminal (keystrokes, pasted text). Ignored once the child exited. */
  write(data: string): void;
  /** Resizes the terminal (the child gets SIGWINCH). Ignored once the child exited. */
  resize(cols: number, rows: number): void;
  /** Resolves when the child itself exits; never rejects. */
  readonly exited: Promise<ProcessExit>;
  readonly exit: ProcessExit | undefined;
  /** Runs the stop ladder (hang-up → SIGTERM → SIGKILL, descendants included). Idempotent. */
  stop(): Promise<StopResult>;
  /** Pids of descendants collected so far. */
  descendants(): number[];
}

const signalNames = new Map<number, NodeJS.Signals>(
  Object.entries(osConstants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

class Pty implements PtyProcess {
  readonly pid: number;
  readonly exited: Promise<ProcessExit>;
  readonly #terminal: IPty;
  readonly #tree: ProcessTree;
  readonly #listeners = new Set<(data: string) => void>();

  constructor(terminal: IPty, options: SpawnPtyOptions, watch: ReturnType<ProcessObserver['spawning']> | undefined, spawned: TreeSpawn) {
    this.#terminal = terminal;
    this.pid = terminal.pid;
    terminal.onData((data) => {
      for (const listener of this.#listeners) {
        try {
          listener(data);
        } catch {
          // A broken renderer must not stop the others (or the agent).
        }
      }
    });
    const exited = new Promise<ProcessExit>((resolve) =>
      terminal.onExit(({ exitCode, signal }) => {
        const name = signal ? (signalNames.get(signal) ?? null) : null;
        resolve({ code: name ? null : exitCode, signal: name });
      }),
    );
    this.#tree = new ProcessTree({ pid: this.pid, firstRung: 'hangup', endInput: () => void this.#tree.signal('SIGHUP') }, exited, options, watch, spawned);
    this.exited = this.#tree.exited;
  }

  get cols(): number {
    return this.#terminal.cols;
  }
  get rows(): number {
    return this.#terminal.rows;
  }
  get exit(): ProcessExit | undefined {
    return this.#tree.exit;
  }

  onData(listener: (data: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  write(data: string): void {
    if (this.exit) return;
    try {
      this.#terminal.write(data);
    } catch {
      // The terminal closed under us (the child is exiting): the exit reports it.
    }
  }

  resize(cols: number, rows: number): void {
    if (this.exit || !(cols > 0 && rows > 0)) return;
    try {
      this.#terminal.resize(Math.floor(cols), Math.floor(rows));
    } catch {
      // Same as write: a closing terminal cannot be resized, and need not be.
    }
  }

  stop(): Promise<StopResult> {
    return this.#tree.stop();
  }

  descendants(): number[] {
    return this.#tree.descendants();
  }
}

/**
 * Spawns `file args` in a new PTY, in its own session and process group, no shell. Rejects with
 * `AseError('ENGINE_START_FAILED')` when the executable cannot be run, `INVALID_OPTIONS` for a
 * missing working directory and `ABORTED` when `signal` is already aborted.
 */
export async function spawnPty(options: SpawnPtyOptions): Promise<PtyProcess> {
  if (options.signal?.aborted) throw new AseError('ABORTED', `spawn of ${options.file} aborted before it started`);
  if (!statSync(options.cwd, { throwIfNoEntry: false })?.isDirectory()) {
    throw new AseError('INVALID_OPTIONS', `cannot start ${options.file}: the working directory ${options.cwd} does not exist or is not a directory`, { details: { cwd: options.cwd } });
  }
  const shutdown = hostShutdownSignal();
  if (shutdown) throw new AseError('ENGINE_START_FAILED', `not spawning ${options.file}: the host is shutting down (${shutdown})`);
  // The PTY helper forks before exec, so a missing binary would only show as a quick exit: refuse it here.
  const problem = executableProblem(options.file, options.cwd, options.env);
  if (problem) throw new AseError('ENGINE_START_FAILED', `failed to spawn ${options.file}: spawn ${options.file} ${problem}`, { details: { errno: problem } });
  let command = { file: options.file, args: [...options.args] };
  const setpriv = options.parentDeathSignal === false ? undefined : await setprivPath();
  if (setpriv) command = withParentDeathSignal(setpriv, options.file, options.args);
  if (options.signal?.aborted) throw new AseError('ABORTED', `spawn of ${options.file} aborted before it started`);
  const watch = options.observer?.spawning(options.file);
  const { env, spawned } = prepareTreeSpawn({ TERM: 'xterm-256color', ...options.env, ...watch?.env });
  let terminal: IPty;
  try {
    terminal = spawnTerminal(command.file, command.args, {
      name: env.TERM!,
      cols: options.cols ?? 80,
      rows: options.rows ?? 24,
      cwd: options.cwd,
      env,
    });
  } catch (error) {
    throw new AseError('ENGINE_START_FAILED', `failed to spawn ${options.file} in a terminal: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return new Pty(terminal, options, watch, spawned);
}
