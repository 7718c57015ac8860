/**
 * The claude engine in local mode: Claude Code's own terminal UI in a PTY, watched, not driven.
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
 * - `send` types into the terminal (a bracketed paste + Enter), `abort` presses Esc.
 * - `stop` presses Esc when a turn runs, then the PTY ladder (hang-up, SIGTERM, SIGKILL of the
 *   process group and every collected descendant: Claude Code's background shells belong to the
 *   process that started them and end with it), reads the transcript to its end, then `exited`.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AseError } from '../../../errors.js';
import type { AgentEventBody } from '../../../events/agent-event.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../../events/engine-input.js';
import { findAgent } from '../../core/agent-discovery.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec } from '../../core/engine.js';
import { EngineEvents } from '../../core/engine-events.js';
import { buildEnv } from '../../transport/env.js';
import { JsonlTail } from '../../transport/jsonl-tail.js';
import type { ProcessExit } from '../../transport/process-supervisor.js';
import { spawnPty, type PtyProcess } from '../../transport/pty-process.js';
import { CLAUDE_CLI, CLAUDE_DEFAULT_PASS_ENV } from '../cli.js';
import { checkClaudeSettings, claudeOptionArgs, mergeClaudeOptions, parseClaudeOptions, type ClaudeEngineOptions, type ClaudePermissionMode } from '../options.js';
import { sessionArgs } from '../session-file.js';
import { HookServer, type HookCall } from '../../transport/hook-server.js';
import { writeHookFiles, type HookFiles } from './hook-settings.js';
import { TranscriptTranslator } from './transcript-translate.js';

/** Terminal size when the host has none to offer. */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
/** After Esc, how long stop() lets Claude Code write the interrupted turn before hanging up. */
const STOP_INTERRUPT_MS = 300;
/** Between a pasted message and the Enter that submits it (the TUI handles them as separate keys). */
const SUBMIT_DELAY_MS = 60;

export class ClaudeLocalEngine implements AgentEngine {
  readonly capabilities: EngineCapabilities;
  readonly #context: EngineContext;
  readonly #factoryOptions: ClaudeEngineOptions;
  readonly #events: EngineEvents;
  #spec: EngineStartSpec | undefined;
  #pty: PtyProcess | undefined;
  #files: HookFiles | undefined;
  #server: HookServer | undefined;
  #tail: JsonlTail | undefined;
  #translator = new TranscriptTranslator();
  #spawning: Promise<void> | undefined;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  #ready = false;
  #busy = false;
  /** The session id asked for (`--session-id` / `--resume`), then the one the CLI reported. */
  sessionId: string | undefined;
  readonly #pending = new Map<string, HookCall>();
  #asks = 0;
  /** Hook calls are handled one at a time, in arrival order (a Stop must not overtake a SessionStart). */
  #hookChain: Promise<void> = Promise.resolve();

  constructor(context: EngineContext, options: ClaudeEngineOptions, capabilities: EngineCapabilities) {
    this.#context = context;
    this.#factoryOptions = parseClaudeOptions(options);
    this.#events = new EngineEvents(context);
    this.capabilities = capabilities;
  }

  /** The PTY while it runs (tests and hosts without an `EngineContext.terminal`). */
  get terminal(): PtyProcess | undefined {
    return this.#pty;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#spec || this.#stopRequested) throw new AseError('INVALID_INPUT', 'claude local engine: already started or stopped');
    this.#spec = spec;
    this.#events.bind(spec.gen);
    const spawning = this.#spawn(spec);
    this.#spawning = spawning.catch(() => undefined);
    try {
      await spawning;
    } catch (error) {
      await this.#cleanUp();
      throw this.#events.startFailed(error);
    }
  }

