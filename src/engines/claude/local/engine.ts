/**
 * The claude engine in local mode: Claude Code's own terminal UI in a PTY, watched, not driven. The
 * PTY, the hook socket, send/abort/stop and the exit are core/terminal-engine.ts (shared with
 * Codex's local engine); what is Claude Code's is here.
 *
 * - Start: `claude --session-id <new uuid>` or `--resume <token>` with a temporary `--settings`
 *   file whose hooks report to this engine over a private unix socket (hook-settings.ts), in a PTY
 *   (transport/pty-process.ts) handed to the host (`EngineContext.terminal`) for rendering.
 * - `SessionStart` says which session really runs: `session_identified`, then `ready`. An id other
 *   than the requested one is an `error` event (never silent), and the transcript followed moves
 *   to the new file. With host tools, `ready` waits until Claude Code listed them (below).
 * - Output comes from the transcript JSONL (`transcript_path` of the hook), read from where it
 *   ended when this process started, mapped by the remote engine's translator (same ids).
 * - `UserPromptSubmit` / `Stop` bracket a turn typed in the terminal; `Stop` reads the transcript
 *   to its end before `turn_complete`, so every message of the turn is reported before it ends.
 *   An interrupted turn (Esc, a dialog declined) may run no `Stop`: its marker line in the transcript
 *   ends it (`turn_complete` cancelled), else a handoff would wait for a turn that no longer runs.
 * - `PermissionRequest`: the dialog is on screen and the hook waits; the engine reports a
 *   `permission_request`, and a remote answer (`answerPermission`) is the hook's output. When the
 *   person at the terminal answers first, Claude Code ends the hook (or the tool's result appears
 *   in the transcript): `permission_cancelled` "answered in the local terminal". First answer wins.
 * - The stop ends Claude Code's background shells too: they belong to the process that started
 *   them. The exit reads the transcript to its end before `exited`.
 * - Host tools (`EngineContext.hostTools`): a loopback MCP server (core/host-tools-loopback.ts) for
 *   this generation, declared in an `--mcp-config` file in the private hook directory (so its secret
 *   URL is on no command line), listed always-loaded; the trusted ones in `--allowedTools` (no
 *   dialog), those with `requiresPermission` asked like any tool. Reported under their own names.
 *   Claude Code connects its MCP servers only after its UI is up (and after `SessionStart`): a
 *   prompt typed at once would reach the model without the tools. So `ready` comes once its
 *   `tools/list` was answered, or after `hostToolsConnectTimeoutMs` with a `warning`
 *   (`host_tools_not_connected`): everything that types into the UI waits for `ready`.
 * - The host's commands (`/ase:enter <id>`, terminal-commands.ts): a `UserPromptSubmit` naming one
 *   is blocked (the model never sees it) and handed to the host (`TerminalHost.command`), whose
 *   answer the UI shows; no turn starts.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineSettings, PermissionDecision } from '../../../events/engine-input.js';
import { messageText } from '../../../events/message-text.js';
import { findAgent } from '../../core/agent-discovery.js';
import type { EngineCapabilities, EngineContext, EngineStartSpec } from '../../core/engine.js';
import { startHostToolsLoopback, type HostToolsLoopback } from '../../core/host-tools-loopback.js';
import { HOST_TOOL_SERVER, type HostToolCalls } from '../../core/host-tools.js';
import { HOST_TOOLS_CONNECT_TIMEOUT_MS, TerminalEngine, type TerminalLaunch } from '../../core/terminal-engine.js';
import { buildEnv } from '../../transport/env.js';
import type { HookCall } from '../../transport/hook-server.js';
import { JsonlTail } from '../../transport/jsonl-tail.js';
import { CLAUDE_CLI, CLAUDE_DEFAULT_PASS_ENV } from '../cli.js';
import { claudeToolName, withTrustedHostTools } from '../host-tools.js';
import { checkClaudeSettings, claudeOptionArgs, mergeClaudeOptions, parseClaudeOptions, type ClaudeEngineOptions, type ClaudePermissionMode } from '../options.js';
import { sessionArgs } from '../session-file.js';
import { writeHookFiles, type HookFiles } from './hook-settings.js';
import { parseTerminalCommand } from './terminal-commands.js';
import { TranscriptTranslator } from './transcript-translate.js';

/**
 * Claude Code may append the turn's last message to its transcript after it ran the Stop hook: the
 * hook names that message (`last_assistant_message`), and the engine reads until it has reported it,
 * this long at most, so the message comes before `turn_complete`.
 */
const STOP_TRANSCRIPT_WAIT_MS = 3_000;
const STOP_TRANSCRIPT_POLL_MS = 25;

