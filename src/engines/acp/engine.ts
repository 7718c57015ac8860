/**
 * The `acp` engine: runs one ACP agent (gemini --acp, codex-acp, claude-code-acp, … see
 * presets.ts) per runner generation and speaks the Agent Client Protocol to it through
 * `@agentclientprotocol/sdk` (reference "acp.md").
 *
 * Lifecycle: spawn (scrubbed env, private HOME, own process group: agent-launch.ts) → `initialize`
 * (awaited; fs and terminal capabilities only when enabled: client-services.ts) → `session/new`,
 * or `session/load` for a resume token (replayed history is kept in `history`, never emitted as a
 * live turn: history-replay.ts) → `session_identified` + `ready` → one `session/prompt` per
 * `send`, queued so that never two are in flight (turn-queue.ts) → `stop()`: cancel a running
 * turn, answer every open permission, close terminals, then the supervisor's ladder (stdin end →
 * SIGTERM → SIGKILL of the group) → `exited`.
 *
 * Host tools (`EngineContext.hostTools`): a loopback MCP server for this generation, given to the
 * agent in session/new and session/load; their permission requests are allowed by the engine
 * unless the tool `requiresPermission`; a cancelled turn aborts the running handlers; the server
 * closes when the agent is gone (host-tools-loopback.ts).
 *
 * Ordering: the agent's messages are interpreted as our own reader splits them, synchronously and
 * in wire order (the SDK may dispatch different methods' handlers out of order); `session/update`
 * notifications end there, the rest go on to the SDK (agent-stream.ts says why). The SDK answers
 * requests and carries ours; what our requests reject with becomes an AseError in agent-request.ts.
 */
import { resolve } from 'node:path';
import type { AnyMessage, ClientConnection } from '@agentclientprotocol/sdk';
import { AgentError, AseError, errorMessage, isAseError, toAseError } from '../../errors.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import { ZERO_USAGE, type AgentEventBody } from '../../events/agent-event.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from '../core/engine.js';
import { engineTier } from '../core/runtime-tier.js';
import { EngineEvents, type InvalidEvent } from '../core/engine-events.js';
import { noteSkipped, type SkippedInput } from '../core/skipped-inputs.js';
import { drainWithin, STDOUT_DRAIN_MS } from '../transport/drain.js';
import { spawnSupervised, type ProcessExit } from '../transport/process-supervisor.js';
import { tapTraffic, type TrafficRecord } from '../transport/traffic.js';
import { credentialHint } from '../core/agent-diagnosis.js';
import { versionWarning } from '../core/agent-version.js';
import { agentLaunch, type AgentLaunch } from './agent-launch.js';
import { agentRequest } from './agent-request.js';
import { agentStream } from './agent-stream.js';
import { clientServices, type ClientServices } from './client-services.js';
import { connectAcpClient } from './client.js';
import { handshake } from './handshake.js';
import { HistoryReplay } from './history-replay.js';
import { ACP_DEFAULTS, resolveAcpOptions, timerMs, type AcpEngineOptions, type AgentProcess } from './options.js';
import { chooseOutcome, PermissionBroker, type PermissionOutcome } from './permissions.js';
import { acpSdk, loadAcpSdk } from './sdk.js';
import { AcpTranslator, type AcpSessionInfo } from './translate.js';
import { checkMode, checkModel, readOffer, setMode, setModel, type SessionOffer } from './session-settings.js';
import type { Json } from './messages.js';
import { TurnQueue } from './turn-queue.js';
import { WireInterpreter } from './wire-interpreter.js';
import type { HostToolCalls } from '../core/host-tools.js';
import { startHostToolsLoopback, type HostToolsLoopback } from '../core/host-tools-loopback.js';

