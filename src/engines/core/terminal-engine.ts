/**
 * What the local-mode engines share (claude/local, codex/local): the agent's own terminal UI in a
 * PTY (transport/pty-process.ts) handed to the host, watched through the CLI's hooks, which report
 * over a private unix socket (transport/hook-*.ts). The agent's words come from its own transcript,
 * never from the screen; that part, the command line and the hooks' meaning are each engine's.
 *
 * Shared here: the start (hooks listening before the CLI runs; everything undone when the start
 * fails), `send` as a bracketed paste then Enter, `abort` as Esc, the stop (Esc when a turn runs,
 * then the PTY ladder: hang-up, SIGTERM, SIGKILL of the process group and every collected
 * descendant), hook calls handled one at a time in arrival order, and the exit (the engine reports
 * what the last moments wrote, then the terminal is detached, the hook directory removed, `exited`).
 *
 * And `ready` with host tools: both terminal UIs take input before they have connected their MCP
 * servers (Claude Code ~0.9 s after its ❯, Codex ~1.1 s after its prompt, longer on a loaded
 * machine), and a prompt typed meanwhile reaches the model without the tools. So `ready` (after
 * which the host types: `send`, a sub-agent's result) waits until the agent listed them
 * (`HostToolsLoopback.toolsListed`), at most the engine's `hostToolsConnectTimeoutMs`; then it
 * comes with a `host_tools_not_connected` warning. A `send` during the wait is typed after it.
 */
import { AseError } from '../../errors.js';
import type { AgentEventBody } from '../../events/agent-event.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import type { ProcessExit, ShutdownOptions } from '../transport/process-supervisor.js';
import { HookServer, type HookCall } from '../transport/hook-server.js';
import { spawnPty, type PtyProcess } from '../transport/pty-process.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineContext, EngineStartSpec, TerminalPort } from './engine.js';
import { EngineEvents } from './engine-events.js';
import type { HostToolsLoopback } from './host-tools-loopback.js';

/** Terminal size when the host has none to offer. */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
/** After Esc, how long stop() lets the agent write the interrupted turn before hanging up. */
const STOP_INTERRUPT_MS = 300;
/** How long `ready` waits for the agent to list the host tools, unless `hostToolsConnectTimeoutMs` says otherwise. */
export const HOST_TOOLS_CONNECT_TIMEOUT_MS = 15_000;

/** The engine's hook directory: where the socket is, and how it goes away. */
export interface TerminalHooks {
  socketPath: string;
  remove(): Promise<void>;
}

/** What to run in the PTY. */
export interface TerminalLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  shutdown?: ShutdownOptions;
}

export abstract class TerminalEngine<H extends TerminalHooks = TerminalHooks> implements AgentEngine {
  readonly capabilities: EngineCapabilities;
  protected readonly context: EngineContext;
  protected readonly events: EngineEvents;
  protected spec: EngineStartSpec | undefined;
  /** Between a prompt the terminal UI took and its turn end. */
  protected busy = false;
  /** Permission hooks waiting on a remote answer, by request id. */
  protected readonly pending = new Map<string, HookCall>();
  #pty: PtyProcess | undefined;
  #hooks: H | undefined;
  #server: HookServer | undefined;
  #spawning: Promise<void> | undefined;
  #stopRequested = false;
  #stopping: Promise<void> | undefined;
  #asks = 0;
  /** Hook calls are handled one at a time, in arrival order (a Stop must not overtake a SessionStart). */
  #hookChain: Promise<void> = Promise.resolve();
  /** Ends the wait for the host tools without `ready` (the terminal UI exited meanwhile). */
  #stopWaitingForTools: (() => void) | undefined;
  /** While `ready` waits for the host tools: settles when that wait ends (`send` types after it). */
  #toolsWait: Promise<unknown> | undefined;

  /** How errors name the engine: `claude local engine`. */
  protected abstract readonly label: string;
  /** Between a pasted message and the Enter that submits it (the terminal UI reads them as separate keys). */
  protected abstract readonly submitDelayMs: number;

  constructor(context: EngineContext, capabilities: EngineCapabilities) {
    this.context = context;
    this.events = new EngineEvents(context);
    this.capabilities = capabilities;
  }

