/**
 * A scripted AgentEngine for tests, the model-based harness and demos. It plays a `FakeScript`
 * with the runtime's clock (so a SimulatedClock drives it deterministically), stamps and
 * validates every event like a real engine, and records what it was asked to do.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { AseError } from '../../errors.js';
import { ZERO_USAGE, type AgentEventBody } from '../../events/agent-event.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import type {
  AgentEngine,
  AgentEventListener,
  EngineCapabilities,
  EngineContext,
  EngineStartSpec,
} from '../core/engine.js';
import { engineTier } from '../core/runtime-tier.js';
import { echoTurn, FakeScriptSchema, SMALL_USAGE, type FakeScript, type FakeStep } from './script.js';
import { EngineEvents } from '../core/engine-events.js';
import type { HostToolCalls } from '../core/host-tools.js';

type Timer = { readonly id: number };
type AskStep = Extract<FakeStep, { ask: unknown }>;

export const FAKE_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: true,
  permissions: true,
  interrupt: true,
  resume: true,
  localMode: true, // it can pretend
  transcriptTail: false,
  cost: true,
  setModel: true,
  setPermissionMode: true,
  // `callTool` steps run the session's host tools.
  hostTools: true,
  // Scripted: every signal is the script's own, reported exactly; it changes no files.
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'authoritative', cost: 'authoritative', fileChanges: 'absent' }),
});

const DEFAULT_KILL_AFTER_MS = 50;

/** The turn being played: its remaining steps, the pending step timer, or the ask it waits on. */
interface Turn {
  steps: FakeStep[];
  timer?: Timer;
  waiting?: { requestId: string; callId: string; step: AskStep };
}

export class FakeEngine implements AgentEngine {
  /** Also static, so a custom factory can declare them without an instance. */
  static readonly capabilities = FAKE_CAPABILITIES;
  readonly capabilities = FAKE_CAPABILITIES;

  readonly #context: EngineContext;
  /** The factory's script, or the session's `engineOptions.script` once started. */
  #script: FakeScript;
  readonly #timers = new Set<Timer>();
  #spec: EngineStartSpec | undefined;
  #ready = false;
  #stopping: Promise<void> | undefined;
  #resolveStop: (() => void) | undefined;
  /** Sends waiting for the current turn to end (streamingInput). */
  readonly #queue: UserMessage[] = [];
  #turnsStarted = 0;
  #turn: Turn | undefined;
  /** permission_requests emitted via `inject()`; answering them only records the answer. */
  readonly #injectedAsks = new Set<string>();
  #nextId = 1;
  readonly #events: EngineEvents;
  /** The session's host tools, as `callTool` steps run them (made at start). */
  #hostCalls: HostToolCalls | undefined;

  readonly #sent: UserMessage[] = [];
  readonly #answers: { requestId: string; decision: PermissionDecision }[] = [];
  #aborts = 0;
  #stopped = false;
  readonly #configured: EngineSettings[] = [];
  #settings: { model: string | null; permissionMode: string | null } = { model: null, permissionMode: null };

  constructor(context: EngineContext, script: FakeScript = {}) {
    this.#context = context;
    // Invalid bodies throw, so a bad scripted body fails loudly where it was produced.
    this.#events = new EngineEvents(context, { onInvalid: 'throw' });
    this.#script = script;
  }

