/**
 * The `claude` engine: runs the real Claude Code CLI in stream-json mode (reference
 * "claude-stream-json.md") as one supervised process per runner generation.
 *
 * Lifecycle: spawn (`--session-id <new uuid>` or `--resume <token>`) → `initialize` control
 * request → `ready` → one `user` line per `send` → CLI messages translated by ClaudeTranslator,
 * control traffic handled by ControlClient → `stop()` runs the supervisor ladder → `exited`.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AseError, errorMessage } from '../../errors.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import { agentNotFound, findAgent, type AgentLocation } from '../core/agent-discovery.js';
import { credentialHint } from '../core/agent-diagnosis.js';
import { readAgentVersion, versionWarning } from '../core/agent-version.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from '../core/engine.js';
import { engineTier } from '../core/runtime-tier.js';
import { buildEnv } from '../transport/env.js';
import { CLAUDE_AUTH_VARS, CLAUDE_CLI, CLAUDE_CREDENTIAL_VARS, CLAUDE_DEFAULT_PASS_ENV } from './cli.js';
import { checkClaudeSettings, claudeOptionArgs, mergeClaudeOptions, parseClaudeOptions, type ClaudeEngineOptions, type ClaudePermissionMode } from './options.js';
import { launchNdjsonProcess, type NdjsonLauncher, type NdjsonProcess } from '../transport/ndjson-process.js';
import type { ProcessExit, ShutdownOptions } from '../transport/process-supervisor.js';
import { tapTraffic, type TrafficTap } from '../transport/traffic.js';
import { ControlClient } from './client.js';
import { answerClaudeMcp, claudeToolName, withHostTools } from './host-tools.js';
import type { HostToolCalls } from '../core/host-tools.js';
import { ClaudeTranslator, type SkippedInput } from './translate.js';
import { sessionArgs } from './session-file.js';
import { EngineEvents, type InvalidEvent } from '../core/engine-events.js';
import { noteSkipped } from '../core/skipped-inputs.js';
import { ACTIVITY_INTERVAL_MS, ZERO_USAGE } from '../../events/agent-event.js';

export const CLAUDE_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: true,
  permissions: true,
  interrupt: true,
  resume: true,
  // Local mode runs the terminal UI instead (local/engine.ts; the factory picks by the start's mode).
  localMode: true,
  transcriptTail: false,
  cost: true,
  // `set_model` / `set_permission_mode` control requests, answered at once, mid-turn too.
  setModel: true,
  setPermissionMode: true,
  // An in-process MCP server over the control protocol (host-tools.ts); local mode does not offer them.
  hostTools: true,
  // `result` ends each turn, `can_use_tool` blocks on us, `total_cost_usd` is the CLI's own count;
  // edits show as Edit/Write tool calls, not when made through Bash.
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'authoritative', cost: 'authoritative', fileChanges: 'cooperative' }),
});

export type { ClaudeEngineOptions, ClaudePermissionMode } from './options.js';

/** Success payload of `set_permission_mode`. */
export interface SetPermissionModeResult {
  mode: string;
}

/** Success payload of `set_model` (`model` is what the CLI now uses, when it says so). */
export interface SetModelResult {
  model?: string;
}

/** How long stop() waits for the CLI to acknowledge its interrupt before closing stdin anyway. */
const STOP_INTERRUPT_TIMEOUT_MS = 2_000;

/**
 * The Claude Code binary of the installed npm package for this platform and arch (the fourth
 * place the engine looks; see {@link CLAUDE_CLI}). Throws AGENT_NOT_FOUND when it is not installed.
 */
export function resolveClaudeBinary(): string {
  const found = CLAUDE_CLI.fromPackage();
  if ('missing' in found) throw agentNotFound(CLAUDE_CLI, [`npm package: ${found.missing}`]);
  return found.path;
}

