/**
 * The codex engine in local mode: Codex's own terminal UI in a PTY, watched, not driven. The same
 * shape as Claude's local engine (claude/local/engine.ts); what differs is Codex's.
 *
 * - Start: `codex` (a new thread) or `codex resume <thread id>` with our hooks as `-c` overrides
 *   (hook-config.ts) reporting over a private unix socket, in a PTY handed to the host
 *   (`EngineContext.terminal`). The daemon the terminal UI would otherwise start and leave behind
 *   (reference codex.md §9.11) is turned off (`features.daemon_auto_start=false`).
 * - Resume: the thread's rollout is found by its id and followed from its current end, so what it
 *   holds (reported by the generation that wrote it) is not reported again. A thread that never ran
 *   a turn has no rollout: Codex cannot resume it, so a new thread starts; it had nothing to lose,
 *   and the session is told of the new id (`session_identified`) with a warning.
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
 * - `send` types into the terminal (a bracketed paste + Enter), `abort` presses Esc.
 * - `stop` presses Esc when a turn runs, then the PTY ladder (hang-up, SIGTERM, SIGKILL of the
 *   process group and every collected descendant), reads the rollout to its end, then `exited`.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AseError } from '../../../errors.js';
import type { AgentEventBody } from '../../../events/agent-event.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../../events/engine-input.js';
import { findAgent } from '../../core/agent-discovery.js';
import { readAgentVersion, versionWarning } from '../../core/agent-version.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec, TerminalPort } from '../../core/engine.js';
import { EngineEvents } from '../../core/engine-events.js';
import { buildEnv } from '../../transport/env.js';
import { createHookDir, type HookDir } from '../../transport/hook-dir.js';
import { HookServer, type HookCall } from '../../transport/hook-server.js';
import type { ProcessExit } from '../../transport/process-supervisor.js';
import { spawnPty, type PtyProcess } from '../../transport/pty-process.js';
import { CODEX_CLI } from '../binary.js';
import { configOverrideArgs } from '../config-overrides.js';
import { checkCodexSettings, codexEnvAllow, mergeCodexOptions, type CodexApprovalPolicy, type CodexEngineOptions } from '../options.js';
import { findRollout } from '../rollout/find-rollout.js';
import { readRollout } from '../rollout/read-rollout.js';
import { RolloutTailer } from '../rollout/tailer.js';
import type { TailedEvent } from '../rollout/cursor.js';
import { codexHookArgs } from './hook-config.js';

/** Terminal size when the host has none to offer. */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
/** After Esc, how long stop() lets Codex write the interrupted turn before hanging up. */
const STOP_INTERRUPT_MS = 300;
/**
 * Between a pasted message and the Enter that submits it. Codex treats an Enter that follows
 * typed text too closely as part of a paste (a newline, not a submit).
 */
const SUBMIT_DELAY_MS = 150;

export class CodexLocalEngine implements AgentEngine {
  readonly capabilities: EngineCapabilities;
  readonly #context: EngineContext;
  readonly #factoryOptions: CodexEngineOptions;
  readonly #events: EngineEvents;
  #spec: EngineStartSpec | undefined;
  #pty: PtyProcess | undefined;
  #hooks: HookDir | undefined;
  #server: HookServer | undefined;
  #tail: RolloutTailer | undefined;
  #spawning: Promise<void> | undefined;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  #busy = false;
  /** The thread asked for (`resume`), then the one Codex reported. */
  threadId: string | undefined;
  /** The CLI's version, once read. */
  version: string | undefined;
  readonly #pending = new Map<string, HookCall>();
  #asks = 0;
  /** Hook calls are handled one at a time, in arrival order (a Stop must not overtake a SessionStart). */
  #hookChain: Promise<void> = Promise.resolve();

  constructor(context: EngineContext, options: CodexEngineOptions, capabilities: EngineCapabilities) {
    this.#context = context;
    this.#factoryOptions = options;
    this.#events = new EngineEvents(context);
    this.capabilities = capabilities;
  }

  /** The PTY while it runs (tests and hosts without an `EngineContext.terminal`). */
  get terminal(): PtyProcess | undefined {
    return this.#pty;
  }