  /** Every message passed to `send()`, in order (including queued ones). */
  get sent(): readonly UserMessage[] {
    return this.#sent;
  }
  /** Every answer that matched a pending permission request. */
  get answers(): readonly { requestId: string; decision: PermissionDecision }[] {
    return this.#answers;
  }
  /** How many times `abort()` was called while the engine ran. */
  get aborts(): number {
    return this.#aborts;
  }
  /** Every settings change passed to `configure()`, in order. */
  get configured(): readonly EngineSettings[] {
    return this.#configured;
  }
  /**
   * The model and permission mode in effect: the start spec's runtime choice, else
   * `engineOptions.model` / `permissionMode`; then each `configure()` (`null` goes back to the
   * `engineOptions` one).
   */
  get settings(): { readonly model: string | null; readonly permissionMode: string | null } {
    return this.#settings;
  }
  /** The spec `start()` was called with. */
  get spec(): EngineStartSpec | undefined {
    return this.#spec;
  }
  /** Whether `stop()` was called. */
  get stopped(): boolean {
    return this.#stopped;
  }
  /** Whether `exited` was emitted (by a stop, crash, start failure or `inject`). */
  get exitedEmitted(): boolean {
    return this.#events.exited;
  }
  /** Errors thrown by listeners; they are caught so a broken listener cannot break the engine. */
  get listenerErrors(): readonly unknown[] {
    return this.#events.listenerErrors;
  }