export const ACP_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: false,
  permissions: true,
  interrupt: true,
  resume: true,
  localMode: false,
  transcriptTail: false,
  cost: false,
  // session/set_mode, and the model config option or session/set_model, when the agent offers them.
  setModel: true,
  setPermissionMode: true,
  // The `session/prompt` result, tool_call updates and `session/request_permission`; no price;
  // edits show as diffs (or through our fs service when enabled), not when made through a terminal.
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'authoritative', cost: 'absent', fileChanges: 'cooperative' }),
  // Through the loopback MCP server in session/new and session/load.
  hostTools: true,
});

/** How long stop() lets a cancelled turn end before it closes the connection anyway. */
const STOP_CANCEL_WAIT_MS = 2_000;

export class AcpEngine implements AgentEngine {
  readonly capabilities = ACP_CAPABILITIES;
  readonly #context: EngineContext;
  readonly #factoryOptions: AcpEngineOptions;
  readonly #events: EngineEvents;
  #options: AcpEngineOptions = {};
  /** How the agent was started (argv, env, preset, where it was found), once known. */
  #launch: AgentLaunch | undefined;
  #spec: EngineStartSpec | undefined;
  #proc: AgentProcess | undefined;
  #conn: ClientConnection | undefined;
  #translator: AcpTranslator | undefined;
  readonly #replay = new HistoryReplay();
  #permissions: PermissionBroker | undefined;
  #services: ClientServices = { fs: undefined, terminals: undefined };
  #turns: TurnQueue | undefined;
  #wire: WireInterpreter | undefined;
  /** This generation's host tool calls and their loopback MCP server, when the session has tools. */
  #hostCalls: HostToolCalls | undefined;
  #hostLoopback: Promise<HostToolsLoopback> | undefined;
  #spawning: Promise<void> | undefined;
  #ready = false;
  #stopRequested = false;
  /** Why we are taking the agent down ourselves (cancel timeout, failed handshake, …). */
  #killReason: string | undefined;
  #stopping: Promise<void> | undefined;
  #processExited = false;
  /** Settings changes made before the session was open: applied right after the handshake, before `ready`. */
  #pendingSettings: EngineSettings | undefined;
  /** The mode and model when the session opened (before anything was set): what a `null` change goes back to without engineOptions. */
  #openedWith: { modeId?: string; model?: string } = {};

  /** The ACP session id (the resume token). */
  sessionId: string | undefined;
  /** The `initialize` result (agentCapabilities, agentInfo, authMethods, …). */
  initializeResult: Record<string, unknown> | undefined;
  /** The session/new (or load) result: modes, configOptions, models, … */
  sessionResult: Record<string, unknown> | undefined;
  /**
   * The history the agent replayed during `session/load`, as messages, tool calls and results
   * (not emitted: the vocabulary has no way yet to mark an event as history; see docs/engines/acp.md).
   */
  readonly history: AgentEventBody[] = this.#replay.entries;
  /** Updates and permission requests that arrived while no turn was running (attached to the last). */
  lateMessages = 0;
  /** Requests/notifications without a handler, and observer failures. */
  readonly unhandled: SkippedInput[] = [];
  /** Milestones (epoch ms of the context clock). */
  readonly timings: { spawned?: number; initialized?: number; ready?: number } = {};

