/**
 * One engine per generation, chosen by the start spec's control mode: an agent whose local mode
 * (its own terminal UI) and remote mode (its structured protocol) are different programs is still
 * one engine to the session. The choice is made at `start()`; listeners subscribed before it are
 * carried over, and every call goes to the engine of that mode.
 */
import { AseError } from '../../errors.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import type { ControlMode } from '../../events/session-input.js';
import type { AgentEngine, AgentEventListener, EngineCapabilities, EngineStartSpec } from './engine.js';

export class ModeEngine implements AgentEngine {
  readonly capabilities: EngineCapabilities;
  readonly #create: Record<ControlMode, () => AgentEngine>;
  readonly #listeners = new Set<AgentEventListener>();
  #engine: AgentEngine | undefined;
  #stopped = false;

  constructor(capabilities: EngineCapabilities, create: Record<ControlMode, () => AgentEngine>) {
    this.capabilities = capabilities;
    this.#create = create;
  }

  /** The engine of the started mode (undefined before `start()`). */
  get engine(): AgentEngine | undefined {
    return this.#engine;
  }

  /** The running engine's agent process, where it has one. */
  get pid(): number | undefined {
    const pid = (this.#engine as { pid?: unknown } | undefined)?.pid;
    return typeof pid === 'number' ? pid : undefined;
  }

  /** The running engine's agent CLI version, where it reports one (a recording's `exit` names it). */
  get version(): string | undefined {
    const version = (this.#engine as { version?: unknown } | undefined)?.version;
    return typeof version === 'string' ? version : undefined;
  }

  onEvent(listener: AgentEventListener): () => void {
    this.#listeners.add(listener);
    const unsubscribe = this.#engine?.onEvent(listener);
    return () => {
      this.#listeners.delete(listener);
      unsubscribe?.();
    };
  }

  start(spec: EngineStartSpec): Promise<void> {
    if (this.#engine || this.#stopped) throw new AseError('INVALID_INPUT', 'engine: already started or stopped');
    const engine = this.#create[spec.mode]();
    this.#engine = engine;
    for (const listener of this.#listeners) engine.onEvent(listener);
    return engine.start(spec);
  }

  send(message: UserMessage): Promise<void> {
    return this.#running('send').send(message);
  }
  abort(): Promise<void> {
    return this.#running('abort').abort();
  }
  answerPermission(requestId: string, decision: PermissionDecision): Promise<void> {
    return this.#running('answerPermission').answerPermission(requestId, decision);
  }
  async wasReceived(message: UserMessage): Promise<boolean | undefined> {
    return this.#running('wasReceived').wasReceived?.(message);
  }
  async configure(settings: EngineSettings): Promise<void> {
    const engine = this.#running('configure');
    if (!engine.configure) throw new AseError('UNSUPPORTED', 'this engine cannot change settings while it runs');
    await engine.configure(settings);
  }
  validateSettings(settings: EngineSettings): void {
    this.#engine?.validateSettings?.(settings);
  }
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#engine?.stop();
  }

  #running(what: string): AgentEngine {
    if (!this.#engine) throw new AseError('ENGINE_NOT_RUNNING', `engine: ${what}() before start()`);
    return this.#engine;
  }
}