export class ClaudeLocalEngine extends TerminalEngine<HookFiles> {
  protected readonly label = 'claude local engine';
  protected readonly submitDelayMs = 60;
  readonly #factoryOptions: ClaudeEngineOptions;
  #tail: JsonlTail | undefined;
  #translator = new TranscriptTranslator();
  /** This generation's host tools server (only when the session has tools); closed at the exit. */
  #loopback: HostToolsLoopback | undefined;
  #hostCalls: HostToolCalls | undefined;
  #toolsConnectTimeoutMs = HOST_TOOLS_CONNECT_TIMEOUT_MS;
  #ready = false;
  /** The texts of the assistant messages reported in this turn. */
  #turnTexts = new Set<string>();
  /**
   * This turn's prompt was read from the transcript: an interrupt's marker read before it belongs
   * to the turn before (the transcript is written behind the hooks), so it must not end this one.
   */
  #promptRead = false;
  /** The session id asked for (`--session-id` / `--resume`), then the one the CLI reported. */
  sessionId: string | undefined;

  constructor(context: EngineContext, options: ClaudeEngineOptions, capabilities: EngineCapabilities) {
    super(context, capabilities);
    this.#factoryOptions = parseClaudeOptions(options);
  }

  protected createHooks(): Promise<HookFiles> {
    return writeHookFiles();
  }

