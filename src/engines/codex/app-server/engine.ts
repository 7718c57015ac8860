/**
 * The `codex` engine: the pinned `codex app-server` (0.169.0), JSON-RPC over stdio, one process
 * and one thread per runner generation (reference codex.md §5).
 *
 * Lifecycle: spawn `codex [-c k=v…] app-server` → `initialize` → `initialized` →
 * `thread/start` (or `thread/resume {threadId: resumeToken}` after a restart) → `ready`;
 * `session_identified {resumeToken: thread.id, transcriptPath: thread.path}` comes before `ready`
 * for a resumed thread and during the first turn for a new one (once its rollout exists).
 * Each message is a `turn/start`; `turn/completed` ends it; `abort()` is `turn/interrupt`.
 * Approvals are server→client requests (`item/commandExecution/requestApproval`,
 * `item/fileChange/requestApproval`) held open until `answerPermission`; every other server
 * request is answered with a JSON-RPC error by the peer.
 *
 * Host tools (`EngineContext.hostTools`): by default `thread/start.dynamicTools` (which needs
 * `initialize.capabilities.experimentalApi`), each call a server request `item/tool/call` answered
 * with the handler's result; the thread keeps its tools across `thread/resume`. With
 * `hostTools: 'mcp'` they go through the loopback MCP server instead, given per thread as
 * `config.mcp_servers.host` with approvals off (reference host-tools.md §2). Either way the calls
 * show as `tool_call` / `tool_result` under the tool's own name.
 */
import type { EngineSettings, PermissionDecision, UserMessage } from '../../../events/engine-input.js';
import type { EngineCapabilities, EngineContext } from '../../core/engine.js';
import { engineTier } from '../../core/runtime-tier.js';
import { CODEX_CLI } from '../binary.js';
import { configOverrideArgs } from '../config-overrides.js';
import { AseError, errorMessage } from '../../../errors.js';
import { CodexEngineBase } from '../engine-base.js';
import { INVALID_PARAMS, rpcError } from '../../transport/json-rpc.js';
import { CODEX_APPROVAL_POLICIES, checkCodexSettings, type CodexApprovalPolicy, type CodexEngineOptions } from '../options.js';
import { commandDecision, fileChangeDecision } from './decisions.js';
import type { InitializeParams, ThreadResumeParams, ThreadStartParams, TurnInterruptParams, TurnStartParams } from './protocol/index.js';
import { CommandApprovalParamsSchema, FileChangeApprovalParamsSchema, ServerRequestResolvedSchema, ThreadStartResponseSchema, TurnStartResponseSchema } from './messages.js';
import { rolloutStarted } from './rollout-started.js';
import type { HostToolCalls, HostToolResult } from '../../core/host-tools.js';
import { startHostToolsLoopback, type HostToolsLoopback } from '../../core/host-tools-loopback.js';
import type { DynamicToolCallParams } from './protocol/generated/v2/DynamicToolCallParams.js';
import type { DynamicToolCallOutputContentItem } from './protocol/generated/v2/DynamicToolCallOutputContentItem.js';
import { AppServerTranslator } from './translate.js';

export const CODEX_CAPABILITIES: EngineCapabilities = Object.freeze({
  // turn/start on an active turn steers it instead of queueing; the engine queues instead.
  streamingInput: false,
  permissions: true,
  interrupt: true,
  resume: true,
  // Local mode is Codex's own terminal UI (local/engine.ts), chosen per start by the factory.
  localMode: true,
  transcriptTail: false,
  cost: false,
  // `turn/start` carries `model` and `approvalPolicy` "for this turn and subsequent turns".
  setModel: true,
  setPermissionMode: true,
  // `turn/completed`, item events and approval requests; tokens but no price; fileChange items miss shell edits.
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'authoritative', cost: 'absent', fileChanges: 'cooperative' }),
  // dynamicTools + item/tool/call, or the loopback MCP server (options.hostTools).
  hostTools: true,
});

/**
 * A `thread/start.dynamicTools` entry (experimental API: the stable generated types omit the field;
 * shape from `codex app-server generate-ts --experimental`, reference host-tools.md §2).
 */
interface DynamicToolSpec {
  type: 'function';
  name: string;
  description: string;
  inputSchema: unknown;
}

export type CodexAppServerEngineOptions = CodexEngineOptions;

