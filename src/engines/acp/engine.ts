/**
 * The `acp` engine: runs one ACP agent (gemini --acp, codex-acp, claude-code-acp, … see
 * presets.ts) per runner generation and speaks the Agent Client Protocol to it through
 * `@agentclientprotocol/sdk` (reference "acp.md").
 *
 * Lifecycle: spawn (scrubbed env, private HOME, own process group) → `initialize` (awaited; fs and
 * terminal capabilities only when enabled) → `session/new`, or `session/load` for a resume token
 * (replayed history is kept in `history`, never emitted as a live turn) → `session_identified` +
 * `ready` → one `session/prompt` per `send`, queued so that never two are in flight → `stop()`:
 * cancel a running turn, answer every open permission, close terminals, then the supervisor's
 * ladder (stdin end → SIGTERM → SIGKILL of the group) → `exited`.
 *
 * Ordering: the agent's messages are interpreted in the traffic tap, synchronously and in wire
 * order (the SDK may dispatch different methods' handlers out of order). The SDK answers requests
 * and carries ours.
 */
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream, PROTOCOL_VERSION, RequestError, type AnyMessage, type ClientConnection, type McpServer, type NewSessionRequest } from '@agentclientprotocol/sdk';
import { AgentError, AseError, errorMessage, isAseError, toAseError } from '../../errors.js';
import type { PermissionDecision, UserMessage } from '../../events/engine-input.js';
import { ZERO_USAGE, type AgentEventBody } from '../../events/agent-event.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from '../core/engine.js';
import { EngineEvents, type InvalidEvent } from '../core/engine-events.js';
import { drainWithin, STDOUT_DRAIN_MS } from '../transport/drain.js';
import { spawnSupervised, type ProcessExit } from '../transport/process-supervisor.js';
import { tapTraffic, type TrafficRecord } from '../transport/traffic.js';
import { agentLaunch, type AgentLaunch } from './agent-launch.js';
import { clientServices, type ClientServices } from './client-services.js';
import { CLIENT_INFO, connectAcpClient } from './client.js';
import { classifyRpcError, toAcpError } from './errors.js';
import { classifyWire, isRecord, readPermissionRequest, readSessionUpdate, rpcKey } from './messages.js';
import { resolveAcpOptions, timerMs, type AcpEngineOptions, type AgentProcess } from './options.js';
import { chooseOutcome, PermissionBroker, type PendingPermission, type PermissionOutcome } from './permissions.js';
import { tapStream } from './traffic.js';
import { noteSkipped, type SkippedInput } from '../core/skipped-inputs.js';
import { AcpTranslator, type AcpSessionInfo } from './translate.js';
import { turnUsage } from './usage.js';

export const ACP_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: false,
  permissions: true,
  interrupt: true,
  resume: true,
  localMode: false,
  transcriptTail: false,
  cost: false,
});

const DEFAULTS = {
  initializeTimeoutMs: 60_000,
  sessionTimeoutMs: 60_000,
  cancelTimeoutMs: 8_000,
  permissionGraceMs: 2_000,
} as const;
/** How long stop() lets a cancelled turn end before it closes the connection anyway. */
const STOP_CANCEL_WAIT_MS = 2_000;


interface Turn {
  readonly localId: string;
  /** Our JSON-RPC id of its `session/prompt`, once the SDK wrote it. */
  promptKey?: string;
  /** We sent `session/cancel`: the turn ends `cancelled` whatever the agent's stopReason. */
  cancelled: boolean;
  ended: boolean;
  /** The session's cumulative USD cost when the turn started (for a per-turn delta). */
  costAtStart: number | undefined;
  cancelTimer?: { readonly id: number };
  readonly done: Promise<void>;
  markDone(): void;
}

