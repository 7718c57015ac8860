/**
 * The driven tier's engine: for agent CLIs whose only interface is a one-shot JSON mode
 * (`codex exec --json`, `claude -p --output-format stream-json`). Each turn is one supervised
 * process (the prompt on stdin, the JSON stream on stdout); the agent's session id, learnt from the
 * first turn's stream, resumes the next turn's process. There are no callbacks: no permission
 * prompts (the CLI's own policy decides), and the only signals are the stream and the exit.
 *
 * The engine itself lives from `start()` to `stop()` (`ready` at once, `exited` only at stop), so
 * a session sees one engine generation across many turn processes. A turn ends on the CLI's own
 * end-of-turn line; a process that exits without one ends the turn as `failed` (or `cancelled`
 * after `abort()`), with the stderr tail in the error.
 */
import { AseError, errorMessage } from '../../errors.js';
import type { AgentEventBody } from '../../events/agent-event.js';
import type { PermissionDecision, UserMessage } from '../../events/engine-input.js';
import { launchNdjsonProcess, type NdjsonLauncher, type NdjsonProcess } from '../transport/ndjson-process.js';
import type { ProcessExit, ShutdownOptions } from '../transport/process-supervisor.js';
import { tapTraffic, type TrafficRecord, type TrafficTap } from '../transport/traffic.js';
import { findAgent, type AgentCliSpec, type AgentLocation } from './agent-discovery.js';
import { readAgentVersion, versionWarning } from './agent-version.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from './engine.js';
import { EngineEvents, type InvalidEvent } from './engine-events.js';
import { noteSkipped, type SkippedInput } from './skipped-inputs.js';

/** Reads one turn's JSON stream. A fresh one per turn process. */
export interface TurnStreamTranslator {
  /** Translates one decoded stdout message. Never throws. */
  translate(value: unknown): AgentEventBody[];
  /** The agent's session id, once the stream named it (the next turn resumes it). */
  readonly sessionId: string | undefined;
  /** True once the stream ended the turn (its `turn_complete` was produced). */
  readonly turnEnded: boolean;
  /** Closes a turn whose process exited without ending it: `error` (unless cancelled) + `turn_complete`. */
  endWithoutResult(status: 'failed' | 'cancelled', reason: string): AgentEventBody[];
  readonly skipped: SkippedInput[];
}

/** What every driven engine takes (per engine, more). */
export interface DrivenEngineOptions {
  bin?: string;
  shutdown?: ShutdownOptions;
  maxLineBytes?: number;
  onTraffic?: TrafficTap;
  /** Testing hook: replaces process spawning (e.g. with a recorded-traffic replayer). */
  launcher?: NdjsonLauncher;
}

export interface TurnCommand {
  args: string[];
  env: Record<string, string>;
  /** Written to stdin, which is then ended. */
  input: string;
  /**
   * Instead of `input`: this value is written as one line and stdin stays open, so the engine can
   * answer the CLI's requests on it (`controlMessage`); stdin is ended once the turn ended.
   */
  inputLine?: unknown;
}

/** What `controlMessage` may do with the running turn's process. */
export interface TurnIo {
  write(value: unknown): Promise<void>;
}

interface RunningTurn {
  process: NdjsonProcess | undefined;
  translator: TurnStreamTranslator;
  aborted: boolean;
  done: Promise<void>;
}

export abstract class DrivenEngine<O extends DrivenEngineOptions = DrivenEngineOptions> implements AgentEngine {
  abstract readonly capabilities: EngineCapabilities;
  protected abstract readonly engineName: string;
  protected abstract readonly cli: AgentCliSpec;
  /** The options in force for this start (factory options merged with the session's); throws INVALID_OPTIONS. */
  protected abstract resolveOptions(spec: EngineStartSpec): O;
  /** The command line, environment and stdin of one turn; `resumeToken` is the session to continue. */
  protected abstract turnCommand(message: UserMessage, resumeToken: string | undefined, location: AgentLocation | undefined): TurnCommand;
  protected abstract newTranslator(): TurnStreamTranslator;
  /**
   * A stdout message that is a request of the CLI to the host (a turn started with `inputLine`):
   * answer it through `io` and return true; false hands it to the translator. Default: none are.
   */
  protected controlMessage(_value: unknown, _io: TurnIo): boolean {
    return false;
  }
  /** The running turn is being aborted or the engine stopped (`stopping`): end what the engine runs for it. */
  protected turnAborting(_stopping: boolean): void {}