export class ClaudeEngine implements AgentEngine {
  readonly capabilities = CLAUDE_CAPABILITIES;
  readonly #context: EngineContext;
  /** The factory's options (checked); a start overlays the session's `engineOptions` on them. */
  readonly #factoryOptions: ClaudeEngineOptions;
  /** The factory's and the session's `engineOptions`: what a settings change to `null` goes back to. */
  #baseOptions: ClaudeEngineOptions;
  /** `#baseOptions` with the start spec's runtime settings (model, permission mode) over them. */
  #options: ClaudeEngineOptions;
  /** Settings changes made before the CLI was ready: applied right after `initialize`, before `ready`. */
  #pendingSettings: EngineSettings | undefined;
  /** Settles once every settings change sent so far was answered; user messages wait for it. */
  #settling: Promise<void> = Promise.resolve();
  readonly #events: EngineEvents;
  #spec: EngineStartSpec | undefined;
  #proc: NdjsonProcess | undefined;
  #control: ControlClient | undefined;
  #translator: ClaudeTranslator | undefined;
  #spawning: Promise<void> | undefined;
  #ready = false;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  readonly #pendingSends: UserMessage[] = [];
  /** Turns written to the CLI whose `result` has not arrived yet. */
  #turnsRunning = 0;
  #protocolFailure = false;
  #toolHeartbeat: { readonly id: number } | undefined;
  /** This generation's host tool calls (EngineContext.hostTools), aborted with the turn, closed at the exit. */
  #hostCalls: HostToolCalls | undefined;
  /** Session id passed via `--session-id` (new sessions). */
  sessionId: string | undefined;
  /** The CLI's version, once read (package.json or `--version`). */
  version: string | undefined;
  get listenerErrors(): readonly unknown[] {
    return this.#events.listenerErrors;
  }
  /** Bodies that failed AgentEvent validation (a bug if ever non-empty). */
  get invalidEvents(): readonly InvalidEvent[] {
    return this.#events.invalidEvents;
  }
  /** Ids of `can_use_tool` requests the CLI withdrew (`control_cancel_request`), for diagnostics. */
  readonly cancelledByCli: string[] = [];
  /** Milestones (epoch ms from the context clock), for diagnostics and timing. */
  readonly timings: { spawned?: number; ready?: number } = {};

  constructor(context: EngineContext, options: ClaudeEngineOptions = {}) {
    this.#context = context;
    this.#factoryOptions = parseClaudeOptions(options);
    this.#baseOptions = this.#factoryOptions;
    this.#options = this.#factoryOptions;
    this.#events = new EngineEvents(context);
  }