/** `clientInfo.name`: Codex sends it upstream as the `originator` header. */
const CLIENT_NAME = 'agent_session_engine';
const CLIENT_VERSION = '0.1.0';


interface PendingApproval {
  rpcId: string | number;
  kind: 'command' | 'fileChange';
  callId: string;
  resolve: (result: unknown) => void;
}

export class CodexAppServerEngine extends CodexEngineBase<CodexAppServerEngineOptions> {
  readonly capabilities = CODEX_CAPABILITIES;
  protected readonly engineName = 'codex';
  protected readonly jsonrpcField = false;
  readonly #translator = new AppServerTranslator();
  readonly #approvals = new Map<string, PendingApproval>();
  /** Resolves with the running turn's id once `turn/start` answered (interrupt needs it). */
  #turnIdReady: Promise<string | undefined> = Promise.resolve(undefined);
  /** A new thread's identity, reported once its rollout exists (see handshake). */
  #pendingIdentity: { resumeToken: string; transcriptPath?: string } | undefined;
  /** An interrupt asked for before the turn was active: sent when its `turn/started` arrives. */
  #interruptOnStart: { turnId: string; timeoutMs: number } | undefined;
  /** Settings changed since the last `turn/start`: the next one carries them (and the thread keeps them). */
  #changedSettings: EngineSettings = {};
  /** What the thread started with (the thread/start or thread/resume answer): what a `null` change goes back to. */
  #threadDefaults: { model?: string; approvalPolicy?: CodexApprovalPolicy } = {};
  /** This generation's host tool calls, when the session has tools. */
  #hostCalls: HostToolCalls | undefined;
  /** The loopback MCP server (`hostTools: 'mcp'`). */
  #loopback: HostToolsLoopback | undefined;
  /** Host tool calls running, by Codex's request id: Codex withdrawing one (serverRequest/resolved) aborts its handler. */
  readonly #hostCallsRunning = new Map<string | number, AbortController>();
  /** Host tool calls waiting for the host's permission (tools with `requiresPermission`), by request id. */
  readonly #toolApprovals = new Map<string, (allowed: boolean) => void>();
  /** Thread id of this generation (= the resume token). */
  threadId: string | undefined;
  /** Rollout file of the thread (`thread.path`). */
  transcriptPath: string | undefined;

  constructor(context: EngineContext, options: CodexAppServerEngineOptions = {}) {
    super(context, options);
  }