  /** Creates the private hook directory (with whatever the CLI reads to find the hooks). */
  protected abstract createHooks(): Promise<H>;
  /** Everything before the spawn: options, the command line, the transcript to follow. */
  protected abstract prepare(spec: EngineStartSpec, hooks: H): Promise<TerminalLaunch>;
  /** One hook call; reply to it (now or, for a permission, later). */
  protected abstract onHook(call: HookCall): Promise<void>;
  /** The PTY is gone: report what the last moments wrote, close prompts and a running turn. */
  protected abstract onTerminalExit(): Promise<void>;
  /** A terminal UI keeps its settings; the engine only checks them (they apply at the next start). */
  abstract validateSettings(settings: EngineSettings): void;
  abstract answerPermission(requestId: string, decision: PermissionDecision): Promise<void>;

  /** The PTY runs (and is attached): what the engine reports now. */
  protected started(): void {}
  /** Closes the transcript being followed, when the start failed or the PTY never ran. */
  protected async closeTranscript(): Promise<void> {}
  /** The PTY as the host sees it (an engine may put itself between keystrokes and the CLI). */
  protected hostPort(pty: PtyProcess): TerminalPort {
    return pty;
  }

  /** The PTY while it runs (tests and hosts without an `EngineContext.terminal`). */
  get terminal(): PtyProcess | undefined {
    return this.#pty;
  }

  get pid(): number | undefined {
    return this.#pty?.pid;
  }

  /** Whether stop() was called. */
  protected get stopRequested(): boolean {
    return this.#stopRequested;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    if (this.spec || this.#stopRequested) throw new AseError('INVALID_INPUT', `${this.label}: already started or stopped`);
    this.spec = spec;
    this.events.bind(spec.gen);
    const spawning = this.#launch(spec);
    this.#spawning = spawning.catch(() => undefined);
    try {
      await spawning;
    } catch (error) {
      await this.closeTranscript().catch(() => undefined);
      await this.#cleanUp();
      throw this.events.startFailed(error);
    }
  }