  protected async prepare(spec: EngineStartSpec, hooks: HookFiles): Promise<TerminalLaunch> {
    const base = mergeClaudeOptions(this.#factoryOptions, spec.options);
    checkClaudeSettings({ ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode }) });
    const toolbox = this.context.hostTools && this.context.hostTools.size > 0 ? this.context.hostTools : undefined;
    const chosen: ClaudeEngineOptions = {
      ...base,
      ...(spec.model !== undefined && { model: spec.model }),
      ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode as ClaudePermissionMode }),
    };
    const options = toolbox ? withTrustedHostTools(chosen, toolbox) : chosen;
    const toolArgs: string[] = [];
    if (toolbox) {
      this.#toolsConnectTimeoutMs = options.hostToolsConnectTimeoutMs ?? HOST_TOOLS_CONNECT_TIMEOUT_MS;
      this.#hostCalls = toolbox.calls();
      this.#loopback = await startHostToolsLoopback(this.#hostCalls);
      const mcpConfig = join(hooks.dir, 'mcp.json');
      await writeFile(mcpConfig, JSON.stringify({ mcpServers: { [HOST_TOOL_SERVER]: { type: 'http', url: this.#loopback.url } } }), { mode: 0o600 });
      toolArgs.push('--mcp-config', mcpConfig);
      const toolName = claudeToolName(toolbox);
      this.#translator = new TranscriptTranslator(toolName ? { toolName } : {});
    }
    const env = buildEnv({ allow: [...CLAUDE_DEFAULT_PASS_ENV, ...(options.passEnv ?? [])], set: options.env ?? {} });
    this.sessionId = spec.resumeToken ?? randomUUID();
    const configDir = env['CLAUDE_CONFIG_DIR'] ?? join(env['HOME'] ?? homedir(), '.claude');
    const args = [
      ...(spec.resumeToken ? sessionArgs(configDir, spec.workDir, spec.resumeToken) : ['--session-id', this.sessionId]),
      // The user's own `settings` option first: ours (the hooks) must be the one that counts.
      ...claudeOptionArgs({ ...options, settings: undefined }),
      '--settings',
      hooks.settingsPath,
      '--plugin-dir',
      hooks.pluginDir,
      ...toolArgs,
    ];
    const explicit = this.context.bin ?? options.bin;
    const location = await findAgent(CLAUDE_CLI, explicit !== undefined ? { bin: explicit } : {});
    return { file: location.file, args: [...location.args, ...args], env, ...(options.shutdown && { shutdown: options.shutdown }) };
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
    this.assertRunning('answerPermission');
    const call = this.pending.get(requestId);
    // Already answered in the terminal (reported as permission_cancelled): the first answer won.
    if (!call) return;
    this.pending.delete(requestId);
    const answer =
      decision.behavior === 'allow'
        ? {
            behavior: 'allow',
            ...(decision.updatedInput !== undefined && { updatedInput: decision.updatedInput }),
            ...(decision.updatedPermissions !== undefined && { updatedPermissions: decision.updatedPermissions }),
          }
        : { behavior: 'deny', message: decision.message ?? 'Denied by a remote client.', ...(decision.interrupt && { interrupt: true }) };
    call.reply({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: answer } });
  }

  /** The person at the terminal changes them with `/model` and Shift+Tab. */
  validateSettings(settings: EngineSettings): void {
    checkClaudeSettings(settings);
  }

  protected async onHook(call: HookCall): Promise<void> {
    const input = call.input;
    switch (input['hook_event_name']) {
      case 'SessionStart':
        await this.#identify(input);
        return call.reply();
      case 'UserPromptSubmit': {
        const command = parseTerminalCommand(input['prompt']);
        if (command) return this.#hostCommand(call, String(input['prompt']));
        this.#turnTexts.clear();
        this.#promptRead = false;
        this.busy = true;
        this.emit({ type: 'thinking', active: true });
        return call.reply();
      }
      case 'Stop':
        await this.#readUntilReported(input['last_assistant_message']);
        // An interrupt's marker may have ended the turn already (cancelled): one end per turn.
        if (this.busy) this.endTurn('completed', this.#translator.takeTurnUsage());
        return call.reply();
      case 'Notification':
        this.events.signOfLife();
        return call.reply();
      case 'PermissionRequest':
        return this.#ask(call);
      default:
        return call.reply();
    }
  }

  /** A host command: blocked before the model, answered by the host (its text shown in the UI). No turn. */
  async #hostCommand(call: HookCall, line: string): Promise<void> {
    const answer = this.context.terminal?.command
      ? await this.context.terminal.command(line).catch((error: unknown) => (error instanceof Error ? error.message : String(error)))
      : `${line.trim()}: no host here handles /ase commands`;
    call.reply({ decision: 'block', reason: answer });
  }

  async #identify(input: Record<string, unknown>): Promise<void> {
    const id = typeof input['session_id'] === 'string' ? input['session_id'] : undefined;
    const path = typeof input['transcript_path'] === 'string' ? input['transcript_path'] : undefined;
    if (!id) return;
    if (id !== this.sessionId) {
      this.emit({
        type: 'error',
        kind: 'protocol',
        message: `${this.label}: Claude Code runs session ${id}, not ${this.sessionId ?? 'the requested one'} (${String(input['source'] ?? 'unknown source')})`,
        retryable: true,
      });
    }
    this.sessionId = id;
    if (path && path !== this.#tail?.path) {
      await this.#tail?.close();
      // From the file's current end: what it holds was reported by the generation that wrote it.
      this.#tail = await JsonlTail.start({
        path,
        onLine: (value) => this.#onTranscriptLine(value),
      });
    }
    this.emit({ type: 'session_identified', resumeToken: id, ...(path !== undefined && { transcriptPath: path }) });
    if (!this.#ready) {
      this.#ready = true;
      // Not awaited: the hook is answered first (Claude Code may hold its MCP connection behind it),
      // and the hooks after it are not held up.
      this.readyOnceToolsListed(this.#loopback, this.#toolsConnectTimeoutMs);
    }
  }

  async #readUntilReported(lastText: unknown): Promise<void> {
    const deadline = this.context.now() + STOP_TRANSCRIPT_WAIT_MS;
    for (;;) {
      await this.#tail?.catchUp();
      // Not busy: the interrupt's marker ended the turn; the message named will not be written whole.
      if (!this.busy || typeof lastText !== 'string' || lastText === '' || this.#turnTexts.has(lastText) || this.context.now() >= deadline) return;
      await new Promise((resolve) => this.context.setTimeout(() => resolve(undefined), STOP_TRANSCRIPT_POLL_MS));
    }
  }

  #onTranscriptLine(value: unknown): void {
    for (const body of this.#translator.translate(value)) {
      if (body.type === 'message' && body.role === 'assistant') {
        this.#turnTexts.add(messageText(body));
      }
      // A tool ran while its dialog's hook still waited: the person at the terminal answered it.
      if (body.type === 'tool_result') this.withdrawPrompts('answered in the local terminal');
      if (body.type === 'message' && body.role === 'user') this.#promptRead = true;
      if (body.type === 'turn_complete') {
        // The marker of an interrupted turn; one that Stop already ended has nothing left to end.
        if (this.busy && this.#promptRead) this.endTurn(body.status === 'completed' ? 'completed' : 'cancelled', body.usage);
        continue;
      }
      this.emit(body);
    }
  }

  #ask(call: HookCall): void {
    // Claude Code ends the hook when the person answers the dialog in the terminal first.
    const suggestions = call.input['permission_suggestions'];
    this.raisePrompt(call, 'claude-local', () => 'answered in the local terminal', Array.isArray(suggestions) ? { suggestions } : {});
  }

  protected async onTerminalExit(): Promise<void> {
    await this.#tail?.close().catch(() => undefined);
    await this.#loopback?.close('the terminal UI exited').catch(() => undefined);
    this.withdrawPrompts('answered in the local terminal');
    if (this.busy) this.endTurn('cancelled', this.#translator.takeTurnUsage());
  }
}