  async #spawn(spec: EngineStartSpec): Promise<void> {
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
    this.#files = await writeHookFiles();
    this.#server = await HookServer.listen(this.#files.socketPath, (call) => {
      this.#hookChain = this.#hookChain.then(() => this.#onHook(call)).catch(() => undefined);
    });
    const args = [
      ...(spec.resumeToken ? sessionArgs(configDir, spec.workDir, spec.resumeToken) : ['--session-id', this.sessionId]),
      // The user's own `settings` option first: ours (the hooks) must be the one that counts.
      ...claudeOptionArgs({ ...options, settings: undefined }),
      '--settings',
      this.#files.settingsPath,
    ];
    const explicit = this.#context.bin ?? options.bin;
    const location = await findAgent(CLAUDE_CLI, explicit !== undefined ? { bin: explicit } : {});
    if (this.#stopRequested) throw new AseError('ABORTED', 'claude local engine: stopped while starting');
    const size = this.#context.terminal?.size() ?? DEFAULT_SIZE;
    const pty = await spawnPty({
      file: location.file,
      args: [...location.args, ...args],
      cwd: spec.workDir,
      env,
      cols: size.cols,
      rows: size.rows,
      ...(options.shutdown && { shutdown: options.shutdown }),
      ...(this.#context.processes && { observer: this.#context.processes }),
    });
    this.#pty = pty;
    this.#context.terminal?.attach(spec.gen, pty);
    void pty.exited.then((exit) => this.#onExit(exit));
  }

  /** Types `message` into the terminal as a paste, then Enter. */
  async send(message: UserMessage): Promise<void> {
    const pty = this.#assertRunning('send');
    pty.write(`\x1b[200~${message.text}\x1b[201~`);
    await new Promise((resolve) => this.#context.setTimeout(() => resolve(undefined), SUBMIT_DELAY_MS));
    pty.write('\r');
  }

  /** Esc: Claude Code's interrupt key. */
  async abort(): Promise<void> {
    this.#assertRunning('abort').write('\x1b');
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
    const call = this.#pending.get(requestId);
    // Already answered in the terminal (reported as permission_cancelled): the first answer won.
    if (!call) return;
    this.#pending.delete(requestId);
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

  /**
   * A running terminal UI keeps its model and permission mode (the person at the terminal changes
   * them with `/model` and Shift+Tab); the change is stored by the session and applies at the next
   * start, so it is accepted here without touching the terminal.
   */
  async configure(settings: EngineSettings): Promise<void> {
    this.#assertRunning('configure');
    checkClaudeSettings(settings);
  }

  validateSettings(settings: EngineSettings): void {
    checkClaudeSettings(settings);
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning;
      const pty = this.#pty;
      if (!pty || this.#events.exited) {
        await this.#cleanUp();
        return;
      }
      if (this.#busy && !pty.exit) {
        pty.write('\x1b');
        await new Promise((resolve) => setTimeout(resolve, STOP_INTERRUPT_MS));
      }
      await pty.stop();
      await this.#events.exitedEmitted;
    })();
    return this.#stopping;
  }

  #assertRunning(what: string): PtyProcess {
    if (!this.#pty || this.#events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `claude local engine: ${what}() while the engine is not running`);
    }
    return this.#pty;
  }

  #emit(body: AgentEventBody): void {
    this.#events.emit(body);
  }

  async #onHook(call: HookCall): Promise<void> {
    const input = call.input;
    switch (input['hook_event_name']) {
      case 'SessionStart':
        await this.#identify(input);
        return call.reply();
      case 'UserPromptSubmit':
        this.#busy = true;
        this.#emit({ type: 'thinking', active: true });
        return call.reply();
      case 'Stop':
        await this.#tail?.catchUp();
        this.#endTurn('completed');
        return call.reply();
      case 'Notification':
        this.#events.signOfLife();
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
      this.#emit({
        type: 'error',
        kind: 'protocol',
        message: `claude local engine: Claude Code runs session ${id}, not ${this.sessionId ?? 'the requested one'} (${String(input['source'] ?? 'unknown source')})`,
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
    this.#emit({ type: 'session_identified', resumeToken: id, ...(path !== undefined && { transcriptPath: path }) });
    if (!this.#ready) {
      this.#ready = true;
      this.#emit({ type: 'ready' });
    }
  }

  #onTranscriptLine(value: unknown): void {
    for (const body of this.#translator.translate(value)) {
      // A tool ran while its dialog's hook still waited: the person at the terminal answered it.
      if (body.type === 'tool_result') this.#answeredLocally();
      this.#emit(body);
    }
  }

  #ask(call: HookCall): void {
    const input = call.input;
    const requestId = `claude-local-${this.#spec?.gen ?? 0}-${++this.#asks}`;
    this.#pending.set(requestId, call);
    call.onHangUp(() => {
      if (this.#pending.delete(requestId)) this.#emit({ type: 'permission_cancelled', requestId, reason: 'answered in the local terminal' });
    });
    const suggestions = input['permission_suggestions'];
    this.#emit({
      type: 'permission_request',
      requestId,
      toolName: typeof input['tool_name'] === 'string' ? input['tool_name'] : 'unknown',
      input: input['tool_input'] ?? {},
      ...(Array.isArray(suggestions) && { suggestions }),
    });
  }

  /** Every dialog still waiting on a remote answer was answered in the terminal. */
  #answeredLocally(): void {
    for (const [requestId, call] of this.#pending) {
      this.#pending.delete(requestId);
      call.reply();
      this.#emit({ type: 'permission_cancelled', requestId, reason: 'answered in the local terminal' });
    }
  }

  #endTurn(status: 'completed' | 'cancelled'): void {
    const usage = this.#translator.takeTurnUsage();
    if (!this.#busy && status === 'cancelled') return;
    this.#busy = false;
    this.#emit({ type: 'thinking', active: false });
    this.#emit({ type: 'turn_complete', status, usage });
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    // Whatever the last moments wrote is reported before the exit.
    await this.#hookChain;
    await this.#tail?.close().catch(() => undefined);
    this.#answeredLocally();
    if (this.#busy) this.#endTurn('cancelled');
    if (this.#spec) this.#context.terminal?.detach(this.#spec.gen);
    await this.#cleanUp();
    this.#emit({
      type: 'exited',
      code: exit.code,
      signal: exit.signal,
      reason: this.#stopRequested ? 'stopped' : exit.code === 0 ? 'quit in the terminal' : 'exited',
    });
  }

  async #cleanUp(): Promise<void> {
    await this.#server?.close().catch(() => undefined);
    await this.#files?.remove().catch(() => undefined);
  }
}