  async #launch(spec: EngineStartSpec): Promise<void> {
    const hooks = await this.createHooks();
    this.#hooks = hooks;
    this.#server = await HookServer.listen(hooks.socketPath, (call) => {
      this.#hookChain = this.#hookChain.then(() => this.onHook(call)).catch(() => undefined);
    });
    const launch = await this.prepare(spec, hooks);
    if (this.#stopRequested) throw new AseError('ABORTED', `${this.label}: stopped while starting`);
    const size = this.context.terminal?.size() ?? DEFAULT_SIZE;
    const pty = await spawnPty({
      ...launch,
      cwd: spec.workDir,
      cols: size.cols,
      rows: size.rows,
      ...(this.context.processes && { observer: this.context.processes }),
    });
    this.#pty = pty;
    void pty.exited.then((exit) => this.#onExit(exit));
    this.context.terminal?.attach(spec.gen, this.hostPort(pty));
    this.started();
  }

  /**
   * Types `message` into the terminal as a paste, then Enter. Sent while `ready` still waits for the
   * host tools, it is typed when that wait ends (so it too reaches a model that has them).
   */
  async send(message: UserMessage): Promise<void> {
    this.assertRunning('send');
    await this.#toolsWait;
    const pty = this.assertRunning('send');
    pty.write(`\x1b[200~${message.text}\x1b[201~`);
    await new Promise((resolve) => this.context.setTimeout(() => resolve(undefined), this.submitDelayMs));
    pty.write('\r');
  }

  /** Esc: the interrupt key of both terminal UIs. */
  async abort(): Promise<void> {
    this.assertRunning('abort').write('\x1b');
  }

  /** Checked and accepted; the running terminal UI keeps its own settings until the next start. */
  async configure(settings: EngineSettings): Promise<void> {
    this.assertRunning('configure');
    this.validateSettings(settings);
  }

  stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopping ??= (async () => {
      await this.#spawning;
      const pty = this.#pty;
      if (!pty || this.events.exited) {
        await this.closeTranscript().catch(() => undefined);
        await this.#cleanUp();
        return;
      }
      if (this.busy && !pty.exit) {
        pty.write('\x1b');
        await new Promise((resolve) => setTimeout(resolve, STOP_INTERRUPT_MS));
      }
      await pty.stop();
      await this.events.exitedEmitted;
    })();
    return this.#stopping;
  }

  protected assertRunning(what: string): PtyProcess {
    if (!this.#pty || this.events.exited || this.#stopRequested) {
      throw new AseError('ENGINE_NOT_RUNNING', `${this.label}: ${what}() while the engine is not running`);
    }
    return this.#pty;
  }

  protected emit(body: AgentEventBody): void {
    this.events.emit(body);
  }

  /** A request id unique to this generation: `<prefix>-<gen>-<n>`. */
  #nextRequestId(prefix: string): string {
    return `${prefix}-${this.spec?.gen ?? 0}-${++this.#asks}`;
  }

  /**
   * A permission hook waits: reported as a `permission_request` until answered (`answerPermission`),
   * withdrawn, or hung up by the CLI (then `permission_cancelled` with `hangUpReason()`).
   */
  protected raisePrompt(call: HookCall, prefix: string, hangUpReason: () => string, extra: { suggestions?: unknown[] } = {}): void {
    const requestId = this.#nextRequestId(prefix);
    this.pending.set(requestId, call);
    call.onHangUp(() => {
      if (this.pending.delete(requestId)) this.emit({ type: 'permission_cancelled', requestId, reason: hangUpReason() });
    });
    const input = call.input;
    const tool = this.promptedTool(typeof input['tool_name'] === 'string' ? input['tool_name'] : 'unknown', input['tool_input'] ?? {});
    this.emit({ type: 'permission_request', requestId, toolName: tool.toolName, input: tool.input, ...extra });
  }

  /** The tool a permission hook names, as this engine reports that tool everywhere else (the hook may use another name). */
  protected promptedTool(toolName: string, input: unknown): { toolName: string; input: unknown } {
    return { toolName, input };
  }

  /** Every prompt still waiting: its hook returns no decision, and the request is `permission_cancelled` with `reason`. */
  protected withdrawPrompts(reason: string): void {
    for (const [requestId, call] of this.pending) {
      this.pending.delete(requestId);
      call.reply();
      this.emit({ type: 'permission_cancelled', requestId, reason });
    }
  }

  /**
   * `ready` now without host tools (`loopback` undefined); with them once the agent listed them, or
   * after `timeoutMs` with a `host_tools_not_connected` warning; never if the terminal UI exits first.
   * Returns at once: the wait runs on its own (not in the hook chain, whose hooks it must not hold).
   */
  protected readyOnceToolsListed(loopback: HostToolsLoopback | undefined, timeoutMs: number): void {
    if (!loopback) {
      this.emit({ type: 'ready' });
      return;
    }
    this.#toolsWait = new Promise<'listed' | 'timed out' | 'gone'>((resolve) => {
      const timer = this.context.setTimeout(() => settle('timed out'), timeoutMs);
      const settle = (how: 'listed' | 'timed out' | 'gone'): void => {
        this.context.clearTimeout(timer);
        this.#stopWaitingForTools = undefined;
        resolve(how);
      };
      this.#stopWaitingForTools = () => settle('gone');
      void loopback.toolsListed.then(() => settle('listed'));
    }).then((outcome) => {
      if (outcome === 'gone') return;
      if (outcome === 'timed out') {
        this.emit({
          type: 'warning',
          code: 'host_tools_not_connected',
          message: `${this.label}: the agent did not list the host tools within ${timeoutMs / 1000} s (its MCP connection to them); ready anyway, but a prompt now may reach the model without them`,
        });
      }
      this.emit({ type: 'ready' });
    });
  }

  /** Ends a turn the transcript did not end (the PTY went away mid-turn). */
  protected endTurn(status: 'completed' | 'cancelled', usage: Extract<AgentEventBody, { type: 'turn_complete' }>['usage']): void {
    this.busy = false;
    this.emit({ type: 'thinking', active: false });
    this.emit({ type: 'turn_complete', status, usage });
  }

  async #onExit(exit: ProcessExit): Promise<void> {
    this.#stopWaitingForTools?.();
    // Whatever the last moments wrote is reported before the exit.
    await this.#hookChain;
    await this.onTerminalExit();
    if (this.spec) this.context.terminal?.detach(this.spec.gen);
    await this.#cleanUp();
    this.emit({
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