  get pid(): number | undefined {
    return this.#pty?.pid;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.#spec || this.#stopRequested) throw new AseError('INVALID_INPUT', 'codex local engine: already started or stopped');
    this.#spec = spec;
    this.#events.bind(spec.gen);
    const spawning = this.#spawn(spec);
    this.#spawning = spawning.catch(() => undefined);
    try {
      await spawning;
    } catch (error) {
      await this.#tail?.close().catch(() => undefined);
      await this.#cleanUp();
      throw this.#events.startFailed(error);
    }
  }

  async #spawn(spec: EngineStartSpec): Promise<void> {
    const options = mergeCodexOptions('codex', this.#factoryOptions, spec.options);
    checkCodexSettings('codex', { ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode }) });
    const env = buildEnv({ allow: codexEnvAllow(options), set: options.env ?? {} });
    const codexHome = env['CODEX_HOME'] ?? join(env['HOME'] ?? homedir(), '.codex');
    const model = spec.model ?? options.model;
    const approvalPolicy = (spec.permissionMode as CodexApprovalPolicy | undefined) ?? options.approvalPolicy;

    let resume: string | undefined;
    if (spec.resumeToken !== undefined) {
      const rollout = findRollout(codexHome, spec.resumeToken);
      if (rollout) {
        resume = spec.resumeToken;
        this.threadId = resume;
        // From the rollout's current end: what it holds was reported by the generation that wrote it.
        const { cursor } = await readRollout(rollout);
        this.#tail = new RolloutTailer({ path: rollout, from: cursor, onEvent: (tailed) => this.#onRollout(tailed) });
      } else {
        this.#emit({
          type: 'warning',
          code: 'thread_not_resumable',
          message: `codex local engine: thread ${spec.resumeToken} has no rollout under ${codexHome} (it never ran a turn): a new thread starts`,
        });
      }
    }

    this.#hooks = await createHookDir('ase-cx-');
    this.#server = await HookServer.listen(this.#hooks.socketPath, (call) => {
      this.#hookChain = this.#hookChain.then(() => this.#onHook(call)).catch(() => undefined);
    });
    const args = [
      ...(resume !== undefined ? ['resume', resume] : []),
      ...configOverrideArgs(options.config),
      ...codexHookArgs(this.#hooks.command),
      '-c',
      'features.daemon_auto_start=false',
      ...(model !== undefined ? ['-m', model] : []),
      ...(approvalPolicy !== undefined ? ['-a', approvalPolicy] : []),
      ...(options.sandbox !== undefined ? ['-s', options.sandbox] : []),
      ...(options.extraArgs ?? []),
    ];
    const explicit = this.#context.bin ?? options.bin;
    const location = await findAgent(CODEX_CLI, explicit !== undefined ? { bin: explicit } : {});
    // The bundled `rg` lives next to the binary; Codex finds it on PATH.
    if (location.pathDir) env['PATH'] = [location.pathDir, env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
    if (this.#stopRequested) throw new AseError('ABORTED', 'codex local engine: stopped while starting');
    void readAgentVersion(CODEX_CLI, location).then((info) => {
      this.version ??= info.version;
      const warning = versionWarning(CODEX_CLI, info.version, location.where);
      if (warning) this.#emit({ type: 'warning', code: 'untested_version', message: `codex local engine: ${warning}` });
    });
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
    void pty.exited.then((exit) => this.#onExit(exit));
    this.#context.terminal?.attach(spec.gen, this.#hostPort(pty));
    // Codex names the thread only with its first prompt: a resumed one is known now.
    if (resume !== undefined) this.#emit({ type: 'session_identified', resumeToken: resume, transcriptPath: this.#tail!.path });
    this.#emit({ type: 'ready' });
  }

  /** Types `message` into the terminal as a paste, then Enter. */
  async send(message: UserMessage): Promise<void> {
    const pty = this.#assertRunning('send');
    pty.write(`\x1b[200~${message.text}\x1b[201~`);
    await new Promise((resolve) => this.#context.setTimeout(() => resolve(undefined), SUBMIT_DELAY_MS));
    pty.write('\r');
  }

  /** Esc: Codex's interrupt key. */
  async abort(): Promise<void> {
    this.#assertRunning('abort').write('\x1b');
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    const pty = this.#assertRunning('answerPermission');
    const call = this.#pending.get(requestId);
    // Taken over in the terminal (reported as permission_cancelled): the first answer won.
    if (!call) return;
    this.#pending.delete(requestId);
    // Codex fails a hook closed on updatedInput / updatedPermissions / interrupt: only behavior and message go.
    const answer = decision.behavior === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: decision.message ?? 'Denied by a remote client.' };
    call.reply({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: answer } });
    if (decision.behavior === 'deny' && decision.interrupt) pty.write('\x1b');
  }

  /**
   * A running terminal UI keeps its model and approval policy (the person at the terminal changes
   * them with `/model` and `/approvals`); the change is stored by the session and applies at the
   * next start, so it is accepted here without touching the terminal.
   */
  async configure(settings: EngineSettings): Promise<void> {
    this.#assertRunning('configure');
    checkCodexSettings('codex', settings);
  }

  validateSettings(settings: EngineSettings): void {
    checkCodexSettings('codex', settings);
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning;
      const pty = this.#pty;
      if (!pty || this.#events.exited) {
        await this.#tail?.close().catch(() => undefined);
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

  /**
   * The PTY as the host sees it: keystrokes while a permission hook waits hand the prompt to the
   * terminal (see the file comment) instead of reaching Codex.
   */
  #hostPort(pty: PtyProcess): TerminalPort {
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
        if (this.#pending.size > 0) this.#handToTerminal();
        else pty.write(data);
      },
    };
  }

  #assertRunning(what: string): PtyProcess {
    if (!this.#pty || this.#events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `codex local engine: ${what}() while the engine is not running`);
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
        this.#identify(input);
        return call.reply();
      case 'UserPromptSubmit':
        this.#busy = true;
        this.#emit({ type: 'thinking', active: true });
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
      this.#emit({
        type: 'error',
        kind: 'protocol',
        message: `codex local engine: Codex runs thread ${id}, not ${this.threadId} (${String(input['source'] ?? 'unknown source')})`,
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
    this.#emit({ type: 'session_identified', resumeToken: id, ...(path !== undefined && { transcriptPath: path }) });
  }

  #onRollout({ event }: TailedEvent): void {
    // The hooks name the thread (with the path Codex reported); the rollout's own copy adds nothing.
    if (event.type === 'session_identified') return;
    if (event.type === 'turn_complete') {
      this.#busy = false;
      this.#emit({ type: 'thinking', active: false });
    }
    this.#emit(event);
  }

  #ask(call: HookCall): void {
    const input = call.input;
    const requestId = `codex-local-${this.#spec?.gen ?? 0}-${++this.#asks}`;
    this.#pending.set(requestId, call);
    // Codex ended the hook (the turn was interrupted with Esc, or the process is going away).
    call.onHangUp(() => {
      const reason = this.#stopRequested ? 'the terminal UI is stopping' : 'the turn was interrupted in the local terminal';
      if (this.#pending.delete(requestId)) this.#emit({ type: 'permission_cancelled', requestId, reason });
    });
    this.#emit({
      type: 'permission_request',
      requestId,
      toolName: typeof input['tool_name'] === 'string' ? input['tool_name'] : 'unknown',
      input: input['tool_input'] ?? {},
    });
  }

  /** Every prompt still waiting on a remote answer goes to Codex's own dialog. */
  #handToTerminal(): void {
    for (const [requestId, call] of this.#pending) {
      this.#pending.delete(requestId);
      call.reply();
      this.#emit({ type: 'permission_cancelled', requestId, reason: 'answered in the local terminal' });
    }
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    // Whatever the last moments wrote is reported before the exit.
    await this.#hookChain;
    await this.#tail?.catchUp().catch(() => undefined);
    await this.#tail?.close().catch(() => undefined);
    for (const [requestId, call] of this.#pending) {
      this.#pending.delete(requestId);
      call.reply();
      this.#emit({ type: 'permission_cancelled', requestId, reason: 'the terminal UI exited' });
    }
    if (this.#busy) {
      this.#busy = false;
      this.#emit({ type: 'thinking', active: false });
      // The rollout had no end for this turn: its usage is unknown here.
      this.#emit({ type: 'turn_complete', status: 'cancelled', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } });
    }
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
    await this.#hooks?.remove().catch(() => undefined);
  }
}
