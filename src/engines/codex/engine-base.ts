/**
 * What the two Codex engines share: one supervised `codex` process per runner generation, a
 * JSON-RPC peer over its stdio, AgentEvent stamping (`gen`, `at`, nothing after `exited`), the
 * message queue (Codex runs one turn at a time per thread: messages wait until the handshake is
 * done and the previous turn has ended), and the stop/exit paths.
 *
 * Subclasses provide the protocol: the command line, the handshake, how a turn starts and is
 * interrupted, how notifications and server requests translate, how permissions are answered.
 */
import { AseError, errorMessage } from '../../errors.js';
import type { PermissionDecision, UserMessage } from '../../events/engine-input.js';
import type { AgentEventBody } from '../../events/agent-event.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from '../core/engine.js';
import { EngineEvents, type InvalidEvent } from '../core/engine-events.js';
import { findAgent, type AgentCliSpec, type AgentLocation } from '../core/agent-discovery.js';
import { credentialHint } from '../core/agent-diagnosis.js';
import { readAgentVersion, versionWarning } from '../core/agent-version.js';
import { buildEnv } from '../transport/env.js';
import type { ProcessExit } from '../transport/process-supervisor.js';
import { tapTraffic, type TrafficRecord } from '../transport/traffic.js';
import { JsonRpcPeer, type InvalidMessage } from '../transport/json-rpc.js';
import { CODEX_CREDENTIAL_VARS, codexEnvAllow, mergeCodexOptions, type CodexEngineOptions } from './options.js';
import { noteSkipped as noteSkippedInput } from '../core/skipped-inputs.js';
import { launchNdjsonProcess, type NdjsonProcess } from '../transport/ndjson-process.js';

/** How long stop() lets a running turn be interrupted before the stop ladder. */
const STOP_INTERRUPT_MS = 2_000;


export abstract class CodexEngineBase<O extends CodexEngineOptions = CodexEngineOptions> implements AgentEngine {
  abstract readonly capabilities: EngineCapabilities;
  /** Engine name for messages ('codex' / 'codex-mcp'). */
  protected abstract readonly engineName: string;
  /** Whether outgoing messages carry `"jsonrpc": "2.0"`. */
  protected abstract readonly jsonrpcField: boolean;

  protected readonly context: EngineContext;
  readonly #factoryOptions: O;
  protected options!: O;
  protected spec!: EngineStartSpec;
  protected peer!: JsonRpcPeer;
  #transport: NdjsonProcess | undefined;
  readonly #events: EngineEvents;
  #spawning: Promise<void> | undefined;
  #started = false;
  #ready = false;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  #protocolFailure = false;
  readonly #queue: UserMessage[] = [];
  /** The local fallback of a pending interrupt (cleared when the turn ends). */
  #interruptGuard: { readonly id: number } | undefined;

  /** Upstream messages that were skipped (unknown, malformed, stale), newest last. */
  readonly skipped: InvalidMessage[] = [];
  /** Milestones (epoch ms from the context clock). */
  readonly timings: { spawned?: number; ready?: number } = {};
  /** The CLI's version, once known (package.json, `--version`, or the preflight's probe). */
  version: string | undefined;

  constructor(context: EngineContext, options: O) {
    this.context = context;
    this.#events = new EngineEvents(context);
    this.#factoryOptions = options;
  }

  get pid(): number | undefined {
    return this.#transport?.pid;
  }

  get listenerErrors(): readonly unknown[] {
    return this.#events.listenerErrors;
  }

