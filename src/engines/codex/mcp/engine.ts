/**
 * The `codex-mcp` engine: `codex mcp-server` of the pinned @openai/codex 0.153.4 (the last
 * release that has it; installed as the npm alias `codex-mcp-cli`). JSON-RPC 2.0 / MCP over stdio
 * (reference codex.md §4).
 *
 * Lifecycle: `codex --version` must be 0.153.4 → spawn `codex [-c k=v…] mcp-server` →
 * `initialize` (advertising elicitation) → `notifications/initialized` → `tools/list` (must offer
 * `codex` and `codex-reply`) → `ready`. The first message is `tools/call codex` (a new thread;
 * `session_configured` identifies it), later ones `tools/call codex-reply {threadId, prompt}`.
 * Events arrive as `codex/event` notifications routed by `_meta.requestId` (= the tools/call id).
 * Approvals are `elicitation/create` requests answered with `{decision}`. `abort()` sends
 * `notifications/cancelled`; the cancelled call never gets a response, so `turn_aborted` ends the
 * turn. Threads live only in the server's memory: after a restart `codex-reply` gets "Session not
 * found" (code `RESUME_NOT_FOUND`, {@link sessionNotFound}; see `onSessionNotFound`).
 */
import { AseError, errorMessage } from '../../../errors.js';
import type { PermissionDecision, UserMessage } from '../../../events/engine-input.js';
import type { EngineCapabilities, EngineContext } from '../../core/engine.js';
import { engineTier } from '../../core/runtime-tier.js';
import { CODEX_MCP_CLI, mcpVersionProblem, probeCodexVersion } from '../binary.js';
import { configOverrideArgs } from '../config-overrides.js';
import { CodexEngineBase } from '../engine-base.js';
import { SESSION_NOT_FOUND_RE, sessionNotFound, type SessionNotFoundDetails } from '../errors.js';
import { INVALID_PARAMS, METHOD_NOT_FOUND, rpcError } from '../../transport/json-rpc.js';
import type { CodexEngineOptions } from '../options.js';
import { DEFAULT_REJECTION, mcpDecision } from './decisions.js';
import { CodexEventParamsSchema, ElicitationParamsSchema, resultText, ToolCallResultSchema, ToolsListResultSchema } from './messages.js';
import { shellJoin } from '../../transport/shell-quote.js';
import { McpTranslator } from './translate.js';

export const CODEX_MCP_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: false,
  permissions: true,
  interrupt: true,
  // Threads do not survive the server process: a resume token only works within one process.
  resume: false,
  localMode: false,
  transcriptTail: false,
  cost: false,
  // `codex-reply` takes only {threadId, prompt}: model and approval policy are fixed when the
  // thread is created (`tools/call codex`), so a running session cannot change them.
  setModel: false,
  setPermissionMode: false,
  // The `tools/call` result, exec/patch events and elicitations; tokens but no price; patches miss shell edits.
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'authoritative', cost: 'absent', fileChanges: 'cooperative' }),
});

export interface CodexMcpEngineOptions extends CodexEngineOptions {
  /**
   * What to do when `codex-reply` says the thread is unknown (always the case after a restart):
   * 'fail' (default) reports a fatal error and fails the turn; 'new-thread' sends the same
   * message to a fresh thread (`tools/call codex`; the earlier history is lost and a new
   * `session_identified` follows).
   */
  onSessionNotFound?: 'fail' | 'new-thread';
  /** Accept a 0.153.x other than the pinned 0.153.4 (≥ 0.154.0 is always refused). */
  allowUntestedVersion?: boolean;
}

/**
 * mcp-server exits within ~15 ms of stdin EOF when idle, but keeps running while an aborted call's
 * listener lingers (see onNotification): SIGTERM follows after a short grace instead of 2 s.
 */
export const CODEX_MCP_DEFAULT_SHUTDOWN = Object.freeze({ stdinGraceMs: 300 });

const CLIENT_INFO = { name: 'agent_session_engine', version: '0.1.0' };
const MCP_PROTOCOL_VERSION = '2025-06-18';
/** With two live listeners, how long the end of a turn waits for stragglers from the other one. */
const MULTI_LISTENER_SETTLE_MS = 40;

interface RunningCall {
  id: number;
  prompt: string;
  /** `codex-reply` (continuing a thread) rather than `codex` (a new thread). */
  reply: boolean;
}

interface PendingApproval {
  kind: 'exec' | 'patch';
  callId: string;
  resolve: (result: unknown) => void;
}