  constructor(context: EngineContext, options: AcpEngineOptions = {}) {
    this.#context = context;
    this.#events = new EngineEvents(context);
    this.#factoryOptions = options;
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  get listenerErrors(): readonly unknown[] {
    return this.#events.listenerErrors;
  }

  /** Bodies that failed AgentEvent validation (a bug if ever non-empty). */
  get invalidEvents(): readonly InvalidEvent[] {
    return this.#events.invalidEvents;
  }

  /** Session updates the translator could not use (logged and skipped). */
  get skipped(): readonly SkippedInput[] {
    return [...(this.#translator?.skipped ?? []), ...this.#replay.skipped];
  }

  /** Plan, commands, mode, config options, title, context usage and cost the agent reported. */
  get info(): AcpSessionInfo {
    return this.#translator?.info ?? {};
  }

  /** Ids of permission requests not answered yet. */
  pendingPermissions(): string[] {
    return this.#permissions?.pending() ?? [];
  }

  /** The last bytes the agent wrote to stderr. */
  stderrTail(): string {
    return this.#proc?.stderrTail?.text() ?? '';
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#spec || this.#stopRequested) throw new AseError('INVALID_INPUT', 'acp engine: already started or stopped');
    this.#spec = spec;
    this.#events.bind(spec.gen);
    const fail = (error: unknown): never => {
      throw this.#events.startFailed(error, errorMessage(error));
    };
    try {
      this.#options = resolveAcpOptions(this.#factoryOptions, spec.options);
    } catch (error) {
      return fail(error);
    }
    const gen = spec.gen;
    const workDir = resolve(spec.workDir);
    const toolbox = this.#context.hostTools && this.#context.hostTools.size > 0 ? this.#context.hostTools : undefined;
    const translator = (this.#translator = new AcpTranslator({ idPrefix: `acp-${gen}`, ...(toolbox && { hostTools: toolbox }) }));
    const permissions = (this.#permissions = new PermissionBroker({
      idPrefix: `acp-${gen}-perm`,
      graceMs: this.#options.permissionGraceMs ?? ACP_DEFAULTS.permissionGraceMs,
      timers: { setTimeout: (f, ms) => this.#context.setTimeout(f, timerMs(ms)), clearTimeout: (h) => this.#context.clearTimeout(h) },
    }));
    const turns = (this.#turns = new TurnQueue({
      context: this.#context,
      events: this.#events,
      translator,
      permissions,
      cancelTimeoutMs: this.#options.cancelTimeoutMs ?? ACP_DEFAULTS.cancelTimeoutMs,
      canPrompt: () => this.#ready && !this.#events.exited && !this.#stopRequested && !this.#killReason,
      // Results and errors are handled in wire order (wire-interpreter.ts); a rejection without
      // a response means the connection closed, which the exit path reports.
      sendPrompt: (text) => void this.#conn!.agent.request('session/prompt', { sessionId: this.sessionId!, prompt: [{ type: 'text', text }] }).catch(() => undefined),
      sendCancel: () => this.#conn!.agent.notify('session/cancel', { sessionId: this.sessionId! }),
      kill: (reason) => this.#kill(reason),
    }));
    this.#wire = new WireInterpreter({
      session: this,
      events: this.#events,
      translator,
      permissions,
      turns,
      replay: this.#replay,
      ...(toolbox && { hostToolTrusted: (name: string) => toolbox.spec(name)?.requiresPermission === false }),
    });
    // Finding the agent, its services and the spawn are one step stop() waits for, so a stop
    // during the search still stops the process that follows it.
    const spawning = (async () => {
      // The SDK loads while the agent is looked for (sdk.ts: not at import).
      const [launch] = await Promise.all([agentLaunch(this.#options, this.#context.bin), loadAcpSdk()]);
      const { argv, env, preset } = launch;
      this.#launch = launch;
      this.#events.authHint = preset ? credentialHint({ title: preset.cli.title, lookedFor: preset.credentials, env }) : undefined;
      this.#services = clientServices(this.#options, workDir, env, this.#context.processes);
      const shutdown = this.#options.shutdown ?? preset?.shutdown;
      const spawn = this.#options.spawn ?? spawnSupervised;
      const processes = this.#context.processes;
      return spawn({ file: argv.file, args: argv.args, cwd: workDir, env, ...(shutdown && { shutdown }), ...(processes && { observer: processes }) });
    })();
    this.#spawning = spawning.then(
      () => undefined,
      () => undefined,
    );
    let proc: AgentProcess;
    try {
      proc = await spawning;
    } catch (error) {
      return fail(error);
    }
    this.#proc = proc;
    this.timings.spawned = this.#context.now();
    const stream = agentStream(proc.stdout, proc.stdin, {
      inbound: (message, line) => this.#onInbound(message, line),
      outbound: (message) => this.#onOutbound(message),
      invalid: (reason, line) => noteSkipped(this.unhandled, { reason: `agent output ${reason}: answered with a JSON-RPC error`, raw: line.slice(0, 200) }),
      observerFailed: (error) => noteSkipped(this.unhandled, { reason: `wire observer failed: ${errorMessage(error)}`, raw: undefined }),
    });
    this.#conn = connectAcpClient(stream, {
      permissionAnswer: (key) => this.#permissions?.answerFor(key),
      fs: () => this.#services.fs,
      terminals: () => this.#services.terminals,
      checkSession: (sessionId) => {
        if (sessionId !== this.sessionId) throw acpSdk().RequestError.invalidParams({ sessionId }, 'unknown sessionId');
      },
      unhandled: (kind, method, params) => noteSkipped(this.unhandled, { reason: `unhandled ${kind} ${method}`, raw: params }),
    });
    void this.#conn.closed.then(() => this.#onConnectionClosed());
    void proc.exited.then((exit) => this.#onExit(exit));
    if (this.#stopRequested) return; // stop() waits for #spawning, then stops this process
    void this.#handshake(workDir);
  }

  async send(message: UserMessage): Promise<void> {
    this.#assertRunning('send');
    // Being taken down (cancel timeout, failed start-up): the prompt could never be sent.
    if (this.#killReason) throw new AseError('ENGINE_NOT_RUNNING', `acp engine: send() while the agent is being stopped (${this.#killReason})`);
    this.#turns!.enqueue(message);
  }

  async abort(): Promise<void> {
    this.#assertRunning('abort');
    // Host tool handlers of this turn stop now (their calls are answered as aborted).
    this.#hostCalls?.abortAll('the turn was cancelled');
    await this.#turns!.cancel();
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
    const permissions = this.#permissions!;
    const pending = permissions.get(requestId);
    if (!pending) return; // already answered (cancelled with its turn, expired): nothing to do
    let outcome: PermissionOutcome;
    try {
      outcome = chooseOutcome(pending.options, decision, pending.input);
    } catch (error) {
      // Not the options' refusal (an updatedPermissions entry JSON.stringify cannot print): still the caller's input.
      if (!isAseError(error, 'INVALID_INPUT')) throw toAseError(error, 'INVALID_INPUT');
      // The agent must still get an answer; `cancelled` is only valid for a cancelled turn.
      await this.#turns!.cancel(pending);
      throw new AseError('INVALID_INPUT', `acp engine: ${error.message}`, { cause: error });
    }
    // A host's deny ends the call `denied`; an interrupt (timeout, turn stopping) leaves it to the cancelled turn.
    if (decision.behavior === 'deny' && !decision.interrupt) for (const body of this.#translator!.deny(pending.toolCallId)) this.#events.emit(body);
    if (outcome.outcome === 'cancelled') {
      // deny+interrupt, or a deny the agent offers no reject_once for: cancel the turn (ACP only
      // allows `cancelled` after session/cancel), which answers this request too.
      await this.#turns!.cancel(pending);
      return;
    }
    permissions.settle(requestId, outcome, 'decided');
  }

  /**
   * ACP-specific (not part of AgentEngine): `session/set_mode` (e.g. a codex sandbox mode or a
   * Claude permission mode). Rejects with ENGINE_NOT_RUNNING before `ready`, with an AgentError
   * carrying the agent's JSON-RPC error, or with CONNECTION_CLOSED.
   */
  async setMode(modeId: string): Promise<void> {
    this.#assertRunning('setMode');
    if (!this.#ready || !this.sessionId) throw new AseError('ENGINE_NOT_RUNNING', 'acp engine: setMode before the session is ready');
    await this.#request(this.#conn!.agent.request('session/set_mode', { sessionId: this.sessionId, modeId }), this.#options.sessionTimeoutMs ?? ACP_DEFAULTS.sessionTimeoutMs, 'session/set_mode');
  }

  /**
   * The session's settings change (AgentEngine.configure): the permission mode is the agent's mode
   * id (`session/set_mode`), the model goes through its model config option or `session/set_model`;
   * sent at once, also during a turn (when the agent applies it is the agent's). `null` goes back to
   * the engineOptions `modeId` / `model`, else to what the session opened with. Before the session
   * is open the change waits and is applied right after the handshake, before `ready`.
   */
  async configure(settings: EngineSettings): Promise<void> {
    this.#assertRunning('configure');
    if (!this.#ready) {
      this.#pendingSettings = { ...this.#pendingSettings, ...settings };
      return;
    }
    await this.#applySettings(settings);
  }

  /**
   * Checks a change against what the agent offered (once the session is open): a mode or model it
   * does not list is INVALID_INPUT naming its choices; a model for an agent with no model choice,
   * or a mode for one that reported no modes, is UNSUPPORTED.
   */
  validateSettings(settings: EngineSettings): void {
    if (!this.#ready || !this.sessionResult) return;
    const offer = this.#offer();
    if (typeof settings.permissionMode === 'string') {
      if (offer.modes === undefined) throw new AseError('UNSUPPORTED', 'acp engine: this agent reported no session modes to choose from');
      checkMode(offer, settings.permissionMode, 'INVALID_INPUT', 'permission mode');
    }
    if (typeof settings.model === 'string') checkModel(offer, settings.model, 'INVALID_INPUT', 'model', 'UNSUPPORTED');
  }

  /** The agent's offer now: its session answer, with the config options it updated since. */
  #offer(): SessionOffer {
    return readOffer(this.sessionResult ?? {}, this.#translator?.info.configOptions);
  }

  async #applySettings(settings: EngineSettings): Promise<void> {
    const timeoutMs = this.#options.sessionTimeoutMs ?? ACP_DEFAULTS.sessionTimeoutMs;
    const request = <T>(r: Promise<T>, ms: number, what: string) => this.#request(r, ms, what);
    const offer = this.#offer();
    if (settings.permissionMode !== undefined) {
      const modeId = settings.permissionMode ?? this.#options.modeId ?? this.#openedWith.modeId;
      if (modeId !== undefined) {
        checkMode(offer, modeId, 'INVALID_INPUT', 'permission mode');
        await setMode(request, this.#conn!.agent, this.sessionId!, modeId, timeoutMs);
      }
    }
    if (settings.model !== undefined) {
      const model = settings.model ?? this.#options.model ?? this.#openedWith.model;
      if (model !== undefined) {
        checkModel(offer, model, 'INVALID_INPUT', 'model', 'UNSUPPORTED');
        await setModel(request, this.#conn!.agent, this.sessionId!, offer, model, timeoutMs);
      }
    }
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning;
      if (!this.#proc || this.#events.exited) return;
      const turn = this.#turns?.current;
      if (this.#ready && turn && !turn.ended) {
        await this.#turns!.cancel().catch(() => undefined);
        await Promise.race([turn.done, this.#delay(STOP_CANCEL_WAIT_MS)]);
      }
      this.#permissions?.cancelAll('session closed');
      await this.#services.terminals?.closeAll().catch(() => undefined);
      try {
        await this.#proc.stop();
      } catch (error) {
        throw toAseError(error, 'ENGINE_ERROR'); // a custom spawner's process may fail its stop
      }
      await this.#events.exitedEmitted;
    })();
    return this.#stopping;
  }

  // ------------------------------------------------------------------------------ start-up

  #request<T>(request: Promise<T>, ms: number, what: string): Promise<T> {
    return agentRequest(request, ms, what, this.#context);
  }

  async #handshake(workDir: string): Promise<void> {
    try {
      const toolbox = this.#context.hostTools;
      let hostMcp: HostToolsLoopback | undefined;
      if (toolbox && toolbox.size > 0) {
        this.#hostCalls = toolbox.calls();
        this.#hostLoopback = startHostToolsLoopback(this.#hostCalls, { callIdFor: (tool) => this.#translator?.claimHostCall(tool) });
        hostMcp = await this.#hostLoopback;
      }
      if (this.#gone()) return;
      const open = await handshake({
        session: this,
        agent: this.#conn!.agent,
        options: this.#options,
        workDir,
        gen: this.#spec!.gen,
        resumeToken: this.#spec!.resumeToken,
        settings: {
          ...(this.#spec!.model !== undefined && { model: this.#spec!.model }),
          ...(this.#spec!.permissionMode !== undefined && { permissionMode: this.#spec!.permissionMode }),
        },
        services: this.#services,
        ...(hostMcp && { hostMcp }),
        replay: this.#replay,
        events: this.#events,
        now: () => this.#context.now(),
        request: (request, ms, what) => this.#request(request, ms, what),
        gone: () => this.#gone(),
      });
      if (!open) return;
    } catch (error) {
      if (this.#gone()) return; // the exit path reports it, with the exit status and stderr
      const auth = error instanceof AgentError && error.upstreamCode === -32000;
      this.#events.emit({ type: 'error', kind: auth ? 'auth' : 'fatal', message: `acp engine: start-up failed: ${errorMessage(error)}${this.#stderrSuffix()}`, retryable: false });
      this.#kill('start-up failed');
      return;
    }
    if (this.#gone()) return;
    const opened = readOffer(this.sessionResult ?? {});
    this.#openedWith = { ...(opened.currentModeId !== undefined && { modeId: opened.currentModeId }), ...(opened.currentModel !== undefined && { model: opened.currentModel }) };
    const pending = this.#pendingSettings;
    this.#pendingSettings = undefined;
    if (pending) {
      try {
        await this.#applySettings(pending);
      } catch (error) {
        if (this.#gone()) return;
        // The agent goes on with what it has; the session keeps its choice for later starts.
        this.#events.emit({ type: 'error', kind: 'protocol', message: `acp engine: applying the session's settings failed: ${errorMessage(error)}`, retryable: true });
      }
      if (this.#gone()) return;
    }
    this.#checkAgentVersion();
    this.#events.emit({ type: 'session_identified', resumeToken: this.sessionId! });
    this.#ready = true;
    this.timings.ready = this.#context.now();
    this.#events.emit({ type: 'ready' });
    this.#turns!.pump();
  }

  /**
   * The agent says its version in `initialize` (`agentInfo`): a preset's agent that is not the
   * tested version gets a `warning` (not a failure). Custom agents have no tested version.
   */
  #checkAgentVersion(): void {
    const preset = this.#launch?.preset;
    const info = (this.initializeResult as { agentInfo?: { version?: unknown } } | undefined)?.agentInfo;
    if (!preset || typeof info?.version !== 'string') return;
    const warning = versionWarning(preset.cli, info.version, this.#launch?.location?.where ?? 'command');
    if (warning) this.#events.emit({ type: 'warning', code: 'untested_version', message: `acp engine: ${warning}` });
  }

  // ------------------------------------------------------------------------------ the wire

  /** The public tap: what crossed the pipe (our own messages re-serialized, as the SDK writes them). */
  #tap(direction: TrafficRecord['direction'], line: string): void {
    const tap = this.#options.onTraffic;
    if (tap) tapTraffic(tap, { at: this.#context.now(), direction, line });
  }

  #onOutbound(message: AnyMessage): void {
    if (this.#options.onTraffic) this.#tap('to_agent', JSON.stringify(message));
    this.#wire!.outbound(message);
  }

  /** One message from the agent, in wire order; true when the SDK has nothing to do with it. */
  #onInbound(message: Json, line: string): boolean {
    this.#tap('from_agent', line);
    // `session/update` is ours alone: the SDK's handler for it is a no-op (client.ts).
    const update = message['method'] === 'session/update' && !('id' in message);
    if (this.#events.exited) return update;
    // Traffic that produced no event still shows the agent alive (stall watchdog).
    this.#events.observe(() => this.#wire!.inbound(message as AnyMessage));
    return update;
  }

  // ------------------------------------------------------------------------------ the end

  /**
   * The SDK closed the connection. Normally because the agent exited (its stdout ended); if the
   * process is still there after the drain time, the stream broke (e.g. a message over the size
   * cap): the agent is unusable without it, so it is stopped and the failure reported.
   */
  #onConnectionClosed(): void {
    this.#context.setTimeout(() => {
      if (this.#processExited || this.#events.exited || this.#stopRequested || this.#killReason) return;
      const reason: unknown = this.#conn?.signal.reason;
      this.#events.emit({ type: 'error', kind: 'protocol', message: `acp engine: the connection to the agent closed: ${errorMessage(reason ?? 'unknown reason')}`, retryable: true });
      this.#kill('connection closed');
    }, STDOUT_DRAIN_MS);
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    this.#processExited = true;
    await drainWithin(this.#proc!.stdout, STDOUT_DRAIN_MS, (ms) => this.#delay(ms));
    // The agent is gone, but what it spawned may not be (tool commands run in sessions of their
    // own and outlive a crashed agent). Nobody calls stop() after `exited` (the runtime forgets
    // the engine), so the supervisor's ladder runs here; when the exit was requested it is the
    // same promise stop() awaits.
    await this.#proc?.stop();
    // The agent that could call the host tools is gone: their handlers stop, the port closes.
    this.#hostCalls?.close('the agent exited');
    await this.#hostLoopback?.then((l) => l.close('the agent exited')).catch(() => undefined);
    this.#conn?.close(new AseError('CONNECTION_CLOSED', `agent exited (code ${exit.code}, signal ${exit.signal})`));
    this.#permissions?.cancelAll('agent exited');
    await this.#services.terminals?.closeAll().catch(() => undefined);
    if (this.#events.exited) return;
    const expected = this.#stopRequested || this.#killReason !== undefined;
    const turn = this.#turns?.current;
    if (turn && !turn.ended) {
      this.#turns!.end(turn, true);
      if (this.#stopRequested || turn.cancelled) {
        this.#events.emit({ type: 'turn_complete', status: 'cancelled', usage: { ...ZERO_USAGE } });
      } else {
        this.#events.emit({ type: 'error', kind: 'fatal', message: `acp agent exited during a turn (code ${exit.code}, signal ${exit.signal})${this.#stderrSuffix()}`, retryable: false });
        this.#events.emit({ type: 'turn_complete', status: 'failed', usage: { ...ZERO_USAGE } });
      }
    } else {
      // Late output after the last turn: nothing will close it now (open tool calls end cancelled).
      for (const body of this.#translator?.endTurn({ cancelled: true }) ?? []) this.#events.emit(body);
      if (!expected && (!this.#ready || exit.code !== 0 || exit.signal !== null)) {
        this.#events.emit({ type: 'error', kind: 'fatal', message: `acp agent exited unexpectedly (code ${exit.code}, signal ${exit.signal})${this.#stderrSuffix()}`, retryable: false });
      }
    }
    this.#emitExited(exit, this.#stopRequested ? 'stopped' : (this.#killReason ?? 'process exited'));
  }

  /** Takes the agent down ourselves (not a stop() by the session). */
  #kill(reason: string): void {
    this.#killReason ??= reason;
    this.#permissions?.cancelAll(reason);
    void this.#services.terminals?.closeAll().catch(() => undefined);
    void this.#proc?.stop();
  }

  #gone(): boolean {
    return this.#events.exited || this.#stopRequested || this.#killReason !== undefined || this.#conn?.signal.aborted === true;
  }

  #stderrSuffix(): string {
    const tail = this.stderrTail().trim();
    return tail ? `; stderr: ${tail.slice(-2000)}` : '';
  }

  #delay(ms: number): Promise<void> {
    return new Promise((r) => this.#context.setTimeout(r, ms));
  }

  #emitExited(exit: ProcessExit, reason: string): void {
    this.#events.emit({ type: 'exited', code: exit.code, signal: exit.signal, reason });
  }

  #assertRunning(what: string): void {
    if (!this.#spec || !this.#proc || this.#events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `acp engine: ${what}() while the engine is not running`);
    }
  }
}