  /** Bodies that failed AgentEvent validation (a bug if ever non-empty). */
  get invalidEvents(): readonly InvalidEvent[] {
    return this.#events.invalidEvents;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  // ---------------------------------------------------------------------------------------------
  // Protocol hooks

  /** The CLI this engine runs: how to find it and which version it is tested against. */
  protected abstract readonly cli: AgentCliSpec;
  /** Checks before spawning (e.g. the version). Throws AseError. */
  protected preflight(_bin: string, _env: Record<string, string>): Promise<void> {
    return Promise.resolve();
  }
  /** argv after the binary. */
  protected abstract commandArgs(): string[];
  /** Registers handlers for requests from the server on `this.peer`. */
  protected abstract registerHandlers(): void;
  protected abstract onNotification(method: string, params: unknown): void;
  /** Runs after spawn; resolves when the engine can take turns (events may be emitted). */
  protected abstract handshake(): Promise<void>;
  /** Starts one turn. Resolves once it is under way; failures are reported as events. */
  protected abstract startTurn(message: UserMessage): Promise<void>;
  /** Interrupts the running turn (no-op when none). */
  protected abstract interruptTurn(timeoutMs: number): Promise<void>;
  protected abstract answer(requestId: string, decision: PermissionDecision): Promise<void>;
  /** True while a turn is running (between startTurn and its turn_complete). */
  protected abstract get turnActive(): boolean;

  // ---------------------------------------------------------------------------------------------
  // AgentEngine

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#started || this.#stopRequested) throw new AseError('INVALID_INPUT', `${this.engineName} engine: already started or stopped`);
    this.#started = true;
    this.spec = spec;
    this.#events.bind(spec.gen);
    const fail = (error: unknown): never => {
      throw this.#events.startFailed(error);
    };
    let env: Record<string, string>;
    try {
      this.options = mergeCodexOptions(this.engineName, this.#factoryOptions, spec.options);
      env = buildEnv({ allow: codexEnvAllow(this.options), set: this.options.env ?? {} });
    } catch (error) {
      return fail(error);
    }
    this.#events.authHint = credentialHint({ title: 'Codex', lookedFor: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_ACCESS_TOKEN'], related: CODEX_CREDENTIAL_VARS, env, otherwise: 'a `codex login` in CODEX_HOME (default ~/.codex)' });
    const tap = this.options.onTraffic;
    const explicit = this.context.bin ?? this.options.bin;
    const spawning = (async () => {
      // A replaced launcher starts no real CLI: the bin is used as given (and not looked for).
      let location: AgentLocation | undefined;
      if (!this.options.launcher) {
        location = await findAgent(this.cli, explicit !== undefined ? { bin: explicit } : {});
        // The bundled `rg` lives next to the binary; Codex finds it on PATH.
        if (location.pathDir) env['PATH'] = [location.pathDir, env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
      }
      const file = location?.file ?? explicit ?? 'codex';
      await this.preflight(file, env);
      if (location) this.#checkVersion(location);
      return (this.options.launcher ?? launchNdjsonProcess)({
        file,
        args: [...(location?.args ?? []), ...this.commandArgs(), ...(this.options.extraArgs ?? [])],
        cwd: spec.workDir,
        env,
        ...(this.options.shutdown && { shutdown: this.options.shutdown }),
        ...(this.options.maxLineBytes !== undefined && { maxLineBytes: this.options.maxLineBytes }),
        ...(this.context.processes && { observer: this.context.processes }),
        onMessage: (value) => this.#onMessage(value),
        onInvalidLine: (reason, line) => {
          this.noteSkipped(reason, line);
          this.#events.signOfLife(); // junk on stdout still shows the process alive
        },
        onProtocolFailure: (error) => this.#onProtocolFailure(error),
        ...(tap && { onLine: (direction: TrafficRecord['direction'], line: string) => tapTraffic(tap, { at: this.context.now(), direction, line }) }),
      });
    })();
    this.#spawning = spawning.then(
      () => undefined,
      () => undefined,
    );
    let transport: NdjsonProcess;
    try {
      transport = await spawning;
    } catch (error) {
      return fail(error);
    }
    this.#transport = transport;
    this.timings.spawned = this.context.now();
    const ctx = this.context;
    this.peer = new JsonRpcPeer({
      writer: { write: (value) => transport.write(value) },
      jsonrpcField: this.jsonrpcField,
      timers: { setTimeout: (fn, ms) => ctx.setTimeout(fn, ms), clearTimeout: (h) => ctx.clearTimeout(h as { readonly id: number }) },
      defaultTimeoutMs: this.options.requestTimeoutMs ?? 60_000,
      onNotification: (method, params) => {
        if (!this.#events.exited) this.onNotification(method, params);
      },
      onInvalid: (invalid) => this.noteSkipped(invalid.reason, invalid.raw),
    });
    this.registerHandlers();
    void transport.exited.then((exit) => this.#onExit(exit));
    // stop() was called while we were spawning: it waits for #spawning, then stops this process.
    if (this.#stopRequested) return;
    void this.#runHandshake();
  }

  async send(message: UserMessage): Promise<void> {
    this.#assertRunning('send');
    this.#queue.push(message);
    this.dispatchQueued();
  }

  async abort(): Promise<void> {
    this.#assertRunning('abort');
    if (!this.#ready) return;
    await this.interruptTurn(this.options.interruptTimeoutMs ?? 15_000);
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
    await this.answer(requestId, decision);
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning; // a start in progress finishes spawning first, so its process is stopped too
      if (!this.#transport) return;
      // Already gone by itself: what it spawned may not be (see #onExit); wait until that is reaped too.
      if (this.#events.exited) return this.#transport.stop();
      // Interrupt a running turn first: both servers keep working on it after stdin EOF. A server
      // that does not answer (the interrupt may first wait for a turn/start answer) must not hold
      // up the ladder: the interrupt gets STOP_INTERRUPT_MS in all.
      if (this.#ready && this.turnActive) await this.#within(STOP_INTERRUPT_MS, this.interruptTurn(STOP_INTERRUPT_MS).catch(() => undefined));
      await this.#transport.stop();
      await this.#events.exitedEmitted;
    })();
    return this.#stopping;
  }

  // ---------------------------------------------------------------------------------------------
  // For subclasses

  protected get isReady(): boolean {
    return this.#ready;
  }

  protected get isStopping(): boolean {
    return this.#stopRequested || this.#events.exited;
  }

  /** Starts the next queued message when the engine is ready and no turn is running. */
  protected dispatchQueued(): void {
    if (!this.#ready || this.#events.exited || this.#stopRequested || this.turnActive) return;
    const next = this.#queue.shift();
    if (!next) return;
    void this.startTurn(next).catch((error: unknown) => this.noteSkipped(`startTurn failed: ${errorMessage(error)}`, next));
  }

  /**
   * Arms the local fallback of an interrupt: neither server is bound to end an interrupted turn, so
   * if it has not ended within `timeoutMs`, `onTimeout` closes it here and the session does not
   * wait forever. Replaces a fallback already armed.
   */
  protected armInterruptGuard(timeoutMs: number, onTimeout: () => void): void {
    this.clearInterruptGuard();
    this.#interruptGuard = this.context.setTimeout(() => {
      this.#interruptGuard = undefined;
      onTimeout();
    }, timeoutMs);
  }

  /** The turn ended (or the interrupt failed): its fallback timer must not outlive it. */
  protected clearInterruptGuard(): void {
    if (this.#interruptGuard) this.context.clearTimeout(this.#interruptGuard);
    this.#interruptGuard = undefined;
  }

  /** A fatal protocol/handshake problem: reports it and stops the process. */
  protected fail(message: string): void {
    if (this.#events.exited) return;
    this.emit({ type: 'error', kind: 'fatal', message: `${message}${this.stderrSuffix()}`, retryable: false });
    void this.stop();
  }

  protected emit(body: AgentEventBody): void {
    this.#events.emit(body);
  }

  protected emitAll(bodies: readonly AgentEventBody[]): void {
    this.#events.emitAll(bodies);
  }

  protected noteSkipped(reason: string, raw: unknown): void {
    noteSkippedInput(this.skipped, { reason, raw });
  }

  protected stderrSuffix(): string {
    const tail = this.#transport?.stderrTail().trim();
    return tail ? `; stderr: ${tail.slice(-2000)}` : '';
  }

  // ---------------------------------------------------------------------------------------------

  async #runHandshake(): Promise<void> {
    try {
      await this.handshake();
    } catch (error) {
      if (this.#events.exited || this.#stopRequested) return;
      this.fail(`${this.engineName} engine: handshake failed: ${errorMessage(error)}`);
      return;
    }
    if (this.#events.exited || this.#stopRequested) return;
    this.#ready = true;
    this.timings.ready = this.context.now();
    this.emit({ type: 'ready' });
    this.dispatchQueued();
  }

  /** Warns (once the version is read, cached per binary) when the CLI is not the tested version. */
  #checkVersion(location: AgentLocation): void {
    void readAgentVersion(this.cli, location).then((info) => {
      this.version ??= info.version;
      const warning = versionWarning(this.cli, info.version, location.where);
      if (warning) this.emit({ type: 'warning', code: 'untested_version', message: `${this.engineName} engine: ${warning}` });
    });
  }

  /** Waits for `work`, but at most `ms` (context clock). */
  async #within(ms: number, work: Promise<unknown>): Promise<void> {
    let timer: { readonly id: number } | undefined;
    const elapsed = new Promise<void>((resolve) => (timer = this.context.setTimeout(resolve, ms)));
    try {
      await Promise.race([work, elapsed]);
    } finally {
      if (timer) this.context.clearTimeout(timer);
    }
  }

  #onMessage(value: unknown): void {
    if (this.#events.exited) return;
    // A message that produced no event (a status notification, a response whose effect follows
    // later) still shows the server alive: the stall watchdog hears of it.
    this.#events.observe(() => this.peer.receive(value));
  }

  #onProtocolFailure(error: Error): void {
    if (this.#protocolFailure) return;
    this.#protocolFailure = true;
    this.emit({ type: 'error', kind: 'protocol', message: `${this.engineName} engine: ${error.message}`, retryable: false });
    void this.stop();
  }

  /**
   * What the engine holds besides the process (the host tools' loopback server, their running
   * calls): released once the process is gone, before `exited` is reported, so a stopped engine
   * leaves no port behind. Must not reject.
   */
  protected release(): Promise<void> {
    return Promise.resolve();
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    this.peer.close(`${this.engineName} process exited (code ${exit.code}, signal ${exit.signal})`);
    // Codex died by itself (crash, OOM kill): the commands it ran live in process groups of their
    // own and an unsandboxed one outlives it. The stop ladder takes down every descendant the
    // supervisor collected while codex ran.
    if (!this.#stopRequested) void this.#transport?.stop();
    if (this.#events.exited) return;
    if (!this.#stopRequested && !this.#protocolFailure) {
      const what = this.turnActive ? 'exited during a turn' : 'exited unexpectedly';
      this.emit({ type: 'error', kind: 'fatal', message: `${this.engineName} process ${what} (code ${exit.code}, signal ${exit.signal})${this.stderrSuffix()}`, retryable: false });
    }
    await this.release().catch(() => undefined);
    this.#emitExited(exit, this.#stopRequested ? 'stopped' : this.#protocolFailure ? 'protocol error' : 'process exited');
  }

  #emitExited(exit: ProcessExit, reason: string): void {
    this.emit({ type: 'exited', code: exit.code, signal: exit.signal, reason });
  }

  #assertRunning(what: string): void {
    if (!this.#started || !this.#transport || this.#events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `${this.engineName} engine: ${what}() while the engine is not running`);
    }
  }
}