  protected readonly context: EngineContext;
  protected options!: O;
  protected spec!: EngineStartSpec;
  readonly #events: EngineEvents;
  #location: AgentLocation | undefined;
  #started = false;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  /** The session to resume: the start spec's token, then whatever each turn's stream named. */
  #resumeToken: string | undefined;
  readonly #queue: UserMessage[] = [];
  #turn: RunningTurn | undefined;
  /** The session id last reported in `session_identified` (each turn's stream repeats it). */
  #identified: string | undefined;
  /** Upstream lines that were skipped (unknown, malformed), newest last; all turns. */
  readonly skipped: SkippedInput[] = [];
  /** The CLI's version, once read. */
  version: string | undefined;
  /** Turn processes spawned so far. */
  turnsRun = 0;

  constructor(context: EngineContext) {
    this.context = context;
    this.#events = new EngineEvents(context);
  }

  get invalidEvents(): readonly InvalidEvent[] {
    return this.#events.invalidEvents;
  }

  get listenerErrors(): readonly unknown[] {
    return this.#events.listenerErrors;
  }

  /** The session id the next turn resumes. */
  get resumeToken(): string | undefined {
    return this.#resumeToken;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#started || this.#stopRequested) throw new AseError('INVALID_INPUT', `${this.engineName} engine: already started or stopped`);
    this.#started = true;
    this.spec = spec;
    this.#events.bind(spec.gen);
    try {
      this.options = this.resolveOptions(spec);
      // A replaced launcher starts no real CLI: the bin is used as given (and not looked for).
      if (!this.options.launcher) {
        const explicit = this.context.bin ?? this.options.bin;
        this.#location = await findAgent(this.cli, explicit !== undefined ? { bin: explicit } : {});
        this.#checkVersion(this.#location);
      }
    } catch (error) {
      throw this.#events.startFailed(error);
    }
    this.#resumeToken = spec.resumeToken;
    // Nothing runs between turns: the engine is ready at once, and a resumed session is known.
    if (spec.resumeToken !== undefined) {
      this.#identified = spec.resumeToken;
      this.#events.emit({ type: 'session_identified', resumeToken: spec.resumeToken });
    }
    this.#events.emit({ type: 'ready' });
  }

  async send(message: UserMessage): Promise<void> {
    this.#assertRunning('send');
    this.#queue.push(message);
    this.#dispatch();
  }

  /** Stops the running turn's process: the turn ends `cancelled`. */
  async abort(): Promise<void> {
    this.#assertRunning('abort');
    const turn = this.#turn;
    if (!turn) return;
    turn.aborted = true;
    this.turnAborting(false);
    await turn.process?.stop();
    await turn.done;
  }