export class CodexMcpEngine extends CodexEngineBase<CodexMcpEngineOptions> {
  readonly capabilities = CODEX_MCP_CAPABILITIES;
  protected readonly engineName = 'codex-mcp';
  protected readonly jsonrpcField = true;
  readonly #translator = new McpTranslator();
  readonly #approvals = new Map<string, PendingApproval>();
  /** The call of the running turn. */
  #call: RunningCall | undefined;
  /** `task_started` arrived for the running turn: only from then on does a cancel interrupt it. */
  #turnStarted = false;
  /** A cancel asked for before the turn ran: sent when its `task_started` arrives. */
  #cancelOnStart: RunningCall | undefined;
  /** Ids of our tools/call requests not answered yet: their server-side listeners still forward events. */
  readonly #listeners = new Set<number>();
  /** task_complete events seen whose call has not been answered yet. */
  #completionsToAnswer = 0;
  #identified = false;
  /** The thread (= resume token): from the start spec, or from `session_configured`. */
  threadId: string | undefined;
  /** The last "Session not found" answer (typed), for callers deciding on a fallback. */
  lastSessionNotFound: AseError<SessionNotFoundDetails> | undefined;

  constructor(context: EngineContext, options: CodexMcpEngineOptions = {}) {
    super(context, { shutdown: CODEX_MCP_DEFAULT_SHUTDOWN, ...options });
  }

