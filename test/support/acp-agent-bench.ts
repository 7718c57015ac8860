/**
 * The per-test bench of the ACP real-agent tests (acp-codex, acp-gemini, acp-claude-code): a temp
 * root, the agent's mock model API, and the engines a test drives directly (no SessionActor),
 * all torn down after each test even when an assertion failed; plus the SessionActor a test runs
 * over the acp engine. The test keeps its own `session` variable: it stops it itself mid-test
 * and the teardown stops it only when the test did not get that far.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acpEngine, type AcpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import { createSession, MemoryJournal, MemoryStore, type Session } from '../../src/index.js';
import { EventLog } from './acp-hermetic.js';
import { realContext } from './acp-scenarios.js';

/** Agents take a while to come up (gemini-cli loads its bundle, claude-code-acp starts Claude Code). */
const READY_MS = 60_000;

/** What the bench needs of a mock: every mock here takes a plain scripted text answer. */
export interface AgentMock {
  enqueue(...scripts: { kind: 'text'; text: string }[]): void;
  close(): Promise<void>;
}

export class AcpAgentBench<M extends AgentMock> {
  readonly #engines: AcpEngine[] = [];

  private constructor(
    readonly root: string,
    readonly mock: M,
  ) {}

  /** The root first, then the mock. */
  static async open<M extends AgentMock>(prefix: string, startMock: () => Promise<M>): Promise<AcpAgentBench<M>> {
    const root = mkdtempSync(join(tmpdir(), prefix));
    return new AcpAgentBench(root, await startMock());
  }

  /** An acp engine driven directly, stopped at teardown; resolves once it is `ready`. */
  async startEngine(options: AcpEngineOptions, start: { gen: number; workDir: string; resumeToken?: string }): Promise<{ engine: AcpEngine; log: EventLog }> {
    const log = new EventLog();
    const engine = acpEngine(options).create(realContext()) as AcpEngine;
    this.#engines.push(engine);
    engine.onEvent(log.push);
    await engine.start({ ...start, mode: 'remote', options: {} });
    await log.next('ready', 'ready', READY_MS);
    return { engine, log };
  }

  /**
   * Generation 1 of a session/load test: the user asks to remember the word pineapple, the model
   * answers `answer`, the engine stops. Returns the session's resume token.
   */
  async rememberPineapple(options: AcpEngineOptions, workDir: string, answer: string): Promise<string> {
    const { engine, log } = await this.startEngine(options, { gen: 1, workDir });
    this.mock.enqueue({ kind: 'text', text: answer });
    const done = log.next('turn_complete');
    await engine.send({ localId: 'a', text: 'remember the word pineapple' });
    await done;
    await engine.stop();
    return log.of('session_identified')[0]!.resumeToken;
  }

  /** Stops the directly driven engines, closes the mock, removes the root. */
  async close(): Promise<void> {
    await Promise.allSettled(this.#engines.splice(0).map((e) => e.stop()));
    await this.mock.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * A SessionActor (remote mode, in-memory store and journal) over the acp engine made from
 * `factory` (preset, taps), its agent events in an EventLog. Not yet waited for: the caller keeps
 * the session for teardown first, then waits with {@link sessionReady}.
 */
export async function acpSession(factory: AcpEngineOptions, workDir: string, engineOptions: Record<string, unknown>): Promise<{ session: Session; log: EventLog }> {
  const session = await createSession({ agent: 'acp', engines: [acpEngine(factory)], store: new MemoryStore(), journal: new MemoryJournal(), workDir, engineOptions });
  const log = new EventLog();
  session.on('agent', (n) => log.push(n.event));
  return { session, log };
}

/** Resolves at the session's `ready` agent event. */
export function sessionReady(log: EventLog): Promise<unknown> {
  return log.next('ready', 'ready', READY_MS);
}
