/**
 * A SessionRuntime to benchmark, built like the model-based harness's Sut (test/model-based/harness.ts):
 * the real SessionActor inside the real effect runtime, a manual FakeEngine per generation (events
 * are injected *through* the engine, so they take the runtime's real path: engine stamp + schema
 * parse → runtime → actor → effects → timers / store / journal), a SimulatedClock, and in-memory
 * store and journal. Unlike the harness it records nothing per event, so what is timed is the
 * library, not the test bookkeeping.
 */
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../src/actors/session.js';
import type { SessionConfig, SessionContext, SessionMachineInput } from '../../src/actors/session-context.js';
import { SimulatedClock } from '../../src/effects/clock.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import type { TranscriptJournal } from '../../src/effects/journal/transcript-journal.js';
import { SessionRuntime } from '../../src/effects/session-runtime.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';
import type { SessionStore } from '../../src/effects/store/session-store.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { FakeEngine } from '../../src/engines/fake/index.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import type { AgentEventBody } from '../../src/events/agent-event.js';
import { drain } from './measure.js';

export const START_TIME = 1_700_000_000_000;

export interface BenchRuntimeOptions {
  journal?: TranscriptJournal;
  store?: SessionStore;
  config?: Partial<SessionConfig>;
  sessionId?: string;
}

export class BenchRuntime {
  readonly clock = new SimulatedClock(START_TIME);
  readonly store: SessionStore;
  readonly journal: TranscriptJournal;
  readonly runtime: SessionRuntime;
  /** Counted by an observer, as a client (the session handle) would subscribe. */
  effects = 0;
  agentEvents = 0;
  failures = 0;
  readonly #engines: FakeEngine[] = [];
  #sends = 0;

  private constructor(options: BenchRuntimeOptions) {
    this.store = options.store ?? new MemoryStore();
    this.journal = options.journal ?? new MemoryJournal();
    const engines = this.#engines;
    const factory: EngineFactory = {
      name: 'fake',
      capabilities: FakeEngine.capabilities,
      create: (context) => {
        const engine = new FakeEngine(context, { manual: true });
        engines.push(engine);
        return engine;
      },
    };
    const input: SessionMachineInput = {
      sessionId: options.sessionId ?? 'bench-session',
      agent: 'fake',
      workDir: '/work/project',
      mode: 'remote',
      now: START_TIME,
      ...(options.config && { config: options.config }),
    };
    this.runtime = new SessionRuntime({
      input,
      registry: new EngineRegistry().register(factory),
      clock: this.clock,
      store: this.store,
      journal: this.journal,
    });
    this.runtime.observe({
      effect: () => void this.effects++,
      agentEvent: () => void this.agentEvents++,
      failure: () => void this.failures++,
    });
  }

  /** A started session whose engine reported `ready`: phase `idle`, waiting for a send. */
  static async ready(options: BenchRuntimeOptions = {}): Promise<BenchRuntime> {
    const bench = new BenchRuntime(options);
    bench.runtime.start();
    await drain(); // the runtime starts the engine on a promise chain
    bench.inject({ type: 'session_identified', resumeToken: 'bench-resume-token' });
    bench.inject({ type: 'ready' });
    await drain();
    const phase = bench.context.phase;
    if (phase !== 'idle') throw new Error(`bench session did not become idle (phase ${phase})`);
    return bench;
  }

  get engine(): FakeEngine {
    const engine = this.#engines.at(-1);
    if (!engine) throw new Error('no engine was created');
    return engine;
  }

  get context(): SessionContext {
    return this.runtime.actor.getSnapshot().context;
  }

  /** A client send (validated and stamped by the runtime, like `session.send`). */
  send(text = 'please refactor the session store'): void {
    const effects = this.runtime.dispatch({ type: 'send', text, localId: `local-${++this.#sends}` });
    if (effects.some((e) => e.type === 'client.error')) throw new Error(`send refused: ${JSON.stringify(effects)}`);
  }

  /** One AgentEvent through the engine (stamped with the engine's gen and the clock's time). */
  inject(body: AgentEventBody): void {
    this.engine.inject(body);
  }

