/**
 * The byte pipe under an NDJSON engine: one supervised agent process whose stdout is split into
 * NDJSON messages and whose stdin takes one JSON value per line. Engines talk to an
 * {@link NdjsonProcess}, not to the child process, so tests can swap in a replay of recorded
 * traffic (an engine's `launcher` option).
 */
import type { AseError } from '../../errors.js';
import { drainWithin } from './drain.js';
import { readLines } from './line-reader.js';
import { NdjsonWriter, parseLine } from './ndjson.js';
import type { ProcessObserver } from './process-observer.js';
import { spawnSupervised, type ProcessExit, type ShutdownOptions } from './process-supervisor.js';
import type { TrafficRecord } from './traffic.js';

export interface NdjsonProcessSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  shutdown?: ShutdownOptions;
  maxLineBytes?: number;
  /** Records the process for the host (EngineContext.processes). */
  observer?: ProcessObserver;
  /**
   * One-shot CLIs (`codex exec`, `claude -p`): this text is written to stdin, which is then ended
   * (they read the prompt from stdin and wait for EOF). `write()` is then refused.
   */
  input?: string;
  /** One decoded stdout message. */
  onMessage(value: unknown): void;
  /** A stdout line that is not JSON (logged and skipped). */
  onInvalidLine(reason: string, line: string): void;
  /** The stream can no longer be trusted (a line over the cap); the engine should stop. */
  onProtocolFailure(error: AseError): void;
  /**
   * Sees every line as it crosses the pipe, both ways, non-JSON lines included (the engine's
   * traffic tap). Called before the line is decoded or written.
   */
  onLine?(direction: TrafficRecord['direction'], line: string): void;
}

export interface NdjsonProcess {
  readonly pid: number | undefined;
  /** Writes one value as one line. Rejects once stdin is gone. */
  write(value: unknown): Promise<void>;
  /** Ends stdin after what was written (a CLI reading stream-json input then finishes and exits). Optional for replaying launchers. */
  endInput?(): void;
  /** Resolves once the process has exited and its stdout was drained (bounded wait). Never rejects. */
  readonly exited: Promise<ProcessExit>;
  /** Runs the stop ladder (stdin end → SIGTERM → SIGKILL of the group and descendants). Idempotent. */
  stop(): Promise<void>;
  /** The last bytes of stderr, for error messages. */
  stderrTail(): string;
}

export type NdjsonLauncher = (spec: NdjsonProcessSpec) => Promise<NdjsonProcess>;

/** Spawns the real process (own process group, env exactly as given). */
export const launchNdjsonProcess: NdjsonLauncher = async (spec) => {
  const proc = await spawnSupervised({
    file: spec.file,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    ...(spec.shutdown && { shutdown: spec.shutdown }),
    ...(spec.observer && { observer: spec.observer }),
  });
  const writer = new NdjsonWriter(proc.stdin, spec.onLine && ((line) => spec.onLine?.('to_agent', line)));
  const onLine = (line: string): void => {
    spec.onLine?.('from_agent', line);
    const parsed = parseLine(line);
    if (!parsed) return;
    if (parsed.ok) spec.onMessage(parsed.value);
    else spec.onInvalidLine(`not JSON: ${parsed.error.message}`, line);
  };
  // A line over the cap: the stream can no longer be trusted; the engine stops the process.
  readLines(proc.stdout, { line: onLine, tooLong: (error) => spec.onProtocolFailure(error) }, { maxLineBytes: spec.maxLineBytes });
  if (spec.input !== undefined) {
    spec.onLine?.('to_agent', spec.input);
    proc.stdin.end(spec.input);
  }
  // The drain's own listeners come after the one above, so the last line is delivered first.
  const exited = proc.exited.then(async (exit) => {
    await drainWithin(proc.stdout);
    return exit;
  });
  return {
    pid: proc.pid,
    write: (value) => writer.write(value),
    endInput: () => {
      if (!proc.stdin.writableEnded) proc.stdin.end();
    },
    exited,
    stop: async () => {
      await proc.stop();
    },
    stderrTail: () => proc.stderrTail.text(),
  };
};
