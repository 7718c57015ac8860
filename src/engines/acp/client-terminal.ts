/**
 * Client-side `terminal/*` for ACP agents: runs the agent's command lines as `sh -c` in their own
 * process group, with a confined cwd, an environment built from an allow-list, an output cap, a
 * wall-clock limit and a cap on live terminals.
 *
 * Only construct this when the user opted into terminals: a terminal is arbitrary shell execution
 * with the host user's rights. The cwd confinement only picks where the command STARTS; the command
 * itself can go anywhere (it is not a sandbox — sandbox the agent and its terminals externally).
 *
 * Lifecycle (ACP): create → output / wait_for_exit (any number of times) → kill (terminal stays
 * valid, its output readable) → release (kill if running, then the id becomes invalid). The
 * process tree is stopped through `spawnSupervised` (group signal plus collected setsid
 * descendants): stdin is closed at spawn, so the stop ladder is SIGTERM → `termGraceMs` → SIGKILL.
 * Pending `wait_for_exit` calls resolve with the exit the kill produced; `closeAll()` (session end)
 * stops every terminal and guarantees pending waits resolve.
 *
 * Output: stdout and stderr interleaved in arrival order, keeping the LAST `outputByteLimit` bytes
 * and cutting the front at a UTF-8 character boundary (ACP spec). An incomplete character at the
 * end of a still-running command's output is held back until it completes. `exitStatus` (and
 * `wait_for_exit`) are reported once the shell exited and its stdout/stderr closed, or
 * `EXIT_DRAIN_MS` after the exit when a background process keeps the pipes open.
 */
import { buildEnv } from '../transport/env.js';
import type { ProcessObserver } from '../transport/process-observer.js';
import { spawnSupervised, type SupervisedProcess } from '../transport/process-supervisor.js';
import { errorMessage, type AseError } from '../../errors.js';
import { confineDirectory, denied, failed, resolveRoots } from './confinement.js';
import { timerMs } from './options.js';
import { shellQuote } from '../transport/shell-quote.js';

export interface TerminalManagerOptions {
  /** Default cwd of terminals and a confinement root for requested cwds. */
  workDir: string;
  /** Further roots a requested cwd may be in. */
  extraRoots?: readonly string[];
  /**
   * Base environment of every terminal, complete (process.env is not merged in). Default
   * `buildEnv()`: the allow-listed variables (PATH, HOME, LANG, …) of this process. The request's
   * `env` entries are set on top.
   */
  env?: Record<string, string>;
  /** Terminals created and not yet released, per manager. Default 8. */
  maxTerminals?: number;
  /** Output bytes kept when the request has no `outputByteLimit`. Default 1 MiB. */
  defaultOutputByteLimit?: number;
  /** A terminal's process group is killed this long after creation. Default 10 minutes. */
  wallClockMs?: number;
  /** Records each terminal's process for the host, like the agent's (EngineContext.processes). */
  processes?: ProcessObserver;
}

export const DEFAULT_MAX_TERMINALS = 8;
export const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** Ceiling for a requested `outputByteLimit`: bounds the memory an agent can make us hold. */
export const MAX_OUTPUT_BYTE_LIMIT = 16 * 1024 * 1024;
export const DEFAULT_WALL_CLOCK_MS = 10 * 60 * 1000;
/** How long after the shell exits we wait for its pipes to close (cf. Zed's EXIT_DRAIN_TIMEOUT). */
export const EXIT_DRAIN_MS = 250;
const SHUTDOWN = { stdinGraceMs: 0, termGraceMs: 500, killWaitMs: 2000 };

export interface TerminalExit {
  exitCode: number | null;
  signal: string | null;
}


/** The `sh -c` line: the command as given (agents send whole shell lines) plus quoted args. */
export function commandLine(command: string, args: readonly string[] = []): string {
  return args.length === 0 ? command : `${command} ${args.map(shellQuote).join(' ')}`;
}

