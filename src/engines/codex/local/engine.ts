/**
 * The codex engine in local mode: Codex's own terminal UI in a PTY, watched, not driven. The PTY,
 * the hook socket, send/abort/stop and the exit are core/terminal-engine.ts (shared with Claude's
 * local engine); what is Codex's is here.
 *
 * - Start: `codex` (a new thread) or `codex resume <thread id>` with our hooks as `-c` overrides
 *   (hook-config.ts) reporting over a private unix socket, in a PTY handed to the host
 *   (`EngineContext.terminal`). The daemon the terminal UI would otherwise start and leave behind
 *   (reference codex.md §9.11) is turned off (`features.daemon_auto_start=false`).
 * - Resume: the thread's rollout is found by its id and followed from its current end, so what it
 *   holds (reported by the generation that wrote it) is not reported again. A thread whose rollout
 *   is not under this CODEX_HOME cannot be resumed: a new thread starts (a `thread_not_resumable`
 *   warning), and the session reports the fork (`RESUME_FORKED`) when Codex names it. The codex
 *   engines report a thread only once its rollout exists, so this takes a moved or deleted rollout
 *   or another CODEX_HOME.
 * - `SessionStart` (Codex sends it with the thread's first prompt) names the thread that really
 *   runs. An id other than the resumed one is an `error` event, never silent.
 * - Output comes from the rollout, mapped by the rollout translator: the same ids and usage the
 *   app-server engine reports, so a transcript has no duplicates across a switch. The turn ends on
 *   the rollout's `task_complete` / `turn_aborted` (authoritative), `Stop` only reads to the end.
 * - `PermissionRequest`: Codex runs the hook before it shows its own dialog ("Running hook"). The
 *   engine reports a `permission_request` and a remote answer (`answerPermission`) decides. The
 *   person at the terminal takes it over with any key: the hook then returns no decision, Codex
 *   shows its own dialog, and the remote prompt is withdrawn (`permission_cancelled`, "answered in
 *   the local terminal"). That key is not passed on, so it cannot answer the dialog unseen. First
 *   answer wins either way.
 * - The exit reads the rollout to its end before `exited`.
 * - Host tools (`EngineContext.hostTools`): the loopback MCP server (core/host-tools-loopback.ts)
 *   for this generation, as `-c mcp_servers.host.url=…` with the token in the terminal UI's
 *   environment (`bearer_token_env_var`: `ps` never shows it), approvals off unless a tool has
 *   `requiresPermission` (then Codex asks for the server's tools, through the `PermissionRequest`
 *   hook or its dialog). Codex lists MCP tools behind its `tool_search` (namespace `mcp__host`).
 *   Reported under the tool's own name. Codex takes input ~1.1 s before it connects them (0.169.0),
 *   so `ready` waits for its `tools/list` (core/terminal-engine.ts), `hostToolsConnectTimeoutMs`
 *   at most.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineSettings, PermissionDecision } from '../../../events/engine-input.js';
import { findAgent } from '../../core/agent-discovery.js';
import { readAgentVersion, versionWarning } from '../../core/agent-version.js';
import type { EngineCapabilities, EngineContext, EngineStartSpec, TerminalPort } from '../../core/engine.js';
import { startHostToolsLoopback, type HostToolsLoopback } from '../../core/host-tools-loopback.js';
import { displayToolName, type HostToolbox, type HostToolCalls } from '../../core/host-tools.js';
import { HOST_TOOLS_CONNECT_TIMEOUT_MS, TerminalEngine, type TerminalLaunch } from '../../core/terminal-engine.js';
import { buildEnv } from '../../transport/env.js';
import { createHookDir, type HookDir } from '../../transport/hook-dir.js';
import type { HookCall } from '../../transport/hook-server.js';
import type { PtyProcess } from '../../transport/pty-process.js';
import { CODEX_CLI } from '../binary.js';
import { configOverrideArgs } from '../config-overrides.js';
import { checkCodexSettings, codexEnvAllow, mergeCodexOptions, type CodexApprovalPolicy, type CodexEngineOptions } from '../options.js';
import type { TailedEvent } from '../rollout/cursor.js';
import { findRollout } from '../rollout/find-rollout.js';
import { readRollout } from '../rollout/read-rollout.js';
import { RolloutTailer } from '../rollout/tailer.js';
import { codexToolCall } from '../rollout/tool-events.js';
import { codexHookArgs } from './hook-config.js';

/** The variable that carries the loopback server's token to Codex (`bearer_token_env_var`). */
const HOST_TOKEN_ENV = 'ASE_HOST_MCP_TOKEN';

