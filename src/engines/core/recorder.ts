/**
 * Records a session's raw agent traffic to a recording file (recording.ts, docs/recording.md):
 * `createSession({record})` and `ase run --record FILE`. The engine factory is wrapped so every
 * engine it creates reports its traffic here (through the engines' own `onTraffic` tap) and its
 * start and exit; nothing else about the engine changes.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { AseError } from '../../errors.js';
import type { AgentEvent } from '../../events/agent-event.js';
import type { TrafficRecord, TrafficTap } from '../transport/traffic.js';
import type { EngineFactory } from './engine.js';
import { wrapEngine } from './engine-wrapper.js';
import { RECORDING_FORMAT, RECORDING_VERSION, redactArgv, redactEngineOptions, type RecordingHeader, type RecordingRecord } from './recording.js';

/** This library's version (the recording header names it). */
export function aseVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Anything with a `write(text)`: a Node `Writable`, a socket, an array-backed test sink. */
export interface RecordingSink {
  write(chunk: string): unknown;
}

/** Where a recording goes: a file path (created or truncated, mode 0600) or a writable handle (left open). */
export type RecordTarget = string | RecordingSink;

/** The engines whose traffic can be recorded: the ones with an `onTraffic` tap. */
export const RECORDABLE_ENGINES: readonly string[] = ['claude', 'codex', 'codex-mcp', 'acp'];

/** Throws INVALID_OPTIONS for an engine with no traffic tap (checked before a file is written). */
export function assertRecordable(factory: EngineFactory): void {
  if (!RECORDABLE_ENGINES.includes(factory.name)) {
    throw new AseError('INVALID_OPTIONS', `record: the ${factory.name} engine has no traffic to record (recordable: ${RECORDABLE_ENGINES.join(', ')})`);
  }
}

export interface RecorderHeader {
  agent: string;
  workDir: string;
  engineOptions: Record<string, unknown>;
  /** Default: {@link aseVersion}. */
  aseVersion?: string;
  /** The `ase` arguments (after `ase`) that recorded; redacted here. */
  argv?: readonly string[];
  sessionId?: string;
}

export class TrafficRecorder {
  readonly #write: (text: string) => void;
  readonly #close: () => void;
  #closed = false;

  constructor(target: RecordTarget, header: RecorderHeader) {
    if (typeof target === 'string') {
      let fd: number;
      try {
        // Traffic holds prompts and file contents: readable by the owner only.
        fd = openSync(target, 'w', 0o600);
      } catch (error) {
        throw new AseError('INVALID_OPTIONS', `record: cannot write ${target} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
      }
      this.#write = (text) => writeSync(fd, text);
      this.#close = () => closeSync(fd);
    } else if (target && typeof target.write === 'function') {
      this.#write = (text) => void target.write(text);
      this.#close = () => undefined;
    } else {
      throw new AseError('INVALID_OPTIONS', 'record: expected a file path or an object with write(text)');
    }
    const line: RecordingHeader = {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      agent: header.agent,
      engineOptions: redactEngineOptions(header.engineOptions),
      workDir: header.workDir,
      aseVersion: header.aseVersion ?? aseVersion(),
      argv: redactArgv(header.argv ?? []),
      ...(header.sessionId !== undefined && { sessionId: header.sessionId }),
      startedAt: new Date().toISOString(),
      platform: `${process.platform}-${process.arch}`,
    };
    this.#append(line);
  }

  /** The tap for one generation's engine. */
  tap(gen: number): TrafficTap {
    return (record: TrafficRecord) => this.#append({ kind: 'traffic', at: record.at, gen, direction: record.direction, line: record.line });
  }

  start(gen: number, at: number): void {
    this.#append({ kind: 'start', at, gen });
  }

  exit(event: Extract<AgentEvent, { type: 'exited' }>, agentVersion: string | undefined): void {
    this.#append({ kind: 'exit', at: event.at, gen: event.gen, code: event.code, signal: event.signal, ...(agentVersion !== undefined && { agentVersion }) });
  }

  /** Closes a file target (idempotent); later records are dropped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#close();
    } catch {
      // nothing left to lose
    }
  }

  #append(record: RecordingHeader | RecordingRecord): void {
    if (this.#closed) return;
    try {
      this.#write(`${JSON.stringify(record)}\n`);
    } catch {
      // A full disk must not break the session being recorded (like a throwing tap).
    }
  }
}

/**
 * `factory` with every engine it creates recorded by `recorder`: each start is marked and gets
 * the recorder's tap (after any `onTraffic` of the session's engine options), each exit is marked.
 */
export function recordingFactory(factory: EngineFactory, recorder: TrafficRecorder): EngineFactory {
  assertRecordable(factory);
  const wrapped: EngineFactory = {
    name: factory.name,
    capabilities: factory.capabilities,
    create: (context) => {
      const engine = factory.create(context);
      engine.onEvent((event) => {
        if (event.type !== 'exited') return;
        const version = (engine as { version?: unknown }).version;
        recorder.exit(event, typeof version === 'string' ? version : undefined);
      });
      return wrapEngine(engine, {
        start: (spec) => {
          recorder.start(spec.gen, context.now());
          const tap = recorder.tap(spec.gen);
          const theirs = spec.options['onTraffic'];
          const onTraffic: TrafficTap =
            typeof theirs === 'function'
              ? (record) => {
                  tap(record);
                  (theirs as TrafficTap)(record);
                }
              : tap;
          return engine.start({ ...spec, options: { ...spec.options, onTraffic } });
        },
      });
    },
  };
  if (factory.validateOptions) wrapped.validateOptions = (options) => factory.validateOptions!(options);
  if (factory.locateAgent) wrapped.locateAgent = (launch) => factory.locateAgent!(launch);
  if (factory.validateSettings) wrapped.validateSettings = (settings) => factory.validateSettings!(settings);
  if (factory.diagnose) wrapped.diagnose = (options) => factory.diagnose!(options);
  return wrapped;
}