  /** Unknown / malformed CLI lines skipped so far (kept for diagnostics). */
  get skipped(): readonly SkippedInput[] {
    return this.#translator?.skipped ?? [];
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#spec || this.#stopRequested) throw new AseError('INVALID_INPUT', 'claude engine: already started or stopped');
    this.#spec = spec;
    this.#events.bind(spec.gen);
    const fail = (error: unknown): never => {
      throw this.#events.startFailed(error);
    };
    let env: Record<string, string>;
    let launchOptions: ClaudeEngineOptions;
    try {
      this.#baseOptions = mergeClaudeOptions(this.#factoryOptions, spec.options);
      checkClaudeSettings({ ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode }) });
      this.#options = {
        ...this.#baseOptions,
        ...(spec.model !== undefined && { model: spec.model }),
        ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode as ClaudePermissionMode }),
      };
      env = buildEnv({ allow: [...CLAUDE_DEFAULT_PASS_ENV, ...(this.#options.passEnv ?? [])], set: this.#options.env ?? {} });
      // Host tools: the in-process MCP server and the trusted tools' allow rules, on the command line only.
      launchOptions = withHostTools(this.#options, this.#context.hostTools);
    } catch (error) {
      return fail(error);
    }
    const options = this.#options;
    this.#events.authHint = credentialHint({ title: CLAUDE_CLI.title, lookedFor: CLAUDE_AUTH_VARS, related: CLAUDE_CREDENTIAL_VARS, env, otherwise: 'a /login under CLAUDE_CONFIG_DIR (default ~/.claude)' });
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio', '--include-partial-messages'];
    const configDir = env['CLAUDE_CONFIG_DIR'] ?? join(env['HOME'] ?? homedir(), '.claude');
    // A token without a transcript (a local session nobody typed in yet) keeps its id with --session-id.
    if (spec.resumeToken) args.push(...sessionArgs(configDir, spec.workDir, spec.resumeToken));
    else {
      this.sessionId = randomUUID();
      args.push('--session-id', this.sessionId);
    }
    args.push(...claudeOptionArgs(launchOptions));
    const hostTools = this.#context.hostTools;
    this.#hostCalls = hostTools && hostTools.size > 0 ? hostTools.calls() : undefined;
    const toolName = claudeToolName(hostTools);
    this.#translator = new ClaudeTranslator({ configDir, cwd: spec.workDir, ...(toolName && { toolName }) });
    const tap = options.onTraffic;
    const ctx = this.#context;
    let proc: NdjsonProcess;
    const explicit = this.#context.bin ?? options.bin;
    const spawning = (async () => {
      // A replaced launcher starts no real CLI: nothing to discover (or to ask for a version).
      const location = options.launcher ? undefined : await findAgent(CLAUDE_CLI, explicit !== undefined ? { bin: explicit } : {});
      if (location) this.#checkVersion(location);
      return (options.launcher ?? launchNdjsonProcess)({
        file: location?.file ?? explicit ?? 'claude',
        args: [...(location?.args ?? []), ...args],
        cwd: spec.workDir,
        env,
        ...(options.shutdown && { shutdown: options.shutdown }),
        ...(options.maxLineBytes !== undefined && { maxLineBytes: options.maxLineBytes }),
        ...(ctx.processes && { observer: ctx.processes }),
        onMessage: (value) => this.#onMessage(value),
        onInvalidLine: (reason, line) => this.#onMessage(undefined, { reason, line }),
        onProtocolFailure: (error) => this.#onProtocolFailure(error),
        ...(tap && { onLine: (direction, line) => tapTraffic(tap, { at: ctx.now(), direction, line }) }),
      });
    })();
    this.#spawning = spawning.then(
      () => undefined,
      () => undefined,
    );
    try {
      proc = await spawning;
    } catch (error) {
      return fail(error);
    }
    this.#proc = proc;
    this.timings.spawned = this.#context.now();
    this.#control = new ControlClient({
      writer: proc,
      idPrefix: `ase-${spec.gen}`,
      timers: { setTimeout: (fn, ms) => ctx.setTimeout(fn, ms), clearTimeout: (h) => ctx.clearTimeout(h as { readonly id: number }) },
      ...(this.#hostCalls && { onMcpMessage: (server: string, message: unknown, signal: AbortSignal) => answerClaudeMcp(this.#hostCalls!, server, message, signal) }),
      onPermissionRequest: (ask) =>
        this.#events.emit({
          type: 'permission_request',
          requestId: ask.requestId,
          toolName: toolName?.(ask.toolName) ?? ask.toolName,
          input: ask.input,
          ...(ask.callId !== undefined && { callId: ask.callId }),
          ...(ask.callId !== undefined && this.#parentCallIdOf(ask.callId)),
          ...(ask.suggestions && { suggestions: ask.suggestions }),
        }),
      // The CLI withdrew a prompt it had asked (control_cancel_request): it is never answered
      // (ControlClient drops it); the session hears it is void. Only asks we reported count.
      onCancel: (requestId, ask) => {
        this.cancelledByCli.push(requestId);
        if (ask) this.#events.emit({ type: 'permission_cancelled', requestId, reason: 'cancelled by the CLI' });
      },
    });
    void proc.exited.then((exit) => this.#onExit(exit));
    // stop() was called while we were spawning: it waits for #spawning, then stops this process.
    if (this.#stopRequested) return;
    void this.#initialize();
  }

  async send(message: UserMessage): Promise<void> {
    this.#assertRunning('send');
    if (!this.#ready) {
      this.#pendingSends.push(message);
      return;
    }
    // A settings change made before this message is answered first: the message runs with it.
    await this.#settling;
    await this.#writeUser(message);
  }

  async abort(): Promise<void> {
    this.#assertRunning('abort');
    // A host tool the turn is waiting on stops now; its call is answered as aborted.
    this.#hostCalls?.abortAll('the turn was aborted');
    if (!this.#ready) return;
    await this.#control!.request('interrupt', {}, { timeoutMs: this.#options.interruptTimeoutMs ?? 15_000 });
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
    // An is_error tool_result for a call we denied is reported as `denied`, not `failed`.
    if (decision.behavior === 'deny') this.#noteDeniedFor(requestId);
    // false = already answered or cancelled by the CLI (the turn moved on): nothing to do.
    await this.#control!.answer(requestId, decision);
  }

  /**
   * Claude-specific (not part of AgentEngine): switches the CLI's permission mode via the
   * `set_permission_mode` control request. Rejects with ENGINE_NOT_RUNNING before `ready` / after
   * stop, an AgentError (code `AGENT_ERROR`) when the CLI refuses, an AseError `TIMEOUT` on timeout.
   */
  async setPermissionMode(mode: ClaudePermissionMode, options: { timeoutMs?: number } = {}): Promise<SetPermissionModeResult> {
    const response = await this.#controlRequest('set_permission_mode', { mode }, options.timeoutMs);
    const got = (response as { mode?: unknown }).mode;
    return { mode: typeof got === 'string' ? got : mode };
  }

  /**
   * Claude-specific (not part of AgentEngine): switches the model via `set_model` (`null` = the
   * default model). The CLI probes the model with a small request before answering.
   */
  async setModel(model: string | null, options: { timeoutMs?: number } = {}): Promise<SetModelResult> {
    const response = await this.#controlRequest('set_model', { model }, options.timeoutMs);
    const got = (response as { model?: unknown }).model;
    return typeof got === 'string' ? { model: got } : {};
  }

  /**
   * The session's settings change (AgentEngine.configure): `set_permission_mode` and/or `set_model`,
   * sent at once, also while a turn runs (the CLI answers control requests mid-turn: the turn's next
   * model request uses the new model, its next tool check the new mode). A message sent after it
   * waits for the CLI's answer, so it runs with the change. `null` goes back to the `engineOptions`
   * value (or the CLI's default). Before the CLI is ready the change waits and is applied right
   * after `initialize`, before `ready` (a failure then is an `error` event).
   */
  async configure(settings: EngineSettings): Promise<void> {
    this.#assertRunning('configure');
    checkClaudeSettings(settings);
    if (!this.#ready) {
      this.#pendingSettings = { ...this.#pendingSettings, ...settings };
      return;
    }
    const applying = this.#applySettings(settings);
    const before = this.#settling;
    this.#settling = Promise.all([before, applying.catch(() => undefined)]).then(() => undefined);
    await applying;
  }

  /** The CLI accepts only its own permission modes: refused before anything is stored. */
  validateSettings(settings: EngineSettings): void {
    checkClaudeSettings(settings);
  }

  async #applySettings(settings: EngineSettings): Promise<void> {
    if (settings.permissionMode !== undefined) {
      const mode = (settings.permissionMode ?? this.#baseOptions.permissionMode ?? 'default') as ClaudePermissionMode;
      await this.#sendControl('set_permission_mode', { mode }, undefined);
      this.#options = { ...this.#options, permissionMode: mode };
    }
    if (settings.model !== undefined) {
      const model = settings.model ?? this.#baseOptions.model ?? null;
      await this.#sendControl('set_model', { model }, undefined);
      this.#options = { ...this.#options, ...(model === null ? { model: undefined } : { model }) };
    }
  }

  async #controlRequest(subtype: string, fields: Record<string, unknown>, timeoutMs: number | undefined): Promise<object> {
    this.#assertRunning(subtype);
    if (!this.#ready) throw new AseError('ENGINE_NOT_RUNNING', `claude engine: ${subtype} before the CLI is ready`);
    return this.#sendControl(subtype, fields, timeoutMs);
  }

  async #sendControl(subtype: string, fields: Record<string, unknown>, timeoutMs: number | undefined): Promise<object> {
    const response = await this.#control!.request(subtype, fields, { timeoutMs: timeoutMs ?? this.#options.controlTimeoutMs ?? 30_000 });
    return typeof response === 'object' && response !== null ? response : {};
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#hostCalls?.close('the claude engine stopped');
    this.#stopping ??= (async () => {
      await this.#spawning; // a start in progress finishes spawning first, so its process is stopped too
      if (!this.#proc || this.#events.exited) return; // never spawned (or already gone)
      // First rung: interrupt a running turn, so stdin EOF does not wait for it to finish (the CLI
      // completes a turn in progress before it exits on EOF). Then the supervisor's ladder.
      if (this.#ready && this.#turnsRunning > 0) {
        await this.#control?.request('interrupt', {}, { timeoutMs: STOP_INTERRUPT_TIMEOUT_MS }).catch(() => undefined);
      }
      await this.#proc.stop();
      await this.#events.exitedEmitted;
    })();
    return this.#stopping;
  }

  // ------------------------------------------------------------------------------------------

  readonly #askCalls = new Map<string, string>();

  /** Reads the CLI's version next to the start (cached per binary) and warns when it is not the tested one. */
  #checkVersion(location: AgentLocation): void {
    void readAgentVersion(CLAUDE_CLI, location).then((info) => {
      // The runtime may have moved on (a restart): a dead engine emits nothing (EngineEvents drops it).
      this.version = info.version;
      const warning = versionWarning(CLAUDE_CLI, info.version, location.where);
      if (warning) this.#events.emit({ type: 'warning', code: 'untested_version', message: `claude engine: ${warning}` });
    });
  }

  #noteDeniedFor(requestId: string): void {
    const callId = this.#askCalls.get(requestId);
    if (callId) this.#translator?.noteDenied(callId);
  }

  async #initialize(): Promise<void> {
    try {
      await this.#control!.request('initialize', {}, { timeoutMs: this.#options.initializeTimeoutMs ?? 60_000 });
    } catch (error) {
      if (this.#events.exited || this.#stopRequested) return;
      this.#events.emit({ type: 'error', kind: 'fatal', message: `claude engine: initialize failed: ${errorMessage(error)}${this.#stderrSuffix()}`, retryable: false });
      void this.stop();
      return;
    }
    if (this.#events.exited || this.#stopRequested) return;
    const pending = this.#pendingSettings;
    this.#pendingSettings = undefined;
    if (pending) {
      try {
        await this.#applySettings(pending);
      } catch (error) {
        if (this.#events.exited || this.#stopRequested) return;
        // The CLI runs on with what it started with; the session keeps its choice for later starts.
        this.#events.emit({ type: 'error', kind: 'protocol', message: `claude engine: applying the session's settings failed: ${errorMessage(error)}`, retryable: true });
      }
      if (this.#events.exited || this.#stopRequested) return;
    }
    this.#ready = true;
    this.timings.ready = this.#context.now();
    this.#events.emit({ type: 'ready' });
    for (const message of this.#pendingSends.splice(0)) {
      this.#writeUser(message).catch(() => undefined); // a dead stdin is reported by the exit path
    }
  }

  async #writeUser(message: UserMessage): Promise<void> {
    this.#turnsRunning++;
    try {
      await this.#proc!.write({
        type: 'user',
        session_id: '',
        message: { role: 'user', content: [{ type: 'text', text: message.text }] },
        parent_tool_use_id: null,
      });
    } catch (error) {
      this.#turnsRunning = Math.max(0, this.#turnsRunning - 1);
      throw new AseError('ENGINE_NOT_RUNNING', `claude engine: writing the user message failed: ${errorMessage(error)}`, { cause: error });
    }
  }

  /** One decoded stdout message, or a line that is not JSON (`invalid`). */
  #onMessage(value: unknown, invalid?: { reason: string; line: string }): void {
    if (this.#events.exited) return;
    // Every line counts for the stall watchdog, keep-alives and control traffic included (reference §10).
    this.#events.observe(() => (invalid ? this.#translator!.skipLine(invalid.reason, invalid.line) : this.#handleMessage(value)));
    this.#syncToolHeartbeat();
  }

  /**
   * While a tool runs the CLI prints nothing (not a line during a 33 s Bash command), so a build
   * longer than the session's stall timeout looked like a stalled stream and was interrupted. A
   * running tool is the agent at work, not a silent model stream: `activity` every
   * ACTIVITY_INTERVAL_MS until its `tool_result` (or the turn's end). The CLI bounds its tools
   * itself (Bash: 2 min default, 10 min at most).
   */
  #syncToolHeartbeat(): void {
    const running = !this.#events.exited && (this.#translator?.toolsRunning ?? 0) > 0;
    if (running && !this.#toolHeartbeat) {
      // Due one interval after the last event of any kind (the activity throttle's own rule).
      const dueIn = Math.max(1, this.#events.lastEventAt + ACTIVITY_INTERVAL_MS - this.#context.now());
      this.#toolHeartbeat = this.#context.setTimeout(() => {
        this.#toolHeartbeat = undefined;
        this.#events.signOfLife();
        this.#syncToolHeartbeat();
      }, dueIn);
    } else if (!running && this.#toolHeartbeat) {
      this.#context.clearTimeout(this.#toolHeartbeat);
      this.#toolHeartbeat = undefined;
    }
  }

  /** `{parentCallId}` when a Task sub-agent made tool call `callId` (its assistant line came first). */
  #parentCallIdOf(callId: string): { parentCallId?: string } {
    const parentCallId = this.#translator?.parentCallIdOf(callId);
    return parentCallId !== undefined ? { parentCallId } : {};
  }

  #handleMessage(value: unknown): void {
    const type = (value as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type.startsWith('control_')) {
      // Noted before the control client reports the ask: a listener may deny it synchronously.
      const v = value as { type?: string; request_id?: string; request?: { subtype?: string; tool_use_id?: unknown } };
      if (v.type === 'control_request' && v.request?.subtype === 'can_use_tool' && typeof v.request.tool_use_id === 'string' && v.request_id) {
        this.#askCalls.set(v.request_id, v.request.tool_use_id);
      }
      if (this.#control!.handle(value)) return;
    }
    const bodies = this.#translator!.translate(value);
    for (const body of bodies) {
      if (body.type === 'turn_complete') {
        // A `result` before the process's first `system/init` while none of our turns runs ends no
        // turn (e.g. `--resume` of an unknown id prints one error result and exits): its error is
        // reported, but a turn_complete would close a turn that never started, add its usage and
        // reset the crash count.
        if (this.#turnsRunning === 0 && this.#translator!.sessionId === undefined) {
          noteSkipped(this.#translator!.skipped, { reason: 'result before system/init with no turn running: ends no turn', raw: value });
          continue;
        }
        this.#turnsRunning = Math.max(0, this.#turnsRunning - 1);
      }
      this.#events.emit(body);
    }
  }

  /** The stream can no longer be trusted (a line over the cap): the turn fails and the CLI is stopped. */
  #onProtocolFailure(error: Error): void {
    if (this.#protocolFailure) return;
    this.#protocolFailure = true;
    this.#events.emit({ type: 'error', kind: 'protocol', message: `claude engine: ${error.message}`, retryable: false });
    if (this.#turnsRunning > 0) {
      this.#turnsRunning = 0;
      this.#events.emit({ type: 'turn_complete', status: 'failed', usage: { ...ZERO_USAGE } });
    }
    void this.stop();
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    // `exited` resolves once the last stdout lines (e.g. the final `result`) were handled, or after
    // a bounded wait when a grandchild holds the pipe. The CLI is gone, but what it spawned may not be: Bash tool commands run under setsid and
    // outlive a crashed CLI. Nobody calls stop() after `exited` (the runtime forgets the engine),
    // so the supervisor's ladder runs here, before `exited` says the generation is over. It is
    // the same promise stop() awaits when the exit was requested.
    this.#hostCalls?.close(`the claude CLI exited (code ${exit.code}, signal ${exit.signal})`);
    await this.#proc?.stop();
    if (this.#toolHeartbeat) this.#context.clearTimeout(this.#toolHeartbeat);
    this.#toolHeartbeat = undefined;
    this.#control?.close(`claude CLI exited (code ${exit.code}, signal ${exit.signal})`);
    if (this.#events.exited) return;
    if (!this.#stopRequested && !this.#protocolFailure) {
      if (this.#turnsRunning > 0 || (exit.code !== 0 && exit.code !== null) || exit.signal !== null || !this.#ready) {
        const what = this.#turnsRunning > 0 ? 'exited without a result for the running turn' : 'exited unexpectedly';
        this.#events.emit({
          type: 'error',
          kind: 'fatal',
          message: `claude CLI ${what} (code ${exit.code}, signal ${exit.signal})${this.#stderrSuffix()}`,
          retryable: false,
        });
      }
    }
    this.#emitExited(exit, this.#protocolFailure ? 'protocol error' : this.#stopRequested ? 'stopped' : 'process exited');
  }

  #stderrSuffix(): string {
    const tail = this.#proc?.stderrTail().trim();
    return tail ? `; stderr: ${tail}` : '';
  }

  #emitExited(exit: ProcessExit, reason: string): void {
    this.#events.emit({ type: 'exited', code: exit.code, signal: exit.signal, reason });
  }

  #assertRunning(what: string): void {
    if (!this.#spec || !this.#proc || this.#events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `claude engine: ${what}() while the engine is not running`);
    }
  }

}