  /** Unknown / malformed / stale upstream messages, including the translator's. */
  get skippedInput(): readonly { reason: string; raw: unknown }[] {
    return [...this.skipped, ...this.#translator.skipped];
  }

  protected readonly cli = CODEX_CLI;

  protected commandArgs(): string[] {
    return [...configOverrideArgs(this.options.config), 'app-server'];
  }

  protected get turnActive(): boolean {
    return this.#translator.turnRunning;
  }

  protected registerHandlers(): void {
    this.peer.handle('item/commandExecution/requestApproval', (params, id) => this.#ask('command', params, id));
    this.peer.handle('item/fileChange/requestApproval', (params, id) => this.#ask('fileChange', params, id));
    this.peer.handle('item/tool/call', (params, id) => this.#callHostTool(params, id));
  }

  protected async handshake(): Promise<void> {
    const timeoutMs = this.options.initializeTimeoutMs ?? 60_000;
    const toolbox = this.context.hostTools;
    const hostTools = toolbox && toolbox.size > 0 ? (this.options.hostTools ?? 'dynamic') : undefined;
    if (toolbox && hostTools) this.#hostCalls = toolbox.calls();
    if (hostTools === 'mcp') this.#loopback = await startHostToolsLoopback(this.#hostCalls!);
    const init: InitializeParams = {
      clientInfo: { name: CLIENT_NAME, title: null, version: CLIENT_VERSION },
      // dynamicTools and item/tool/call are experimental API: without it thread/start fails with
      // -32600 "thread/start.dynamicTools requires experimentalApi capability".
      capabilities: { experimentalApi: hostTools === 'dynamic', requestAttestation: false },
    };
    await this.peer.request('initialize', init, { timeoutMs });
    await this.peer.notify('initialized');
    // The session's runtime choices win over engineOptions; a resumed thread takes the model given
    // here, not the one it was recorded with (reference codex.md §6), so they are passed either way.
    checkCodexSettings('codex', { ...(this.spec.permissionMode !== undefined && { permissionMode: this.spec.permissionMode }) });
    const model = this.spec.model ?? this.options.model;
    const approvalPolicy = (this.spec.permissionMode as CodexApprovalPolicy | undefined) ?? this.options.approvalPolicy;
    const common = {
      cwd: this.spec.workDir,
      ...(approvalPolicy && { approvalPolicy }),
      ...(this.options.sandbox && { sandbox: this.options.sandbox }),
      ...(model && { model }),
      ...(this.options.baseInstructions !== undefined && { baseInstructions: this.options.baseInstructions }),
      ...(this.options.developerInstructions !== undefined && { developerInstructions: this.options.developerInstructions }),
      // Per thread, no restart, no experimental flag; approvals off: the host's own tools are trusted
      // (one that needs a person is asked by the handler's wrapper, see #callHostTool).
      ...(this.#loopback && {
        config: { mcp_servers: { [this.#loopback.serverName]: { url: this.#loopback.url, default_tools_approval_mode: 'approve' } } },
      }),
    };
    let raw: unknown;
    if (this.spec.resumeToken) {
      const params: ThreadResumeParams = { threadId: this.spec.resumeToken, excludeTurns: true, ...common };
      try {
        raw = await this.peer.request('thread/resume', params, { timeoutMs });
      } catch (error) {
        throw new AseError('ENGINE_START_FAILED', `thread/resume ${this.spec.resumeToken} failed: ${errorMessage(error)}`, { cause: error });
      }
    } else {
      // The thread keeps these for its life (and across thread/resume): they cannot change later.
      const dynamicTools: DynamicToolSpec[] | undefined =
        hostTools === 'dynamic' ? toolbox!.specs.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.inputSchema })) : undefined;
      const params: ThreadStartParams & { dynamicTools?: DynamicToolSpec[] } = { ...common, ...(dynamicTools && { dynamicTools }) };
      raw = await this.peer.request('thread/start', params, { timeoutMs });
    }
    const parsed = ThreadStartResponseSchema.safeParse(raw);
    if (!parsed.success) throw new AseError('PROTOCOL_ERROR', `unexpected thread response: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const { thread } = parsed.data;
    // What a `null` change goes back to: engineOptions, else what the thread reports, unless the
    // thread was started with a runtime choice (the report is then that choice, not the default).
    const defaultModel = this.options.model ?? (this.spec.model === undefined ? parsed.data.model : undefined);
    const defaultPolicy = this.options.approvalPolicy ?? (this.spec.permissionMode === undefined ? threadApprovalPolicy(raw) : undefined);
    this.#threadDefaults = { ...(defaultModel !== undefined && { model: defaultModel }), ...(defaultPolicy !== undefined && { approvalPolicy: defaultPolicy }) };
    this.threadId = thread.id;
    this.transcriptPath = thread.path ?? undefined;
    this.#translator.setThread(thread.id);
    if (toolbox && hostTools) this.#translator.setHostTools(toolbox);
    const identity = { resumeToken: thread.id, ...(thread.path && { transcriptPath: thread.path }) };
    // app-server writes a new thread's rollout only once its first turn has started, and
    // thread/resume of a thread without one fails ("no rollout found"): a token reported now
    // could never be resumed, and every restart before the first turn would fail for good. A new
    // thread is reported once its rollout holds its first line (see rollout-started.ts).
    if (this.spec.resumeToken || !thread.path) this.emit({ type: 'session_identified', ...identity });
    else this.#pendingIdentity = identity;
  }

  /** Reports a new thread (once) as soon as its rollout can be resumed from. */
  #identifyWhenResumable(): void {
    const identity = this.#pendingIdentity;
    if (!identity?.transcriptPath || !rolloutStarted(identity.transcriptPath)) return;
    this.#pendingIdentity = undefined;
    this.emit({ type: 'session_identified', ...identity });
  }

  protected async startTurn(message: UserMessage): Promise<void> {
    const threadId = this.threadId!;
    this.#translator.beginTurn();
    // Settings changed since the last turn go with this one; the thread keeps them for later turns.
    const params: TurnStartParams = { threadId, input: [{ type: 'text', text: message.text, text_elements: [] }], ...this.#takeChangedSettings() };
    let settle!: (turnId: string | undefined) => void;
    this.#turnIdReady = new Promise((resolve) => (settle = resolve));
    try {
      const raw = await this.peer.request('turn/start', params);
      this.#identifyWhenResumable();
      const parsed = TurnStartResponseSchema.safeParse(raw);
      if (!parsed.success) {
        this.noteSkipped(`unexpected turn/start response: ${parsed.error.issues[0]?.message}`, raw);
        settle(this.#translator.turnId);
        return;
      }
      this.#translator.adoptTurnId(parsed.data.turn.id);
      settle(parsed.data.turn.id);
    } catch (error) {
      settle(undefined);
      if (this.isStopping) return;
      this.emitAll(this.#translator.endTurn('failed', { message: `codex: turn/start failed: ${errorMessage(error)}` }));
      this.dispatchQueued();
    }
  }

  /**
   * The session's settings change (AgentEngine.configure): app-server takes `model` and
   * `approvalPolicy` with `turn/start`, for that turn and the ones after it, so a change reaches
   * the thread with the next turn; a turn already running keeps what it started with. `null` goes
   * back to the `engineOptions` value, else to what the thread started with.
   */
  async configure(settings: EngineSettings): Promise<void> {
    checkCodexSettings('codex', settings);
    this.#changedSettings = { ...this.#changedSettings, ...settings };
  }

  /**
   * The `turn/start` fields for the settings changed since the last turn (then forgotten: the
   * thread keeps them). A `null` names the default; turn/start has no "back to the default", so
   * when the default is not known the thread keeps its current one until the session's next start.
   */
  #takeChangedSettings(): { model?: string; approvalPolicy?: CodexApprovalPolicy } {
    const changed = this.#changedSettings;
    this.#changedSettings = {};
    const fields: { model?: string; approvalPolicy?: CodexApprovalPolicy } = {};
    const unknown: string[] = [];
    if (changed.model !== undefined) {
      const model = changed.model ?? this.#threadDefaults.model;
      if (model !== undefined) fields.model = model;
      else unknown.push('model');
    }
    if (changed.permissionMode !== undefined) {
      const policy = (changed.permissionMode as CodexApprovalPolicy | null) ?? this.#threadDefaults.approvalPolicy;
      if (policy !== undefined) fields.approvalPolicy = policy;
      else unknown.push('approval policy');
    }
    if (unknown.length > 0) {
      this.emit({
        type: 'warning',
        code: 'setting_deferred',
        message: `codex engine: this thread started with a chosen ${unknown.join(' and ')}, so its default is not known here; the default applies from the session's next start`,
      });
    }
    return fields;
  }

  /** Only app-server's approval policies: refused before anything is stored. */
  validateSettings(settings: EngineSettings): void {
    checkCodexSettings('codex', settings);
  }

  protected async interruptTurn(timeoutMs: number): Promise<void> {
    if (!this.#translator.turnRunning) return;
    // Host tool handlers of this turn stop now (their calls are answered as aborted).
    this.#hostCalls?.abortAll('the turn was interrupted');
    for (const [requestId, answer] of this.#toolApprovals) {
      this.#toolApprovals.delete(requestId);
      answer(false);
      this.emit({ type: 'permission_cancelled', requestId, reason: 'turn interrupted' });
    }
    const turnId = await this.#turnIdReady;
    if (!this.#translator.turnRunning) return;
    if (turnId === undefined) {
      this.emitAll(this.#translator.endTurn('cancelled'));
      return;
    }
    // The interrupted turn ends with `turn/completed {status: interrupted}`; if that never comes,
    // the turn is closed here so the session does not wait forever.
    this.armInterruptGuard(timeoutMs, () => {
      this.#interruptOnStart = undefined;
      if (this.#translator.turnRunning && this.#translator.turnId === turnId) {
        this.noteSkipped('turn/interrupt: no turn/completed in time; turn closed locally', { turnId });
        this.emitAll(this.#translator.endTurn('cancelled'));
        this.dispatchQueued();
      }
    });
    // app-server answers turn/start before the turn is active, and refuses to interrupt it until
    // then ("no active turn"), after which it runs the turn anyway (and a next turn/start joins
    // it). So an early interrupt waits for the turn's `turn/started`.
    if (!this.#translator.turnStarted) {
      this.#interruptOnStart = { turnId, timeoutMs };
      return;
    }
    await this.#sendInterrupt(turnId, timeoutMs);
  }

  async #sendInterrupt(turnId: string, timeoutMs: number): Promise<void> {
    const params: TurnInterruptParams = { threadId: this.threadId!, turnId };
    try {
      await this.peer.request('turn/interrupt', params, { timeoutMs });
    } catch (error) {
      this.clearInterruptGuard();
      if (this.#translator.turnRunning && this.#translator.turnId === turnId && !this.isStopping) {
        this.noteSkipped(`turn/interrupt failed: ${errorMessage(error)}`, params);
        this.emitAll(this.#translator.endTurn('cancelled'));
        this.dispatchQueued();
      }
    }
  }

  protected async answer(requestId: string, decision: PermissionDecision): Promise<void> {
    const toolApproval = this.#toolApprovals.get(requestId);
    if (toolApproval) {
      this.#toolApprovals.delete(requestId);
      toolApproval(decision.behavior === 'allow');
      return;
    }
    const pending = this.#approvals.get(requestId);
    // Already answered, or resolved by Codex itself (turn ended / interrupted): nothing to send.
    if (!pending) return;
    this.#approvals.delete(requestId);
    if (decision.behavior === 'deny') this.#translator.noteDenied(pending.callId);
    pending.resolve({ decision: pending.kind === 'command' ? commandDecision(decision) : fileChangeDecision(decision) });
  }

  protected onNotification(method: string, params: unknown): void {
    if (method === 'serverRequest/resolved') {
      this.#onResolved(params);
      return;
    }
    // Before the turn's events, so the session knows the thread they belong to.
    this.#identifyWhenResumable();
    const bodies = this.#translator.translate(method, params);
    this.emitAll(bodies);
    if (bodies.some((b) => b.type === 'turn_complete')) {
      this.#interruptOnStart = undefined;
      this.clearInterruptGuard();
      this.dispatchQueued();
      return;
    }
    const early = this.#interruptOnStart;
    if (early && this.#translator.turnStarted && this.#translator.turnId === early.turnId) {
      this.#interruptOnStart = undefined;
      void this.#sendInterrupt(early.turnId, early.timeoutMs);
    }
  }

  /** Ids of permission requests still waiting for `answerPermission`. */
  get pendingPermissions(): string[] {
    return [...this.#approvals.keys(), ...this.#toolApprovals.keys()];
  }

  protected override async release(): Promise<void> {
    this.#hostCalls?.close('the engine stopped');
    for (const answer of this.#toolApprovals.values()) answer(false);
    this.#toolApprovals.clear();
    await this.#loopback?.close('the engine stopped');
  }

  /**
   * `item/tool/call`: the agent calls a host tool (dynamicTools). Codex asks no approval for these
   * (the host is the policy): a tool marked `requiresPermission` is asked here, as a
   * `permission_request` for the call. The answer is the handler's result; a failure of any kind is
   * `success: false` with its text, which the model reads as the tool's output.
   */
  async #callHostTool(params: unknown, rpcId: string | number): Promise<unknown> {
    const p = params as Partial<DynamicToolCallParams> | null;
    const calls = this.#hostCalls;
    if (!calls || typeof p?.tool !== 'string' || typeof p.callId !== 'string') throw rpcError(INVALID_PARAMS, 'item/tool/call: not a host tool call');
    const { tool, callId } = p;
    const args = p.arguments ?? {};
    if (calls.specs.find((s) => s.name === tool)?.requiresPermission) {
      const requestId = `g${this.spec.gen}-tool-${rpcId}`;
      const allowed = new Promise<boolean>((resolve) => this.#toolApprovals.set(requestId, resolve));
      this.emit({ type: 'permission_request', requestId, toolName: tool, input: args, callId });
      if (!(await allowed)) return dynamicToolAnswer({ content: [{ type: 'text', text: `the host did not allow ${tool}` }], isError: true });
    }
    const withdrawn = new AbortController();
    this.#hostCallsRunning.set(rpcId, withdrawn);
    try {
      return dynamicToolAnswer(await calls.call(tool, args, { callId, signal: withdrawn.signal }));
    } finally {
      this.#hostCallsRunning.delete(rpcId);
    }
  }

  #ask(kind: 'command' | 'fileChange', params: unknown, rpcId: string | number): Promise<unknown> {
    const requestId = `g${this.spec.gen}-${rpcId}`;
    if (kind === 'command') {
      const parsed = CommandApprovalParamsSchema.safeParse(params);
      if (!parsed.success) throw rpcError(INVALID_PARAMS, `invalid approval params: ${parsed.error.issues[0]?.message}`);
      const p = parsed.data;
      const input = { command: p.command ?? '', cwd: p.cwd ?? this.spec.workDir, ...(p.reason && { reason: p.reason }), ...(p.commandActions && { commandActions: p.commandActions }) };
      this.emitAll(this.#translator.callForApproval(p.itemId, 'shell', input, p.threadId));
      // Held before it is reported: a listener may answer synchronously, inside the emit.
      const held = this.#hold(requestId, rpcId, kind, p.itemId);
      this.emit({
        type: 'permission_request',
        requestId,
        toolName: 'shell',
        input,
        callId: p.itemId,
        // A sub-agent's approval is scoped to the spawn_agent call (same ledger, same answer path).
        ...this.#translator.scopeOfThread(p.threadId),
        ...(p.availableDecisions && { suggestions: p.availableDecisions }),
      });
      return held;
    }
    const parsed = FileChangeApprovalParamsSchema.safeParse(params);
    if (!parsed.success) throw rpcError(INVALID_PARAMS, `invalid approval params: ${parsed.error.issues[0]?.message}`);
    const p = parsed.data;
    const input = { changes: this.#translator.changesOf(p.itemId) ?? [], ...(p.reason && { reason: p.reason }), ...(p.grantRoot && { grantRoot: p.grantRoot }) };
    this.emitAll(this.#translator.callForApproval(p.itemId, 'apply_patch', input, p.threadId));
    const held = this.#hold(requestId, rpcId, kind, p.itemId);
    this.emit({ type: 'permission_request', requestId, toolName: 'apply_patch', input, callId: p.itemId, ...this.#translator.scopeOfThread(p.threadId) });
    return held;
  }

  #hold(requestId: string, rpcId: string | number, kind: PendingApproval['kind'], callId: string): Promise<unknown> {
    return new Promise((resolve) => this.#approvals.set(requestId, { rpcId, kind, callId, resolve }));
  }

  /**
   * Codex cleared one of its requests itself (answered, or dropped at turn end / interrupt). A
   * still-pending one is forgotten without an answer (answering now would be a stale reply) and
   * reported as withdrawn, so the host does not keep asking a person about it.
   */
  #onResolved(params: unknown): void {
    const parsed = ServerRequestResolvedSchema.safeParse(params);
    if (!parsed.success) {
      this.noteSkipped('malformed serverRequest/resolved', params);
      return;
    }
    // A host tool call Codex no longer waits for (turn ended, interrupted): its handler stops.
    this.#hostCallsRunning.get(parsed.data.requestId)?.abort(new Error('codex withdrew the call'));
    for (const [requestId, pending] of this.#approvals) {
      if (pending.rpcId !== parsed.data.requestId) continue;
      this.#approvals.delete(requestId);
      this.emit({ type: 'permission_cancelled', requestId, reason: 'resolved by codex' });
    }
  }
}

/** The approval policy a thread/start or thread/resume answer reports, when it is one of ours. */
function threadApprovalPolicy(raw: unknown): CodexApprovalPolicy | undefined {
  const policy = (raw as { approvalPolicy?: unknown } | null)?.approvalPolicy;
  return typeof policy === 'string' && (CODEX_APPROVAL_POLICIES as readonly string[]).includes(policy) ? (policy as CodexApprovalPolicy) : undefined;
}

/** A host tool's result as Codex's `DynamicToolCallResponse` (images as data URLs). */
function dynamicToolAnswer(result: HostToolResult): { contentItems: DynamicToolCallOutputContentItem[]; success: boolean } {
  const contentItems = result.content.map((c): DynamicToolCallOutputContentItem =>
    c.type === 'text' ? { type: 'inputText', text: c.text } : { type: 'inputImage', imageUrl: `data:${c.mimeType};base64,${c.data}` },
  );
  return { contentItems, success: !result.isError };
}