/** Index of the first byte at or after `start` that begins a UTF-8 character. */
function charStart(buf: Buffer, start: number): number {
  let i = start;
  while (i < buf.length && (buf[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** Length of `buf` without a trailing incomplete UTF-8 sequence. */
export function completeLength(buf: Buffer): number {
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const byte = buf[buf.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

/** Keeps the last `limit` bytes of a byte stream; see the module comment for the UTF-8 rules. */
export class OutputBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  constructor(readonly limit: number) {}

  append(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    // Drop whole chunks that lie entirely before the last `limit` bytes.
    while (this.chunks.length > 0 && this.kept - this.chunks[0]!.length >= this.limit) {
      this.kept -= this.chunks.shift()!.length;
    }
  }

  /** `finished`: the stream ended, so a trailing incomplete character is final (decoded as U+FFFD). */
  snapshot(finished: boolean): { output: string; truncated: boolean } {
    let buf = Buffer.concat(this.chunks, this.kept);
    this.chunks = buf.length > 0 ? [buf] : [];
    if (buf.length > this.limit) buf = buf.subarray(charStart(buf, buf.length - this.limit));
    if (!finished) buf = buf.subarray(0, completeLength(buf));
    return { output: buf.toString('utf8'), truncated: this.total > this.limit };
  }
}

interface Terminal {
  id: string;
  sessionId: string;
  process: SupervisedProcess;
  output: OutputBuffer;
  /** Set once the shell exited and its pipes closed (or the drain timed out). */
  exit: TerminalExit | undefined;
  exited: Promise<TerminalExit>;
  wallClock: NodeJS.Timeout;
  timedOut: boolean;
}

function unknownTerminal(sessionId: string, terminalId: unknown): AseError {
  return denied(`unknown terminal id ${String(terminalId)} for session ${sessionId} (never created, or released)`, { terminalId, sessionId });
}

function checkEnv(env: unknown): { name: string; value: string }[] {
  if (env === undefined || env === null) return [];
  if (!Array.isArray(env)) throw denied('env must be an array of {name, value}');
  for (const entry of env as unknown[]) {
    const { name, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || name.length === 0 || name.includes('=') || name.includes('\0')) throw denied(`invalid env variable name: ${String(name)}`, { name });
    if (typeof value !== 'string' || value.includes('\0')) throw denied(`invalid value for env variable ${name}`, { name });
  }
  return env as { name: string; value: string }[];
}

function checkArgs(command: unknown, args: unknown): { command: string; args: string[] } {
  if (typeof command !== 'string' || command.trim().length === 0) throw denied('command must be a non-empty string');
  if (command.includes('\0')) throw denied('command contains a NUL byte');
  if (args === undefined || args === null) return { command, args: [] };
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string' && !a.includes('\0'))) throw denied('args must be an array of strings without NUL bytes');
  return { command, args: args as string[] };
}

export class TerminalManager {
  readonly roots: readonly string[];
  private readonly baseEnv: Record<string, string>;
  private readonly maxTerminals: number;
  private readonly defaultOutputByteLimit: number;
  private readonly wallClockMs: number;
  private readonly processes: ProcessObserver | undefined;
  private readonly terminals = new Map<string, Terminal>();
  /** Creations between their cap check and their registration (counted against the cap). */
  private creating = 0;
  private nextId = 1;
  /** Bumped by closeAll(): a create() that was spawning meanwhile stops its process. */
  private epoch = 0;

  constructor(options: TerminalManagerOptions) {
    this.roots = resolveRoots(options.workDir, options.extraRoots);
    this.baseEnv = { ...(options.env ?? buildEnv()) };
    this.maxTerminals = options.maxTerminals ?? DEFAULT_MAX_TERMINALS;
    this.defaultOutputByteLimit = options.defaultOutputByteLimit ?? DEFAULT_OUTPUT_BYTE_LIMIT;
    this.wallClockMs = timerMs(options.wallClockMs ?? DEFAULT_WALL_CLOCK_MS);
    this.processes = options.processes;
  }

  /** Number of terminals created and not released. */
  get size(): number {
    return this.terminals.size;
  }

  async create(params: {
    sessionId: string;
    command: string;
    args?: string[];
    env?: { name: string; value: string }[];
    cwd?: string | null;
    outputByteLimit?: number | null;
  }): Promise<{ terminalId: string }> {
    // Taken before the first await: a closeAll() while the cwd is being checked must stop this one too.
    const epoch = this.epoch;
    if (typeof params.sessionId !== 'string' || params.sessionId.length === 0) throw denied('sessionId must be a non-empty string');
    const { command, args } = checkArgs(params.command, params.args);
    const envEntries = checkEnv(params.env);
    const limit = this.outputLimit(params.outputByteLimit);
    const cwd = params.cwd === undefined || params.cwd === null ? this.roots[0]! : await confineDirectory(params.cwd, this.roots);
    if (this.terminals.size + this.creating >= this.maxTerminals) {
      throw failed(`too many terminals: ${this.maxTerminals} are open; release one first`, { maxTerminals: this.maxTerminals });
    }
    const env = { ...this.baseEnv };
    for (const { name, value } of envEntries) env[name] = value;
    if (epoch !== this.epoch) throw failed('the terminals were closed while this one was starting');
    this.creating++;
    let child: SupervisedProcess;
    try {
      child = await spawnSupervised({ file: '/bin/sh', args: ['-c', commandLine(command, args)], cwd, env, shutdown: SHUTDOWN, ...(this.processes && { observer: this.processes }) });
    } catch (error) {
      throw failed(`cannot start the terminal: ${errorMessage(error)}`);
    } finally {
      this.creating--;
    }
    child.stdin.end(); // ACP terminals have no input
    if (epoch !== this.epoch) {
      await child.stop();
      throw failed('the terminals were closed while this one was starting');
    }
    // No await between the spawn resolving and track(): output listeners are attached before any
    // I/O callback can deliver data (stderr already flows into the supervisor's tail).
    const terminal = this.track(params.sessionId, child, limit);
    this.terminals.set(terminal.id, terminal);
    return { terminalId: terminal.id };
  }

  async output(params: { sessionId: string; terminalId: string }): Promise<{ output: string; truncated: boolean; exitStatus?: { exitCode: number | null; signal: string | null } | null }> {
    const terminal = this.get(params);
    const { output, truncated } = terminal.output.snapshot(terminal.exit !== undefined);
    return { output, truncated, exitStatus: terminal.exit ? { ...terminal.exit } : null };
  }

  async waitForExit(params: { sessionId: string; terminalId: string }): Promise<{ exitCode: number | null; signal: string | null }> {
    return { ...(await this.get(params).exited) };
  }

  async kill(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    await this.stop(this.get(params));
    return {};
  }

  async release(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    const terminal = this.get(params);
    this.terminals.delete(terminal.id); // forget first: the id is invalid from now on
    await this.stop(terminal);
    return {};
  }

  /** Stops every terminal's process tree (session end); pending waits resolve. */
  async closeAll(): Promise<void> {
    this.epoch++;
    const all = [...this.terminals.values()];
    this.terminals.clear();
    await Promise.all(all.map((t) => this.stop(t)));
  }

  private outputLimit(requested: unknown): number {
    if (requested === undefined || requested === null) return this.defaultOutputByteLimit;
    if (typeof requested !== 'number' || !Number.isSafeInteger(requested) || requested < 0) throw denied(`outputByteLimit must be a non-negative integer: ${String(requested)}`);
    return Math.min(requested, MAX_OUTPUT_BYTE_LIMIT);
  }

  private get(params: { sessionId: string; terminalId: string }): Terminal {
    const terminal = typeof params.terminalId === 'string' ? this.terminals.get(params.terminalId) : undefined;
    // A terminal belongs to the session that created it: other sessions cannot see it.
    if (!terminal || terminal.sessionId !== params.sessionId) throw unknownTerminal(params.sessionId, params.terminalId);
    return terminal;
  }

  private track(sessionId: string, child: SupervisedProcess, limit: number): Terminal {
    const output = new OutputBuffer(limit);
    const onData = (chunk: Buffer): void => output.append(chunk);
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const closed = (stream: NodeJS.ReadableStream): Promise<void> => new Promise((resolve) => stream.once('close', resolve));
    const pipesClosed = Promise.all([closed(child.stdout), closed(child.stderr)]);
    const terminal: Terminal = {
      id: `term-${this.nextId++}`,
      sessionId,
      process: child,
      output,
      exit: undefined,
      exited: undefined as unknown as Promise<TerminalExit>,
      // Kept after the shell exits: background processes it left in its group die at the limit too.
      wallClock: setTimeout(() => {
        if (terminal.exit === undefined) terminal.timedOut = true;
        void child.stop();
      }, this.wallClockMs),
      timedOut: false,
    };
    terminal.wallClock.unref();
    terminal.exited = child.exited.then(async (exit) => {
      let drainTimer: NodeJS.Timeout | undefined;
      await Promise.race([pipesClosed, new Promise<void>((resolve) => (drainTimer = setTimeout(resolve, EXIT_DRAIN_MS)))]);
      clearTimeout(drainTimer);
      if (terminal.timedOut) output.append(Buffer.from(`\n[terminal killed: wall-clock limit of ${this.wallClockMs} ms reached]\n`));
      terminal.exit = { exitCode: exit.code, signal: exit.signal };
      return terminal.exit;
    });
    return terminal;
  }

  /** Stops the whole tree and waits until the exit is recorded, so pending waits have resolved. */
  private async stop(terminal: Terminal): Promise<void> {
    clearTimeout(terminal.wallClock);
    await terminal.process.stop();
    await terminal.exited;
  }
}