  /** There are no permission prompts in a one-shot JSON mode: nothing is ever asked. */
  async answerPermission(_requestId: string, _decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      this.#queue.length = 0;
      const turn = this.#turn;
      this.turnAborting(true);
      if (turn) {
        turn.aborted = true;
        await turn.process?.stop();
        await turn.done;
      }
      this.#events.emit({ type: 'exited', code: null, signal: null, reason: 'stopped' });
    })();
    return this.#stopping;
  }

  protected get stderrLimit(): number {
    return 2000;
  }

  #assertRunning(what: string): void {
    // The same code as every other engine (ENGINE_NOT_RUNNING), before start and after stop alike.
    if (!this.#started) throw new AseError('ENGINE_NOT_RUNNING', `${this.engineName} engine: ${what} before start`);
    if (this.#stopRequested || this.#events.exited) throw new AseError('ENGINE_NOT_RUNNING', `${this.engineName} engine: ${what} after stop`);
  }

  #dispatch(): void {
    if (this.#turn || this.#stopRequested || this.#events.exited) return;
    const next = this.#queue.shift();
    if (!next) return;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const turn: RunningTurn = { process: undefined, translator: this.newTranslator(), aborted: false, done };
    this.#turn = turn;
    void this.#runTurn(next, turn).finally(() => {
      for (const s of turn.translator.skipped) noteSkipped(this.skipped, s);
      this.#turn = undefined;
      finish();
      this.#dispatch();
    });
  }

  async #runTurn(message: UserMessage, turn: RunningTurn): Promise<void> {
    const { translator } = turn;
    const emitAll = (bodies: AgentEventBody[]): void => {
      for (const body of bodies) {
        if (body.type === 'session_identified') {
          // Reported when it changes: every turn's stream names the session again.
          if (body.resumeToken === this.#identified) continue;
          this.#identified = this.#resumeToken = body.resumeToken;
        }
        this.#events.emit(body);
      }
    };
    let command: TurnCommand;
    try {
      command = this.turnCommand(message, this.#resumeToken, this.#location);
    } catch (error) {
      emitAll(translator.endWithoutResult('failed', errorMessage(error)));
      return;
    }
    const tap = this.options.onTraffic;
    let process: NdjsonProcess;
    try {
      this.turnsRun++;
      process = await (this.options.launcher ?? launchNdjsonProcess)({
        file: this.#location?.file ?? this.options.bin ?? this.cli.commands[0]!,
        args: [...(this.#location?.args ?? []), ...command.args],
        cwd: this.spec.workDir,
        env: command.env,
        ...(command.inputLine === undefined && { input: command.input }),
        ...(this.options.shutdown && { shutdown: this.options.shutdown }),
        ...(this.options.maxLineBytes !== undefined && { maxLineBytes: this.options.maxLineBytes }),
        ...(this.context.processes && { observer: this.context.processes }),
        onMessage: (value) => {
          if (command.inputLine !== undefined && turn.process && this.controlMessage(value, turn.process)) return void this.#events.signOfLife();
          if (translator.turnEnded) return void noteSkipped(translator.skipped, { reason: 'after the end of the turn', raw: value });
          this.#events.observe(() => emitAll(translator.translate(value)));
          // Stdin was kept open for the CLI's requests: the turn is over, so the CLI may finish.
          if (translator.turnEnded && command.inputLine !== undefined) turn.process?.endInput?.();
        },
        onInvalidLine: (reason, line) => {
          noteSkipped(translator.skipped, { reason, raw: line });
          this.#events.signOfLife();
        },
        onProtocolFailure: (error) => {
          this.#events.emit({ type: 'error', kind: 'protocol', message: `${this.engineName} engine: ${error.message}`, retryable: false });
          void turn.process?.stop();
        },
        ...(tap && { onLine: (direction: TrafficRecord['direction'], line: string) => tapTraffic(tap, { at: this.context.now(), direction, line }) }),
      });
    } catch (error) {
      emitAll(translator.endWithoutResult('failed', `${this.engineName} engine: could not start the turn: ${errorMessage(error)}`));
      return;
    }
    turn.process = process;
    if (turn.aborted) void process.stop();
    else if (command.inputLine !== undefined) {
      await process.write(command.inputLine).catch(() => undefined); // a dead stdin shows as the exit below
    }
    const exit: ProcessExit = await process.exited;
    await process.stop(); // reaps what the turn left behind (a no-op when all is gone)
    if (translator.turnEnded) return;
    const stderr = process.stderrTail().trim();
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const reason = turn.aborted
      ? 'the turn was aborted'
      : `${this.engineName}: the turn process ${how} before the turn ended${stderr ? `; stderr: ${stderr.slice(-this.stderrLimit)}` : ''}`;
    emitAll(translator.endWithoutResult(turn.aborted ? 'cancelled' : 'failed', reason));
  }

  #checkVersion(location: AgentLocation): void {
    void readAgentVersion(this.cli, location).then((info) => {
      this.version ??= info.version;
      const warning = versionWarning(this.cli, info.version, location.where);
      if (warning) this.#events.emit({ type: 'warning', code: 'untested_version', message: `${this.engineName} engine: ${warning}` });
    });
  }
}