export class AcpEngine implements AgentEngine {
  readonly capabilities = ACP_CAPABILITIES;
  readonly #context: EngineContext;
  readonly #factoryOptions: AcpEngineOptions;
  readonly #events: EngineEvents;
  #options: AcpEngineOptions = {};
  #spec: EngineStartSpec | undefined;
  #proc: AgentProcess | undefined;
  #conn: ClientConnection | undefined;
  #translator: AcpTranslator | undefined;
  #historyTranslator: AcpTranslator | undefined;
  #permissions: PermissionBroker | undefined;
  #services: ClientServices = { fs: undefined, terminals: undefined };
  #spawning: Promise<void> | undefined;
  #ready = false;
  #stopRequested = false;
  /** Why we are taking the agent down ourselves (cancel timeout, failed handshake, …). */
  #killReason: string | undefined;
  #stopping: Promise<void> | undefined;
  readonly #queue: UserMessage[] = [];
  #turn: Turn | undefined;
  /** Our outstanding JSON-RPC requests: id key → method. */
  readonly #outgoing = new Map<string, string>();
  /** The id key of our `session/load` while its history replays. */
  #loadKey: string | undefined;
  #loading = false;
  #processExited = false;

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
  readonly history: AgentEventBody[] = [];
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
    return [...(this.#translator?.skipped ?? []), ...(this.#historyTranslator?.skipped ?? [])];
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
    let launch: AgentLaunch;
    try {
      this.#options = resolveAcpOptions(this.#factoryOptions, spec.options);
      launch = agentLaunch(this.#options, this.#context.bin);
    } catch (error) {
      return fail(error);
    }
    const { argv, env, preset } = launch;
    const gen = spec.gen;
    const workDir = resolve(spec.workDir);
    this.#translator = new AcpTranslator({ idPrefix: `acp-${gen}` });
    this.#permissions = new PermissionBroker({
      idPrefix: `acp-${gen}-perm`,
      graceMs: this.#options.permissionGraceMs ?? DEFAULTS.permissionGraceMs,
      timers: { setTimeout: (f, ms) => this.#context.setTimeout(f, timerMs(ms)), clearTimeout: (h) => this.#context.clearTimeout(h) },
    });
    try {
      this.#services = clientServices(this.#options, workDir, env);
    } catch (error) {
      return fail(error);
    }
    const shutdown = this.#options.shutdown ?? preset?.shutdown;
    const spawn = this.#options.spawn ?? spawnSupervised;
    const spawning = spawn({ file: argv.file, args: argv.args, cwd: workDir, env, ...(shutdown && { shutdown }) });
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
    const base = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout) as ReadableStream<Uint8Array>);
    const stream = tapStream(base, { inbound: (m) => this.#onInbound(m), outbound: (m) => this.#onOutbound(m) }, (error) =>
      noteSkipped(this.unhandled, { reason: `wire observer failed: ${errorMessage(error)}`, raw: undefined }),
    );
    this.#conn = connectAcpClient(stream, {
      permissionAnswer: (key) => this.#permissions?.answerFor(key),
      fs: () => this.#services.fs,
      terminals: () => this.#services.terminals,
      checkSession: (sessionId) => {
        if (sessionId !== this.sessionId) throw RequestError.invalidParams({ sessionId }, 'unknown sessionId');
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
    this.#queue.push(message);
    this.#pump();
  }

  async abort(): Promise<void> {
    this.#assertRunning('abort');
    await this.#cancelTurn();
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
      await this.#cancelTurn(pending);
      throw new AseError('INVALID_INPUT', `acp engine: ${error.message}`, { cause: error });
    }
    // A host's deny ends the call `denied`; an interrupt (timeout, turn stopping) leaves it to the cancelled turn.
    if (decision.behavior === 'deny' && !decision.interrupt) for (const body of this.#translator!.deny(pending.toolCallId)) this.#events.emit(body);
    if (outcome.outcome === 'cancelled') {
      // deny+interrupt, or a deny the agent offers no reject_once for: cancel the turn (ACP only
      // allows `cancelled` after session/cancel), which answers this request too.
      await this.#cancelTurn(pending);
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
    await this.#withTimeout(this.#conn!.agent.request('session/set_mode', { sessionId: this.sessionId, modeId }), this.#sessionTimeout(), 'session/set_mode');
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning;
      if (!this.#proc || this.#events.exited) return;
      const turn = this.#turn;
      if (this.#ready && turn && !turn.ended) {
        await this.#cancelTurn().catch(() => undefined);
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

  #sessionTimeout(): number {
    return this.#options.sessionTimeoutMs ?? DEFAULTS.sessionTimeoutMs;
  }

  async #handshake(workDir: string): Promise<void> {
    const conn = this.#conn!;
    const o = this.#options;
    const { fs, terminals } = this.#services;
    try {
      const init = await this.#withTimeout(
        conn.agent.request('initialize', {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: {
            fs: { readTextFile: fs !== undefined, writeTextFile: fs !== undefined },
            terminal: terminals !== undefined,
          },
          clientInfo: { ...CLIENT_INFO },
        }),
        o.initializeTimeoutMs ?? DEFAULTS.initializeTimeoutMs,
        'initialize',
      );
      this.initializeResult = init as unknown as Record<string, unknown>;
      this.timings.initialized = this.#context.now();
      if (o.authenticate) {
        await this.#withTimeout(conn.agent.request('authenticate', { ...o.authenticate }), o.initializeTimeoutMs ?? DEFAULTS.initializeTimeoutMs, 'authenticate');
      }
      const session: NewSessionRequest = {
        cwd: workDir,
        mcpServers: (o.mcpServers ?? []) as McpServer[],
        ...(o.additionalDirectories && { additionalDirectories: o.additionalDirectories }),
      };
      const token = this.#spec!.resumeToken;
      const canLoad = init.agentCapabilities?.loadSession === true;
      let loaded = false;
      if (token !== undefined) {
        try {
          if (!canLoad) throw new AseError('ENGINE_START_FAILED', 'the agent does not support session/load');
          this.#loading = true;
          this.#historyTranslator = new AcpTranslator({ idPrefix: `acp-${this.#spec!.gen}-history`, includeUserMessages: true });
          this.sessionId = token;
          const result = await this.#withTimeout(conn.agent.request('session/load', { sessionId: token, ...session }), this.#sessionTimeout(), 'session/load');
          this.sessionResult = (result ?? {}) as Record<string, unknown>;
          loaded = true;
        } catch (error) {
          if (this.#gone()) return;
          this.sessionId = undefined;
          if ((o.loadFallback ?? 'new') === 'fail') throw error;
          this.#events.emit({ type: 'error', kind: 'protocol', message: `acp engine: session/load of ${token} failed (${errorMessage(error)}); started a new session`, retryable: true });
        } finally {
          this.#endHistory();
        }
      }
      if (!loaded) {
        const result = await this.#withTimeout(conn.agent.request('session/new', session), this.#sessionTimeout(), 'session/new');
        this.sessionResult = { ...result };
        this.sessionId = result.sessionId;
      }
      if (o.modeId !== undefined) {
        await this.#withTimeout(conn.agent.request('session/set_mode', { sessionId: this.sessionId!, modeId: o.modeId }), this.#sessionTimeout(), 'session/set_mode');
      }
    } catch (error) {
      if (this.#gone()) return; // the exit path reports it, with the exit status and stderr
      const auth = error instanceof AgentError && error.upstreamCode === -32000;
      this.#events.emit({ type: 'error', kind: auth ? 'auth' : 'fatal', message: `acp engine: start-up failed: ${errorMessage(error)}${this.#stderrSuffix()}`, retryable: false });
      this.#kill('start-up failed');
      return;
    }
    if (this.#gone()) return;
    this.#events.emit({ type: 'session_identified', resumeToken: this.sessionId! });
    this.#ready = true;
    this.timings.ready = this.#context.now();
    this.#events.emit({ type: 'ready' });
    this.#pump();
  }

  #endHistory(): void {
    if (!this.#loading) return;
    this.#loading = false;
    this.#loadKey = undefined;
    const translator = this.#historyTranslator;
    if (translator) this.#pushHistory(translator.endTurn({ cancelled: false }));
  }

  /** History keeps what lasts (messages, tool calls and results), not the streaming deltas. */
  #pushHistory(bodies: AgentEventBody[]): void {
    for (const body of bodies) if (body.type === 'message' || body.type === 'tool_call' || body.type === 'tool_result') this.history.push(body);
  }

  // ------------------------------------------------------------------------------ turns

  #pump(): void {
    if (!this.#ready || this.#turn || this.#events.exited || this.#stopRequested || this.#killReason) return;
    const message = this.#queue.shift();
    if (!message) return;
    // Late output of the previous turn is closed here, not merged into this turn.
    const late = this.#translator!.beginTurn();
    let markDone!: () => void;
    const done = new Promise<void>((r) => (markDone = r));
    const cost = this.#translator!.info.cost;
    const turn: Turn = { localId: message.localId, cancelled: false, ended: false, costAtStart: cost?.currency === 'USD' ? cost.amount : undefined, done, markDone };
    this.#turn = turn;
    this.#conn!.agent
      .request('session/prompt', { sessionId: this.sessionId!, prompt: [{ type: 'text', text: message.text }] })
      // Results and errors are handled in wire order by #onInbound; a rejection without a
      // response means the connection closed, which the exit path reports.
      .catch(() => undefined);
    // Emitted once the turn is set and its prompt queued: a listener reacting (send, abort) sees a consistent state.
    for (const body of late) this.#events.emit(body);
  }

  /** The prompt's response arrived (in wire order): the turn ends here. */
  #finishTurn(turn: Turn, response: { result?: unknown; error?: { code: number; message: string; data?: unknown } }): void {
    if (turn.ended) return;
    const stopReason = isRecord(response.result) && typeof response.result['stopReason'] === 'string' ? response.result['stopReason'] : undefined;
    const cancelled = turn.cancelled || stopReason === 'cancelled';
    this.#endTurn(turn, cancelled);
    if (response.error && !turn.cancelled) {
      const { code, message, data } = response.error;
      const { kind, retryable } = classifyRpcError(code, message, data);
      this.#events.emit({ type: 'error', kind, message: `acp agent: session/prompt failed: ${message} (JSON-RPC ${code})${data === undefined ? '' : ` ${JSON.stringify(data)}`}`, retryable });
      this.#events.emit({ type: 'turn_complete', status: 'failed', usage: turnUsage(undefined) });
    } else {
      const usage = turnUsage(response.result);
      const cost = this.#translator!.info.cost;
      if (turn.costAtStart !== undefined && cost?.currency === 'USD') usage.costUsd = Math.max(0, cost.amount - turn.costAtStart);
      this.#events.emit({ type: 'turn_complete', status: cancelled ? 'cancelled' : 'completed', ...(stopReason !== undefined && { stopReason }), usage });
    }
    this.#pump();
  }

  /** Common end of a turn: translator flush, timers, open permissions get their grace period. */
  #endTurn(turn: Turn, cancelled: boolean): void {
    turn.ended = true;
    if (this.#turn === turn) this.#turn = undefined;
    if (turn.cancelTimer) this.#context.clearTimeout(turn.cancelTimer);
    for (const body of this.#translator!.endTurn({ cancelled })) this.#events.emit(body);
    this.#permissions!.expireLater('turn ended');
    turn.markDone();
  }

  /**
   * Cancels the running turn: `session/cancel`, then every open permission answered `cancelled`
   * (ACP requires both). The turn still ends through its prompt response (forced to `cancelled`);
   * if none comes within `cancelTimeoutMs`, the turn is ended here and the agent stopped.
   * `only` = the request that prompted the cancel, answered even when no turn runs.
   */
  async #cancelTurn(only?: PendingPermission): Promise<void> {
    const turn = this.#turn;
    const permissions = this.#permissions!;
    if (!turn || turn.ended || turn.cancelled) {
      if (only) permissions.settle(only.requestId, { outcome: 'cancelled' }, 'cancelled');
      if (turn?.cancelled) permissions.cancelAll('turn cancelled');
      return;
    }
    turn.cancelled = true;
    const sent = this.#conn!.agent.notify('session/cancel', { sessionId: this.sessionId! });
    permissions.cancelAll('turn cancelled');
    turn.cancelTimer = this.#context.setTimeout(() => this.#cancelTimedOut(turn), timerMs(this.#options.cancelTimeoutMs ?? DEFAULTS.cancelTimeoutMs));
    await sent.catch(() => undefined); // a dead connection is reported by the exit path
  }

  #cancelTimedOut(turn: Turn): void {
    if (turn.ended || this.#events.exited) return;
    const ms = this.#options.cancelTimeoutMs ?? DEFAULTS.cancelTimeoutMs;
    this.#events.emit({ type: 'error', kind: 'protocol', message: `acp agent did not end the cancelled turn within ${ms} ms; stopping it`, retryable: true });
    this.#endTurn(turn, true);
    this.#events.emit({ type: 'turn_complete', status: 'cancelled', usage: { ...ZERO_USAGE } });
    this.#kill('cancel timed out');
  }

  // ------------------------------------------------------------------------------ the wire

  /** The public tap sees the messages as JSON lines (what crossed the pipe, re-serialized by us). */
  #tapMessage(direction: TrafficRecord['direction'], message: AnyMessage): void {
    const tap = this.#options.onTraffic;
    if (tap) tapTraffic(tap, { at: this.#context.now(), direction, line: JSON.stringify(message) });
  }

  #onOutbound(message: AnyMessage): void {
    this.#tapMessage('to_agent', message);
    const wire = classifyWire(message);
    if (wire.kind !== 'request') return;
    const key = rpcKey(wire.id);
    this.#outgoing.set(key, wire.method);
    if (wire.method === 'session/prompt' && this.#turn && this.#turn.promptKey === undefined) this.#turn.promptKey = key;
    if (wire.method === 'session/load') this.#loadKey = key;
  }

  #onInbound(message: AnyMessage): void {
    this.#tapMessage('from_agent', message);
    if (this.#events.exited) return;
    // Traffic that produced no event still shows the agent alive (stall watchdog).
    this.#events.observe(() => this.#interpret(message));
  }

  #interpret(message: AnyMessage): void {
    const wire = classifyWire(message);
    if (wire.kind === 'notification' && wire.method === 'session/update') this.#onUpdate(wire.params);
    else if (wire.kind === 'request' && wire.method === 'session/request_permission') this.#onPermissionRequest(rpcKey(wire.id), wire.params);
    else if (wire.kind === 'response') {
      const key = rpcKey(wire.id);
      const method = this.#outgoing.get(key);
      this.#outgoing.delete(key);
      if (method === 'session/prompt') {
        const turn = this.#turn;
        if (turn && turn.promptKey === key) this.#finishTurn(turn, wire);
      } else if (method === 'session/load' && key === this.#loadKey) {
        this.#endHistory(); // later updates are live, even before our continuation runs
      } else if (method === 'session/new' && isRecord(wire.result) && typeof wire.result['sessionId'] === 'string') {
        this.sessionId = wire.result['sessionId']; // updates right behind the response are routed already
      }
    }
  }

  #onUpdate(params: unknown): void {
    const update = readSessionUpdate(params);
    if (!update) {
      noteSkipped(this.unhandled, { reason: 'malformed session/update', raw: params });
      return;
    }
    if (update.sessionId !== this.sessionId) {
      noteSkipped(this.unhandled, { reason: `session/update for unknown session ${update.sessionId}`, raw: params });
      return;
    }
    if (this.#loading) {
      this.#pushHistory(this.#historyTranslator!.update(update));
      return;
    }
    if (!this.#turn) this.lateMessages++;
    for (const body of this.#translator!.update(update)) this.#events.emit(body);
  }

  #onPermissionRequest(key: string, params: unknown): void {
    const request = readPermissionRequest(params);
    if (!request || request.sessionId !== this.sessionId) {
      // No answer registered: the SDK handler answers it with an invalid-params error.
      noteSkipped(this.unhandled, { reason: 'malformed session/request_permission or unknown session', raw: params });
      return;
    }
    const permissions = this.#permissions!;
    const call = request.toolCall;
    const input = call.rawInput ?? { ...(call.title !== undefined && { title: call.title }), ...(call.content && { content: call.content }), ...(call.locations && { locations: call.locations }) };
    const pending = permissions.open(key, call.toolCallId, request.options, input);
    for (const body of this.#translator!.permissionToolCall(call)) this.#events.emit(body);
    const turn = this.#turn;
    if (turn?.cancelled) {
      permissions.settle(pending.requestId, { outcome: 'cancelled' }, 'turn cancelled');
      return;
    }
    this.#events.emit({
      type: 'permission_request',
      requestId: pending.requestId,
      toolName: call.name ?? this.#translator!.toolName(call.toolCallId) ?? call.kind ?? 'tool',
      input,
      callId: call.toolCallId,
      suggestions: request.options,
    });
    if (!turn) {
      // Arrived after its turn ended (agents desync): answerable for the grace period only.
      this.lateMessages++;
      permissions.expireLater('no turn running');
    }
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
    this.#conn?.close(new AseError('CONNECTION_CLOSED', `agent exited (code ${exit.code}, signal ${exit.signal})`));
    this.#permissions?.cancelAll('agent exited');
    await this.#services.terminals?.closeAll().catch(() => undefined);
    if (this.#events.exited) return;
    const expected = this.#stopRequested || this.#killReason !== undefined;
    const turn = this.#turn;
    if (turn && !turn.ended) {
      this.#endTurn(turn, true);
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

  /** Our request `what`, bounded by `ms`; rejects only with AseErrors (errors.ts: toAcpError). */
  #withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    if (!(ms > 0) || !Number.isFinite(ms)) {
      return promise.catch((error: unknown) => {
        throw toAcpError(error, what);
      });
    }
    return new Promise<T>((resolvePromise, reject) => {
      const timer = this.#context.setTimeout(() => reject(new AseError('ENGINE_ERROR', `acp engine: ${what} got no response within ${ms} ms`)), timerMs(ms));
      promise.then(
        (value) => {
          this.#context.clearTimeout(timer);
          resolvePromise(value);
        },
        (error: unknown) => {
          this.#context.clearTimeout(timer);
          reject(toAcpError(error, what));
        },
      );
    });
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