  /** Stops the session the normal way; resolves when everything settled. */
  async stop(): Promise<void> {
    this.runtime.dispatch({ type: 'stop' });
    await drain();
    const gen = this.context.liveGen;
    if (gen !== null && !this.runtime.isDone) this.inject({ type: 'exited', code: 0, signal: null, reason: 'stopped' });
    await this.runtime.done;
  }
}

// ------------------------------------------------------------------ event bodies

export const USAGE = { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 9000, cacheWriteTokens: 0, costUsd: 0.0042 };

export function textDelta(n: number): AgentEventBody {
  return { type: 'text_delta', messageId: `msg-${n >> 6}`, text: 'the quick brown fox ' };
}

export function assistantMessage(n: number): AgentEventBody {
  return {
    type: 'message',
    role: 'assistant',
    id: `msg-${n}`,
    blocks: [{ type: 'text', text: 'I will read the store implementation first, then update the tests accordingly.' }],
  };
}

export function toolCall(n: number): AgentEventBody {
  return { type: 'tool_call', callId: `call-${n}`, toolName: 'Read', input: { file_path: '/work/project/src/effects/store/file-store.ts' }, title: 'Read file-store.ts' };
}

export function toolResult(n: number): AgentEventBody {
  return { type: 'tool_result', callId: `call-${n}`, status: 'completed', output: 'export class FileStore implements SessionStore { /* 266 lines */ }', isError: false };
}

export function turnComplete(): AgentEventBody {
  return { type: 'turn_complete', status: 'completed', stopReason: 'end_turn', usage: USAGE };
}

/**
 * The representative turn used for end-to-end event throughput: 37 AgentEvents, shaped like a
 * coding agent's reply (mostly streamed text, a couple of tool round trips, one final message).
 */
export function representativeTurn(turn: number): AgentEventBody[] {
  const events: AgentEventBody[] = [];
  let n = turn * 100;
  for (let i = 0; i < 12; i++) events.push(textDelta(n++));
  events.push(assistantMessage(n++));
  for (let t = 0; t < 2; t++) {
    events.push(toolCall(n), toolResult(n));
    n++;
  }
  for (let i = 0; i < 18; i++) events.push(textDelta(n++));
  events.push(assistantMessage(n++));
  events.push(turnComplete());
  return events;
}

// ------------------------------------------------------------------ pure machine snapshots

export type MachineSnapshot = SnapshotFrom<typeof sessionMachine>;

const MACHINE_INPUT: SessionMachineInput = { sessionId: 'bench-session', agent: 'fake', workDir: '/work/project', mode: 'remote', now: START_TIME };

/** A snapshot in `remote.running` on gen 1 (started, ready, one send delivered), via the pure API. */
export function runningSnapshot(): MachineSnapshot {
  let [snapshot] = initialTransition(sessionMachine, MACHINE_INPUT);
  const at = START_TIME + 10;
  for (const event of [
    { type: 'session_identified', gen: 1, at, resumeToken: 'bench-resume-token' },
    { type: 'ready', gen: 1, at },
    { type: 'send', text: 'please refactor the session store', localId: 'local-1', at },
  ] satisfies SessionEvent[]) {
    [snapshot] = transition(sessionMachine, snapshot, event);
  }
  const value = snapshot.value as unknown;
  if (JSON.stringify(value) !== JSON.stringify({ remote: 'running' })) throw new Error(`expected remote.running, got ${JSON.stringify(value)}`);
  return snapshot;
}

/** Stamps a body as the machine sees it. */
export function stamped(body: AgentEventBody, gen: number, at: number): SessionEvent {
  return { ...body, gen, at } as SessionEvent;
}

/** A journal that keeps nothing: counts entries and their serialized size (what a FileJournal would write). */
export class CountingJournal implements TranscriptJournal {
  entries = 0;
  bytes = 0;
  async append(entry: TranscriptEntry): Promise<void> {
    this.entries++;
    this.bytes += JSON.stringify(entry).length + 1;
  }
  async read(): Promise<TranscriptEntry[]> {
    return [];
  }
  async flush(): Promise<void> {}
}
