/**
 * The per-test bench of the real-binary Codex engine tests (codex-app-server-engine and
 * codex-mcp-engine): our mock Responses API, a hermetic CODEX_HOME under a fresh temp root, the
 * engines a test launched (each with the test defaults: the pinned binary, approvals on request,
 * traffic recorded for fixtures), and a teardown that stops them all and asserts that no process
 * of the root is left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { TrafficTap } from '../../src/engines/transport/traffic.js';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticCodex, type CodexVersion, type HermeticCodex } from './codex-hermetic.js';
import { EventLog, recordTraffic, saveFixture, type FixtureHeader, type TrafficEntry } from './codex-engine-kit.js';
import { processesUnder } from './processes.js';

/** Options every launched engine gets unless the test overrides them. */
export interface CodexTestDefaults {
  bin: string;
  env: Record<string, string>;
  approvalPolicy: 'on-request';
  onTraffic: TrafficTap;
}

export interface LaunchedCodexEngine<E extends AgentEngine> {
  engine: E;
  log: EventLog;
  traffic: TrafficEntry[];
  /** `performance.now()` right before `start()` */
  started: number;
  startPromise: Promise<void>;
}

export interface CodexBenchSpec {
  /** temp root name prefix, e.g. `ase-codex-as-` */
  prefix: string;
  /** which pinned binary (default 0.169.0) */
  target?: CodexVersion;
  /** fixture names are `<fixturePrefix>-<scenario>` */
  fixturePrefix: string;
  engine: FixtureHeader['engine'];
  codexVersion: string;
  /** extra `[features]` of the hermetic config.toml (e.g. `multi_agent_v2` for sub-agents) */
  features?: Record<string, boolean>;
}

export class CodexEngineBench<E extends AgentEngine & { stop(): Promise<void> }> {
  readonly #engines: E[] = [];

  private constructor(
    readonly spec: CodexBenchSpec,
    readonly mock: OpenAIResponsesMock,
    readonly root: string,
    readonly h: HermeticCodex,
  ) {}

  /** Mock first, then the root and its CODEX_HOME pointing at the mock. */
  static async open<E extends AgentEngine & { stop(): Promise<void> }>(spec: CodexBenchSpec): Promise<CodexEngineBench<E>> {
    const mock = await startOpenAIResponsesMock();
    const root = mkdtempSync(join(tmpdir(), spec.prefix));
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, ...(spec.target && { target: spec.target }), ...(spec.features && { features: spec.features }) });
    return new CodexEngineBench<E>(spec, mock, root, h);
  }

  /** Creates the engine from the test defaults (`create` spreads the test's options over them) and starts it as generation `gen`. */
  launch(create: (defaults: CodexTestDefaults) => E, gen: number, resumeToken?: string): LaunchedCodexEngine<E> {
    const traffic: TrafficEntry[] = [];
    const engine = create({ bin: this.h.bin, env: this.h.env, approvalPolicy: 'on-request', onTraffic: recordTraffic(traffic) });
    this.#engines.push(engine);
    const log = new EventLog(engine);
    const started = performance.now();
    const startPromise = engine.start({ gen, mode: 'remote', workDir: this.h.workDir, options: {}, ...(resumeToken && { resumeToken }) });
    return { engine, log, traffic, started, startPromise };
  }

  /** Saves the scenario's traffic as a fixture (when missing, or with UPDATE_CODEX_FIXTURES=1). */
  record(name: string, traffic: TrafficEntry[], extra: Partial<FixtureHeader> = {}): void {
    const { fixturePrefix, engine, codexVersion } = this.spec;
    saveFixture(`${fixturePrefix}-${name}`, { scenario: name, engine, codexVersion, workDir: this.h.workDir, recordedAt: new Date().toISOString(), ...extra }, traffic);
  }

  /** Stops every engine launched, closes the mock, asserts no process of the root is left, removes the root. */
  async close(): Promise<void> {
    await Promise.all(this.#engines.map((e) => e.stop().catch(() => undefined)));
    await this.mock.close();
    expect(processesUnder(this.root)).toEqual([]);
    rmSync(this.root, { recursive: true, force: true });
  }
}
