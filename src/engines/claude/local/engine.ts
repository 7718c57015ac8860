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
 *   to the new file.
 * - Output comes from the transcript JSONL (`transcript_path` of the hook), read from where it
 *   ended when this process started, mapped by the remote engine's translator (same ids).
 * - `UserPromptSubmit` / `Stop` bracket a turn typed in the terminal; `Stop` reads the transcript
 *   to its end before `turn_complete`, so every message of the turn is reported before it ends.
 * - `PermissionRequest`: the dialog is on screen and the hook waits; the engine reports a
 *   `permission_request`, and a remote answer (`answerPermission`) is the hook's output. When the
 *   person at the terminal answers first, Claude Code ends the hook (or the tool's result appears
 *   in the transcript): `permission_cancelled` "answered in the local terminal". First answer wins.
 * - The stop ends Claude Code's background shells too: they belong to the process that started
 *   them. The exit reads the transcript to its end before `exited`.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineSettings, PermissionDecision } from '../../../events/engine-input.js';
import { findAgent } from '../../core/agent-discovery.js';
import type { EngineCapabilities, EngineContext, EngineStartSpec } from '../../core/engine.js';
import { TerminalEngine, type TerminalLaunch } from '../../core/terminal-engine.js';
import { buildEnv } from '../../transport/env.js';
import type { HookCall } from '../../transport/hook-server.js';
import { JsonlTail } from '../../transport/jsonl-tail.js';
import { CLAUDE_CLI, CLAUDE_DEFAULT_PASS_ENV } from '../cli.js';
import { checkClaudeSettings, claudeOptionArgs, mergeClaudeOptions, parseClaudeOptions, type ClaudeEngineOptions, type ClaudePermissionMode } from '../options.js';
import { sessionArgs } from '../session-file.js';
import { writeHookFiles, type HookFiles } from './hook-settings.js';
import { TranscriptTranslator } from './transcript-translate.js';

export class ClaudeLocalEngine extends TerminalEngine<HookFiles> {
  protected readonly label = 'claude local engine';
  protected readonly submitDelayMs = 60;
  readonly #factoryOptions: ClaudeEngineOptions;
  #tail: JsonlTail | undefined;
  #translator = new TranscriptTranslator();
  #ready = false;
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
    const options: ClaudeEngineOptions = {
      ...base,
      ...(spec.model !== undefined && { model: spec.model }),
      ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode as ClaudePermissionMode }),
    };
    const env = buildEnv({ allow: [...CLAUDE_DEFAULT_PASS_ENV, ...(options.passEnv ?? [])], set: options.env ?? {} });
    this.sessionId = spec.resumeToken ?? randomUUID();
    const configDir = env['CLAUDE_CONFIG_DIR'] ?? join(env['HOME'] ?? homedir(), '.claude');
    const args = [
      ...(spec.resumeToken ? sessionArgs(configDir, spec.workDir, spec.resumeToken) : ['--session-id', this.sessionId]),
      // The user's own `settings` option first: ours (the hooks) must be the one that counts.
      ...claudeOptionArgs({ ...options, settings: undefined }),
      '--settings',
      hooks.settingsPath,
    ];
    const explicit = this.context.bin ?? options.bin;
    const location = await findAgent(CLAUDE_CLI, explicit !== undefined ? { bin: explicit } : {});
    return { file: location.file, args: [...location.args, ...args], env, ...(options.shutdown && { shutdown: options.shutdown }) };
  }

  protected override async closeTranscript(): Promise<void> {
    await this.#tail?.close();
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
      case 'UserPromptSubmit':
        this.busy = true;
        this.emit({ type: 'thinking', active: true });
        return call.reply();
      case 'Stop':
        await this.#tail?.catchUp();
        this.endTurn('completed', this.#translator.takeTurnUsage());
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
      this.emit({ type: 'ready' });
    }
  }

  #onTranscriptLine(value: unknown): void {
    for (const body of this.#translator.translate(value)) {
      // A tool ran while its dialog's hook still waited: the person at the terminal answered it.
      if (body.type === 'tool_result') this.#answeredLocally();
      this.emit(body);
    }
  }

  #ask(call: HookCall): void {
    const input = call.input;
    const requestId = this.nextRequestId('claude-local');
    this.pending.set(requestId, call);
    call.onHangUp(() => {
      if (this.pending.delete(requestId)) this.emit({ type: 'permission_cancelled', requestId, reason: 'answered in the local terminal' });
    });
    const suggestions = input['permission_suggestions'];
    this.emit({
      type: 'permission_request',
      requestId,
      toolName: typeof input['tool_name'] === 'string' ? input['tool_name'] : 'unknown',
      input: input['tool_input'] ?? {},
      ...(Array.isArray(suggestions) && { suggestions }),
    });
  }

  /** Every dialog still waiting on a remote answer was answered in the terminal. */
  #answeredLocally(): void {
    for (const [requestId, call] of this.pending) {
      this.pending.delete(requestId);
      call.reply();
      this.emit({ type: 'permission_cancelled', requestId, reason: 'answered in the local terminal' });
    }
  }

  protected async onTerminalExit(): Promise<void> {
    await this.#tail?.close().catch(() => undefined);
    this.#answeredLocally();
    if (this.busy) this.endTurn('cancelled', this.#translator.takeTurnUsage());
  }
}