  get skippedInput(): readonly { reason: string; raw: unknown }[] {
    return [...this.skipped, ...this.#translator.skipped];
  }

  get pendingPermissions(): string[] {
    return [...this.#approvals.keys()];
  }

  protected readonly cli = CODEX_MCP_CLI;

  protected override async preflight(bin: string, env: Record<string, string>): Promise<void> {
    if (this.options.approvalPolicy === 'untrusted') {
      throw new AseError('INVALID_OPTIONS', `codex-mcp engine: mcp-server accepts approvalPolicy 'on-request' or 'never', not 'untrusted'`);
    }
    // A replay's stand-in carries the recorded version: no binary is run to ask (replay-engine.ts).
    const replayed = (this.options.launcher as { replayedVersion?: unknown } | undefined)?.replayedVersion;
    this.version = typeof replayed === 'string' ? replayed : await probeCodexVersion(this.engineName, bin, env);
    const problem = mcpVersionProblem(this.version, this.options.allowUntestedVersion);
    if (problem) throw new AseError('ENGINE_START_FAILED', `codex-mcp engine: ${bin}: ${problem}`);
    this.threadId = this.spec.resumeToken;
  }

  protected commandArgs(): string[] {
    return [...configOverrideArgs(this.options.config), 'mcp-server'];
  }

  protected get turnActive(): boolean {
    return this.#translator.turnRunning;
  }

  protected registerHandlers(): void {
    this.peer.handle('elicitation/create', (params, id) => this.#ask(params, id));
  }

  protected async handshake(): Promise<void> {
    const timeoutMs = this.options.initializeTimeoutMs ?? 60_000;
    await this.peer.request('initialize', { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: { elicitation: {} }, clientInfo: CLIENT_INFO }, { timeoutMs });
    await this.peer.notify('notifications/initialized');
    const tools = ToolsListResultSchema.safeParse(await this.peer.request('tools/list', {}, { timeoutMs }));
    const names = tools.success ? tools.data.tools.map((t) => t.name) : [];
    const missing = ['codex', 'codex-reply'].filter((n) => !names.includes(n));
    if (missing.length > 0) throw new AseError('PROTOCOL_ERROR', `mcp-server does not offer the tool(s) ${missing.join(', ')} (offered: ${names.join(', ') || 'none'})`);
  }

  protected async startTurn(message: UserMessage): Promise<void> {
    this.#translator.beginTurn();
    this.#turnStarted = false;
    this.#callTool(message.text);
  }

  #callTool(prompt: string): void {
    const o = this.options;
    const reply = this.threadId !== undefined;
    const params = reply
      ? { name: 'codex-reply', arguments: { threadId: this.threadId, prompt } }
      : {
          name: 'codex',
          arguments: {
            prompt,
            cwd: this.spec.workDir,
            ...(o.approvalPolicy && { 'approval-policy': o.approvalPolicy }),
            ...(o.sandbox && { sandbox: o.sandbox }),
            ...(o.model && { model: o.model }),
            ...(o.baseInstructions !== undefined && { 'base-instructions': o.baseInstructions }),
            ...(o.developerInstructions !== undefined && { 'developer-instructions': o.developerInstructions }),
          },
        };
    // No timeout: a turn takes as long as it takes (the session has its own stall watchdog).
    const request = this.peer.start('tools/call', params, { timeoutMs: 0 });
    const call: RunningCall = { id: request.id, prompt, reply };
    this.#call = call;
    this.#listeners.add(call.id);
    request.result.then(
      (result) => this.#onCallResult(call, result),
      (error: unknown) => this.#onCallFailed(call, error),
    );
  }

  protected async interruptTurn(timeoutMs: number): Promise<void> {
    const call = this.#call;
    if (!call || !this.#translator.turnRunning) return;
    // The server answers a cancel with `turn_aborted` and never responds to the call. If even the
    // event does not come, the turn is closed here so the session does not wait forever.
    this.armInterruptGuard(timeoutMs, () => {
      if (this.#call !== call || !this.#translator.turnRunning) return;
      this.noteSkipped('notifications/cancelled: no turn_aborted in time; turn closed locally', { requestId: call.id });
      this.#finishTurn(this.#translator.endTurn('cancelled', 'interrupt timeout'));
    });
    // mcp-server ignores a cancel that arrives before the call's turn runs (and then runs it to
    // the end): an early cancel waits for the turn's `task_started`.
    if (!this.#turnStarted) {
      this.#cancelOnStart = call;
      return;
    }
    await this.#cancel(call);
  }

  #cancel(call: RunningCall): Promise<void> {
    return this.peer.notify('notifications/cancelled', { requestId: call.id, reason: 'interrupted by the host' });
  }

  protected async answer(requestId: string, decision: PermissionDecision): Promise<void> {
    const pending = this.#approvals.get(requestId);
    if (!pending) return; // already answered, or its turn ended
    this.#approvals.delete(requestId);
    if (decision.behavior === 'deny') {
      this.#translator.noteDenied(pending.callId);
      // A denied exec gets no exec_command_* events at all: its result is reported now.
      if (pending.kind === 'exec' && !decision.interrupt) this.emitAll(this.#translator.deniedResult(pending.callId, decision.message ?? DEFAULT_REJECTION));
    }
    pending.resolve({ decision: mcpDecision(decision) });
  }

  /**
   * `codex/event` routing. Quirk of mcp-server 0.153.4: the listener of a call that was aborted
   * (`turn_aborted`) does not end; it keeps pulling events of the thread and competes with the
   * next call's listener, so the next turn's events arrive tagged with EITHER request id (each
   * event once, but not always in order) and its result may come as the response to the OLD id.
   * The split never heals (the answered listener leaves, the new call's takes its place). Events
   * are therefore accepted for our thread from every call still open (`#listeners`), the turn
   * ends on the event (`task_complete` / `turn_aborted`) after a short settle window, and text
   * deltas are not streamed while split (whole messages only).
   */
  protected onNotification(method: string, params: unknown): void {
    if (method !== 'codex/event') {
      this.noteSkipped('unknown notification', { method, params });
      return;
    }
    const parsed = CodexEventParamsSchema.safeParse(params);
    if (!parsed.success) {
      this.noteSkipped(`malformed codex/event: ${parsed.error.issues[0]?.message}`, params);
      return;
    }
    const { _meta: meta, msg } = parsed.data;
    const ours = typeof meta.requestId === 'number' && this.#listeners.has(meta.requestId) && (this.threadId === undefined || meta.threadId === undefined || meta.threadId === this.threadId);
    if (!ours) {
      this.noteSkipped('codex/event of a call that is not ours', params);
      return;
    }
    // Each task_complete is consumed by exactly one listener, which then answers its call.
    if (msg.type === 'task_complete' || msg.type === 'turn_complete') this.#completionsToAnswer++;
    if (msg.type === 'task_started' && !this.#identified && this.threadId !== undefined) {
      // A continued thread (resume token) does not repeat session_configured: the first turn
      // event proves the server holds it.
      this.#identified = true;
      this.emit({ type: 'session_identified', resumeToken: this.threadId });
    }
    if ((msg.type === 'task_started' || msg.type === 'turn_started') && this.#translator.turnRunning) {
      this.#turnStarted = true;
      const early = this.#cancelOnStart;
      this.#cancelOnStart = undefined;
      if (early && early === this.#call) this.#cancel(early).catch(() => undefined); // a dead pipe ends the turn anyway
    }
    if ((msg.type === 'task_complete' || msg.type === 'turn_complete' || msg.type === 'turn_aborted') && this.#listeners.size > 1) {
      // Two listeners may deliver the turn's last events out of order: let them land first.
      this.context.setTimeout(() => this.#translateAndEmit(msg), MULTI_LISTENER_SETTLE_MS);
      return;
    }
    this.#translateAndEmit(msg);
  }

  #translateAndEmit(msg: { type: string }): void {
    this.#translator.streamDeltas = this.#listeners.size <= 1;
    const bodies = this.#translator.translate(msg);
    const session = this.#translator.session;
    if (session && session.threadId !== this.threadId) {
      this.threadId = session.threadId;
      this.#identified = true;
    }
    if (bodies.some((b) => b.type === 'turn_complete')) this.#finishTurn(bodies);
    else this.emitAll(bodies);
  }

  /** Emits the turn's last events; the next queued message may start. */
  #finishTurn(bodies: Parameters<CodexMcpEngine['emitAll']>[0]): void {
    this.clearInterruptGuard();
    this.#cancelOnStart = undefined;
    this.#call = undefined;
    this.#approvals.clear();
    this.emitAll(bodies);
    this.dispatchQueued();
  }

  #onCallResult(call: RunningCall, raw: unknown): void {
    this.#listeners.delete(call.id);
    const parsed = ToolCallResultSchema.safeParse(raw);
    const result = parsed.success ? parsed.data : {};
    if (!parsed.success) this.noteSkipped('malformed tools/call result', raw);
    if (this.threadId === undefined && result.structuredContent?.threadId) this.threadId = result.structuredContent.threadId;
    if (this.#completionsToAnswer > 0) {
      // The answer that follows a task_complete event: that turn has already ended.
      this.#completionsToAnswer--;
      return;
    }
    if (!this.#translator.turnRunning || this.#call === undefined) return;
    if (!result.isError) {
      this.#finishTurn(this.#translator.endTurn('completed', 'tool_result'));
      return;
    }
    const text = resultText(result) || 'codex tool call failed';
    if (call.reply && SESSION_NOT_FOUND_RE.test(text)) {
      const error = sessionNotFound(this.threadId ?? '?', text);
      this.lastSessionNotFound = error;
      if (this.options.onSessionNotFound === 'new-thread') {
        this.noteSkipped(error.message, raw);
        // An interrupt (or stop) asked for while codex-reply was in flight ends the turn: a fresh
        // thread would run the prompt after the host gave up on it.
        if (this.#cancelOnStart === call || this.isStopping) {
          this.#finishTurn(this.#translator.endTurn('cancelled', 'interrupted'));
          return;
        }
        this.threadId = undefined;
        this.#identified = false;
        this.#callTool(call.prompt); // same turn, fresh thread: session_configured identifies it
        return;
      }
      this.#finishTurn(this.#translator.endTurn('failed', 'session_not_found', { message: error.message }));
      return;
    }
    this.#finishTurn(this.#translator.endTurn('failed', 'error', { message: text }));
  }

  #onCallFailed(call: RunningCall, error: unknown): void {
    this.#listeners.delete(call.id);
    if (this.#call !== call || this.isStopping) return;
    this.#finishTurn(this.#translator.endTurn('failed', 'error', { message: `codex-mcp: tools/call failed: ${errorMessage(error)}` }));
  }

  #ask(params: unknown, rpcId: string | number): Promise<unknown> {
    const parsed = ElicitationParamsSchema.safeParse(params);
    if (!parsed.success) throw rpcError(INVALID_PARAMS, `invalid elicitation params: ${parsed.error.issues[0]?.message}`);
    const p = parsed.data;
    const requestId = `g${this.spec.gen}-${rpcId}`;
    let kind: PendingApproval['kind'];
    let toolName: string;
    let input: Record<string, unknown>;
    if (p.codex_elicitation === 'exec-approval') {
      kind = 'exec';
      toolName = 'shell';
      input = { command: shellJoin(p.codex_command ?? []), cwd: p.codex_cwd ?? this.spec.workDir };
    } else if (p.codex_elicitation === 'patch-approval') {
      kind = 'patch';
      toolName = 'apply_patch';
      input = { changes: p.codex_changes ?? {} };
    } else {
      // mcp-server treats an error answer as a denial, which is the safe default.
      throw rpcError(METHOD_NOT_FOUND, `unsupported elicitation ${p.codex_elicitation}`);
    }
    if (p.message) input['message'] = p.message;
    this.emitAll(this.#translator.callForApproval(p.codex_call_id, toolName, input));
    // Held before it is reported: a listener may answer synchronously, inside the emit.
    const held = new Promise((resolve) => this.#approvals.set(requestId, { kind, callId: p.codex_call_id, resolve }));
    this.emit({ type: 'permission_request', requestId, toolName, input, callId: p.codex_call_id });
    return held;
  }
}