  onEvent(listener: AgentEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  async start(spec: EngineStartSpec): Promise<void> {
    // One engine instance is one process for one generation: it is never restarted.
    if (this.#spec || this.#stopped) throw new AseError('INVALID_INPUT', 'fake engine: already started or stopped');
    // A session may bring its own script (`engineOptions.script`, e.g. from the command line or an example's argv).
    if (spec.options['script'] !== undefined) {
      const parsed = FakeScriptSchema.safeParse(spec.options['script']);
      if (!parsed.success) throw new AseError('INVALID_OPTIONS', `fake engine: engineOptions.script: ${parsed.error.message}`);
      this.#script = parsed.data;
    }
    // Like a real agent's spawn, a start in a directory that is not there fails (checked
    // synchronously, so a SimulatedClock run stays deterministic). A manual engine is a puppet the
    // test drives; it stands for no process and has no directory to run in.
    const found = this.#script.manual ? undefined : statSync(spec.workDir, { throwIfNoEntry: false });
    if (!this.#script.manual && !found?.isDirectory()) {
      const why = found === undefined ? 'does not exist' : found.isFile() ? 'is a file, not a directory' : 'is not a directory';
      throw new AseError('INVALID_OPTIONS', `fake engine: workDir ${spec.workDir} ${why}`, { details: { workDir: spec.workDir } });
    }
    this.#spec = spec;
    this.#hostCalls = this.#context.hostTools?.calls();
    const base = this.#optionSettings();
    this.#settings = { model: spec.model ?? base.model, permissionMode: spec.permissionMode ?? base.permissionMode };
    this.#events.bind(spec.gen);
    if (this.#script.manual) return;
    this.#schedule(this.#script.startDelayMs ?? 0, () => {
      const fail = this.#script.failStart;
      if (fail) {
        this.#emit({ type: 'error', kind: 'fatal', message: fail.message ?? 'fake engine: start failed', retryable: false });
        this.#emit({ type: 'exited', code: fail.code ?? 1, signal: null, reason: 'start failed' });
        return;
      }
      const resumeToken = this.#script.resumeToken ?? spec.resumeToken ?? randomUUID();
      this.#emit({ type: 'session_identified', resumeToken });
      this.#emit({ type: 'ready' });
      this.#ready = true;
      this.#startNextTurn();
    });
  }

  async send(message: UserMessage): Promise<void> {
    this.#assertRunning('send');
    this.#sent.push(message);
    if (this.#script.manual) return;
    this.#queue.push(message);
    this.#startNextTurn();
  }

  async abort(): Promise<void> {
    this.#assertRunning('abort');
    this.#aborts++;
    this.#hostCalls?.abortAll('the turn was aborted');
    const turn = this.#turn;
    if (this.#script.manual || this.#script.ignoreAbort || !turn) return;
    this.#endTurn(turn);
    this.#emit({ type: 'turn_complete', status: 'cancelled', usage: { ...ZERO_USAGE } });
    this.#startNextTurn();
  }

  async answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    this.#assertRunning('answerPermission');
    const turn = this.#turn;
    const waiting = turn?.waiting;
    if (turn && waiting?.requestId === requestId) {
      this.#answers.push({ requestId, decision });
      turn.waiting = undefined;
      const branch = decision.behavior === 'allow' ? waiting.step.onAllow : waiting.step.onDeny;
      turn.steps.unshift(...(branch ?? [defaultToolResult(waiting.callId, decision)]));
      this.#scheduleNextStep(turn);
    } else if (this.#injectedAsks.delete(requestId)) {
      this.#answers.push({ requestId, decision });
    } else {
      throw new AseError('INVALID_INPUT', `fake engine: no pending permission request "${requestId}"`);
    }
  }

  /** Records the change; it takes effect at once (the fake has no turn it would have to wait for). */
  async configure(settings: EngineSettings): Promise<void> {
    this.#assertRunning('configure');
    this.#configured.push(settings);
    const base = this.#optionSettings();
    if (settings.model !== undefined) this.#settings = { ...this.#settings, model: settings.model ?? base.model };
    if (settings.permissionMode !== undefined) this.#settings = { ...this.#settings, permissionMode: settings.permissionMode ?? base.permissionMode };
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  /**
   * Stamps and emits `body` right now (synchronously), in any mode: how `manual` tests route events
   * through the real runtime. An injected `exited` kills the engine like a real one.
   */
  inject(body: AgentEventBody): void {
    if (!this.#spec) throw new AseError('INVALID_INPUT', 'fake engine: inject() before start()');
    if (this.#events.exited) throw new AseError('ENGINE_NOT_RUNNING', 'fake engine: inject() after exited');
    if (body.type === 'permission_request') this.#injectedAsks.add(body.requestId);
    this.#emit(body);
  }

  async #stop(): Promise<void> {
    this.#stopped = true;
    this.#hostCalls?.close('the fake engine stopped');
    // Never started: there is no process and no generation to stamp an `exited` with.
    if (this.#events.exited || !this.#spec) return;
    // Manual mode: the test decides when (and whether) the process "exits", by injecting `exited`.
    if (this.#script.manual) return;
    this.#clearTimers();
    this.#turn = undefined;
    this.#queue.length = 0;
    const exitedSeen = new Promise<void>((resolve) => (this.#resolveStop = resolve));
    if (this.#script.ignoreStop) {
      this.#schedule(this.#script.killAfterMs ?? DEFAULT_KILL_AFTER_MS, () =>
        this.#emit({ type: 'exited', code: null, signal: 'SIGKILL', reason: 'killed' }),
      );
    } else {
      this.#schedule(this.#script.stopDelayMs ?? 0, () =>
        this.#emit({ type: 'exited', code: 0, signal: null, reason: 'stopped' }),
      );
    }
    return exitedSeen;
  }

  /** `engineOptions.model` / `permissionMode` (what a `null` goes back to), or none. */
  #optionSettings(): { model: string | null; permissionMode: string | null } {
    const options = this.#spec?.options ?? {};
    const option = (key: string) => (typeof options[key] === 'string' ? (options[key] as string) : null);
    return { model: option('model'), permissionMode: option('permissionMode') };
  }

  #assertRunning(what: string): void {
    if (!this.#spec || this.#events.exited || this.#stopped) {
      throw new AseError('ENGINE_NOT_RUNNING', `fake engine: ${what}() while the engine is not running`);
    }
  }

  #startNextTurn(): void {
    if (this.#turn || !this.#ready || this.#events.exited || this.#stopped) return;
    const message = this.#queue.shift();
    if (!message) return;
    const turns = this.#script.turns ?? [];
    const index = Math.min(this.#turnsStarted++, turns.length - 1);
    const steps = turns[index] ?? echoTurn(message.text);
    const turn: Turn = { steps: [...steps] };
    this.#turn = turn;
    this.#scheduleNextStep(turn);
  }

  #scheduleNextStep(turn: Turn): void {
    // A turn whose script runs out completes normally.
    const step = turn.steps.shift() ?? { complete: {} };
    turn.timer = this.#schedule(step.afterMs ?? 0, () => {
      turn.timer = undefined;
      this.#runStep(turn, step);
    });
  }

  #runStep(turn: Turn, step: FakeStep): void {
    if ('emit' in step) {
      this.#emit(step.emit);
    } else if ('text' in step) {
      this.#emitText(turn, step.text);
    } else if ('ask' in step) {
      const n = this.#nextId++;
      const requestId = step.ask.requestId ?? `fake-perm-${this.#spec?.gen ?? 0}-${n}`;
      const callId = step.ask.callId ?? `fake-call-${n}`;
      turn.waiting = { requestId, callId, step };
      this.#emit({ type: 'permission_request', requestId, toolName: step.ask.toolName, input: step.ask.input, callId });
      return; // answerPermission continues the turn
    } else if ('callTool' in step) {
      void this.#callTool(turn, step.callTool);
      return; // the tool's answer continues the turn
    } else if ('crash' in step) {
      const { code, signal, reason } = step.crash;
      this.#emit({ type: 'exited', code: code ?? 1, signal: signal ?? null, reason: reason ?? 'crashed' });
      return;
    } else if ('stall' in step) {
      return; // the turn stays current, so only abort/stop end it
    } else {
      const { status, usage, stopReason } = step.complete;
      this.#endTurn(turn);
      this.#emit({ type: 'turn_complete', status: status ?? 'completed', usage: { ...SMALL_USAGE, ...usage }, ...(stopReason !== undefined && { stopReason }) });
      this.#startNextTurn();
      return;
    }
    // A listener may have aborted or stopped us while we emitted.
    if (this.#turn === turn) this.#scheduleNextStep(turn);
  }

  async #callTool(turn: Turn, call: { name: string; input: unknown; callId?: string }): Promise<void> {
    const callId = call.callId ?? `fake-call-${this.#nextId++}`;
    this.#emit({ type: 'tool_call', callId, toolName: call.name, input: call.input });
    const calls = this.#hostCalls;
    const result = calls ? await calls.call(call.name, call.input, { callId }) : { content: [{ type: 'text' as const, text: 'this session has no host tools' }], isError: true };
    // Aborted or stopped meanwhile: the turn is over, its tool answer goes nowhere.
    if (this.#turn !== turn || this.#events.exited) return;
    this.#emit({ type: 'tool_result', callId, status: result.isError ? 'failed' : 'completed', output: result.content, isError: result.isError });
    if (this.#turn === turn) this.#scheduleNextStep(turn);
  }

  #emitText(turn: Turn, text: string): void {
    const messageId = `fake-msg-${this.#nextId++}`;
    for (const chunk of chunks(text, 3)) {
      this.#emit({ type: 'text_delta', messageId, text: chunk });
      if (this.#turn !== turn) return;
    }
    this.#emit({ type: 'message', role: 'assistant', id: messageId, blocks: [{ type: 'text', text }] });
  }

  #endTurn(turn: Turn): void {
    if (turn.timer) this.#clearTimer(turn.timer);
    if (this.#turn === turn) this.#turn = undefined;
  }

  #emit(body: AgentEventBody): void {
    const event = this.#events.emit(body);
    if (event?.type !== 'exited') return;
    // A dead engine plays nothing more.
    this.#clearTimers();
    this.#turn = undefined;
    this.#queue.length = 0;
    this.#resolveStop?.();
  }

  #schedule(ms: number, fn: () => void): Timer {
    const timer = this.#context.setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  #clearTimer(timer: Timer): void {
    this.#context.clearTimeout(timer);
    this.#timers.delete(timer);
  }

  #clearTimers(): void {
    for (const timer of this.#timers) this.#context.clearTimeout(timer);
    this.#timers.clear();
  }
}

function defaultToolResult(callId: string, decision: PermissionDecision): FakeStep {
  return decision.behavior === 'allow'
    ? { emit: { type: 'tool_result', callId, status: 'completed', output: 'ok', isError: false } }
    : { emit: { type: 'tool_result', callId, status: 'denied', output: decision.message ?? 'denied', isError: true } };
}

/** Splits `text` into at most `count` non-empty pieces (one empty piece for empty text). */
function chunks(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces.length ? pieces : [''];
}