/** The turn of a terminal UI that went away before its rollout said how much it used. */
const UNKNOWN_USAGE = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export class CodexLocalEngine extends TerminalEngine<HookDir> {
  protected readonly label = 'codex local engine';
  /** Codex treats an Enter that follows typed text too closely as part of a paste (a newline, not a submit). */
  protected readonly submitDelayMs = 150;
  readonly #factoryOptions: CodexEngineOptions;
  #tail: RolloutTailer | undefined;
  /** This generation's host tools server (only when the session has tools); closed at the exit. */
  #loopback: HostToolsLoopback | undefined;
  #hostCalls: HostToolCalls | undefined;
  #toolbox: HostToolbox | undefined;
  #toolsConnectTimeoutMs = HOST_TOOLS_CONNECT_TIMEOUT_MS;
  /** Set when a thread is resumed: named at once, confirmed by SessionStart. */
  #resumed: string | undefined;

  /** The thread asked for (`resume`), then the one Codex reported. */
  threadId: string | undefined;
  /** The CLI's version, once read. */
  version: string | undefined;

  constructor(context: EngineContext, options: CodexEngineOptions, capabilities: EngineCapabilities) {
    super(context, capabilities);
    this.#factoryOptions = options;
  }

  protected createHooks(): Promise<HookDir> {
    return createHookDir('ase-cx-');
  }

  protected async prepare(spec: EngineStartSpec, hooks: HookDir): Promise<TerminalLaunch> {
    const options = mergeCodexOptions('codex', this.#factoryOptions, spec.options);
    checkCodexSettings('codex', { ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode }) });
    const env = buildEnv({ allow: codexEnvAllow(options), set: options.env ?? {} });
    const codexHome = env['CODEX_HOME'] ?? join(env['HOME'] ?? homedir(), '.codex');
    const model = spec.model ?? options.model;
    const approvalPolicy = (spec.permissionMode as CodexApprovalPolicy | undefined) ?? options.approvalPolicy;

    if (spec.resumeToken !== undefined) {
      const rollout = findRollout(codexHome, spec.resumeToken);
      if (rollout) {
        this.#resumed = this.threadId = spec.resumeToken;
        // From the rollout's current end: what it holds was reported by the generation that wrote it.
        const { cursor } = await readRollout(rollout);
        this.#tail = new RolloutTailer({ path: rollout, from: cursor, onEvent: (tailed) => this.#onRollout(tailed) });
      } else {
        this.emit({
          type: 'warning',
          code: 'thread_not_resumable',
          message: `${this.label}: thread ${spec.resumeToken} has no rollout under ${codexHome}, so Codex cannot resume it: a new thread starts`,
        });
      }
    }
    const explicit = this.context.bin ?? options.bin;
    const location = await findAgent(CODEX_CLI, explicit !== undefined ? { bin: explicit } : {});
    // The bundled `rg` lives next to the binary; Codex finds it on PATH.
    if (location.pathDir) env['PATH'] = [location.pathDir, env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
    const toolbox = this.context.hostTools && this.context.hostTools.size > 0 ? this.context.hostTools : undefined;
    let hostServer: Record<string, unknown> = {};
    if (toolbox) {
      this.#toolbox = toolbox;
      this.#toolsConnectTimeoutMs = options.hostToolsConnectTimeoutMs ?? HOST_TOOLS_CONNECT_TIMEOUT_MS;
      this.#hostCalls = toolbox.calls();
      const loopback = (this.#loopback = await startHostToolsLoopback(this.#hostCalls));
      env[HOST_TOKEN_ENV] = loopback.bearerToken;
      const trusted = toolbox.specs.every((t) => !t.requiresPermission);
      hostServer = {
        [`mcp_servers.${loopback.serverName}.url`]: loopback.bearerUrl,
        [`mcp_servers.${loopback.serverName}.bearer_token_env_var`]: HOST_TOKEN_ENV,
        ...(trusted && { [`mcp_servers.${loopback.serverName}.default_tools_approval_mode`]: 'approve' }),
      };
    }
    void readAgentVersion(CODEX_CLI, location).then((info) => {
      this.version ??= info.version;
      const warning = versionWarning(CODEX_CLI, info.version, location.where);
      if (warning) this.emit({ type: 'warning', code: 'untested_version', message: `${this.label}: ${warning}` });
    });
    const args = [
      ...(this.#resumed !== undefined ? ['resume', this.#resumed] : []),
      ...configOverrideArgs(options.config),
      ...configOverrideArgs(hostServer),
      ...codexHookArgs(hooks.command),
      '-c',
      'features.daemon_auto_start=false',
      ...(model !== undefined ? ['-m', model] : []),
      ...(approvalPolicy !== undefined ? ['-a', approvalPolicy] : []),
      ...(options.sandbox !== undefined ? ['-s', options.sandbox] : []),
      ...(options.extraArgs ?? []),
    ];
    return { file: location.file, args: [...location.args, ...args], env, ...(options.shutdown && { shutdown: options.shutdown }) };
  }

  protected override started(): void {
    // Codex names a new thread only with its first prompt: a resumed one is known now. Without host
    // tools the UI is ready as soon as the PTY runs (it takes keystrokes from then on).
    if (this.#resumed !== undefined) this.emit({ type: 'session_identified', resumeToken: this.#resumed, transcriptPath: this.#tail!.path });
    this.readyOnceToolsListed(this.#loopback, this.#toolsConnectTimeoutMs);
  }

  protected override async closeTranscript(): Promise<void> {
    await this.#tail?.close();
    await this.#loopback?.close('the terminal UI did not start');
  }

  /** Esc, and the host tool calls of the turn are aborted (their handlers' signals). */
  override async abort(): Promise<void> {
    await super.abort();
    this.#hostCalls?.abortAll('the turn was interrupted');
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    const pty = this.assertRunning('answerPermission');
    const call = this.pending.get(requestId);
    // Taken over in the terminal (reported as permission_cancelled): the first answer won.
    if (!call) return;
    this.pending.delete(requestId);
    // Codex fails a hook closed on updatedInput / updatedPermissions / interrupt: only behavior and message go.
    const answer = decision.behavior === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: decision.message ?? 'Denied by a remote client.' };
    call.reply({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: answer } });
    if (decision.behavior === 'deny' && decision.interrupt) pty.write('\x1b');
  }

  /** The person at the terminal changes model and approvals with `/model` and `/approvals`. */
  validateSettings(settings: EngineSettings): void {
    checkCodexSettings('codex', settings);
  }

  /**
   * Keystrokes while a permission hook waits hand the prompt to the terminal (see the file
   * comment) instead of reaching Codex.
   */
  protected override hostPort(pty: PtyProcess): TerminalPort {
    return {
      get cols() {
        return pty.cols;
      },
      get rows() {
        return pty.rows;
      },
      onData: (listener) => pty.onData(listener),
      resize: (cols, rows) => pty.resize(cols, rows),
      write: (data) => {
        // Codex shows its own dialog once the hook returns no decision.
        if (this.pending.size > 0) this.withdrawPrompts('answered in the local terminal');
        else pty.write(data);
      },
    };
  }

  protected async onHook(call: HookCall): Promise<void> {
    const input = call.input;
    switch (input['hook_event_name']) {
      case 'SessionStart':
        this.#identify(input);
        return call.reply();
      case 'UserPromptSubmit':
        this.busy = true;
        this.emit({ type: 'thinking', active: true });
        return call.reply();
      case 'Stop':
        await this.#tail?.catchUp();
        return call.reply();
      case 'PermissionRequest':
        return this.#ask(call);
      default:
        return call.reply();
    }
  }

  #identify(input: Record<string, unknown>): void {
    const id = typeof input['session_id'] === 'string' ? input['session_id'] : undefined;
    const path = typeof input['transcript_path'] === 'string' ? input['transcript_path'] : undefined;
    if (!id) return;
    if (this.threadId !== undefined && id !== this.threadId) {
      this.emit({
        type: 'error',
        kind: 'protocol',
        message: `${this.label}: Codex runs thread ${id}, not ${this.threadId} (${String(input['source'] ?? 'unknown source')})`,
        retryable: true,
      });
    }
    const known = this.threadId === id && this.#tail !== undefined;
    this.threadId = id;
    if (known) return;
    if (path && path !== this.#tail?.path) {
      void this.#tail?.close();
      // A new thread's rollout: from its start (Codex creates it with this turn).
      this.#tail = new RolloutTailer({ path, onEvent: (tailed) => this.#onRollout(tailed) });
    }
    this.emit({
      type: 'session_identified',
      resumeToken: id,
      ...(path !== undefined && { transcriptPath: path }),
    });
  }

  #onRollout({ event }: TailedEvent): void {
    // The hooks name the thread (with the path Codex reported); the rollout's own copy adds nothing.
    if (event.type === 'session_identified') return;
    if ((event.type === 'tool_call' || event.type === 'permission_request') && this.#toolbox) {
      event = { ...event, toolName: displayToolName(event.toolName, this.#toolbox) };
    }
    if (event.type === 'turn_complete') {
      this.busy = false;
      this.emit({ type: 'thinking', active: false });
    }
    this.emit(event);
  }

  /** Codex's hook says `Bash` (Claude's name); every codex engine reports a command as `shell`, a host tool by its own name. */
  protected override promptedTool(toolName: string, input: unknown): { toolName: string; input: unknown } {
    const tool = codexToolCall(toolName === 'Bash' ? 'shell' : toolName, input);
    return { toolName: displayToolName(tool.toolName, this.#toolbox), input: tool.input };
  }

  #ask(call: HookCall): void {
    // Codex ended the hook: the turn was interrupted with Esc, or the process is going away.
    this.raisePrompt(call, 'codex-local', () => (this.stopRequested ? 'the terminal UI is stopping' : 'the turn was interrupted in the local terminal'));
  }

  protected async onTerminalExit(): Promise<void> {
    await this.#tail?.catchUp().catch(() => undefined);
    await this.#tail?.close().catch(() => undefined);
    await this.#loopback?.close('the terminal UI exited').catch(() => undefined);
    this.withdrawPrompts('the terminal UI exited');
    if (this.busy) this.endTurn('cancelled', UNKNOWN_USAGE);
  }
}
