/**
 * The real-agent test of an ACP preset whose agent talks to one scripted mock model (acp-opencode,
 * acp-qwen): a bench per test (temp root, the mock, the hermetic HOME), the ACP scenario suite on
 * one engine process (its traffic recorded as the agent's fixture) with the kit's conformance
 * turns on the same agent, and a resume on a second. Each file supplies only what differs: its
 * mock, how the model is scripted, how a turn is made to stall, which of the agent's requests are
 * its turns.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine, type AcpPresetName } from '../../src/engines/acp/index.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { AcpAgentBench, type AgentMock } from './acp-agent-bench.js';
import type { AcpHermetic } from './acp-hermetic.js';
import { runScenarioSuite, type KitTurns, type ScriptedModel } from './acp-scenarios.js';
import { processesUnder } from './processes.js';

export interface PresetAgent<M extends AgentMock> {
  /** The describe's title. */
  title: string;
  preset: AcpPresetName;
  startMock(): Promise<M>;
  /** The agent's HOME, work dir and environment below `root`, pointed at `mock`. */
  hermetic(mock: M, root: string): AcpHermetic;
  /** How the test scripts the agent's model through `mock`. */
  model(mock: M): ScriptedModel;
  /** The agent's own turn requests so far (not its helper calls: titles, suggestions). */
  turnRequests(mock: M): number;
  /** Scripts an answer that does not end before the check aborts it. */
  stall(mock: M): void;
  /**
   * Scripts a turn that runs a tool the agent runs without asking (a read-only one: the shell
   * asks), then answers `then`. The kit's `tool_turn` check; without it the check is skipped.
   */
  quietTool?(mock: M, then: string): void;
  /**
   * Scripts a model request that fails in a way the agent gives up on (not a status it retries),
   * so the turn fails. The kit's `failure` check; without it the check is skipped.
   */
  failure?(mock: M): void;
  /** The engine reports per-turn token usage (default true). */
  reportsUsage?: boolean;
  /** Prints what helps explain a failed scenario run (which request took which answer). */
  explainFailure?(mock: M): void;
}

/** Under load the agent takes seconds to settle a cancel: the engine waits for it rather than kill it. */
const CANCEL_TIMEOUT_MS = 60_000;

/** Scripts a stalled answer; `stalled` resolves once the agent's turn request for it reached the mock. */
function stallTurn<M extends AgentMock>(agent: PresetAgent<M>, mock: M): { stalled: Promise<void> } {
  const before = agent.turnRequests(mock);
  agent.stall(mock);
  const stalled = (async () => {
    while (agent.turnRequests(mock) <= before) await new Promise((r) => setTimeout(r, 20));
  })();
  return { stalled };
}

/** Registers the describe: the scenario suite, then the conformance checks, each on a fresh bench. */
export function describePresetAgent<M extends AgentMock>(agent: PresetAgent<M>): void {
  describe(agent.title, () => {
    let bench: AcpAgentBench<M>;
    let h: AcpHermetic;

    beforeEach(async () => {
      bench = await AcpAgentBench.open(`ase-acp-${agent.preset}-`, () => agent.startMock());
      h = agent.hermetic(bench.mock, bench.root);
    });

    afterEach(async () => {
      await bench.close();
    });

    // The agent takes 30-60 s to start on a loaded 2-core machine (measured: opencode's initialize 32-37 s at load 22).
    it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded), then the kit turns and a resume', { timeout: 900_000 }, async () => {
      const setup = { work: h.work, options: { preset: agent.preset, env: h.env, cancelTimeoutMs: CANCEL_TIMEOUT_MS }, model: agent.model(bench.mock), close: async () => undefined };
      const kit: KitTurns = {
        reportsUsage: agent.reportsUsage !== false,
        ...(agent.quietTool && { quietTool: (then: string) => agent.quietTool!(bench.mock, then) }),
        ...(agent.failure && { failure: () => agent.failure!(bench.mock) }),
        stall: () => stallTurn(agent, bench.mock),
      };
      const timings = await runScenarioSuite(agent.preset, bench.root, setup, { thinking: true, contract: true, kit }).catch((error: unknown) => {
        agent.explainFailure?.(bench.mock);
        throw error;
      });
      console.log(`[acp-${agent.preset}] timings ${JSON.stringify(timings)}`);
      expect(agent.turnRequests(bench.mock)).toBeGreaterThan(0);
    });

    // The kit's checks, listed (each skipped, with its reason) but made by the scenario test above on
    // its one agent: start, permission_allow, permission_deny and stop (`contract: true`), text_turn,
    // tool_turn, failure, abort and resume (`kit`: the same turns and assertions, resume on a second
    // agent after the stop). Each check here would start a fresh agent (opencode: 12-17 s of CPU per
    // start); run alone they made ~75% of the file's time. bad_output has no hook: the real agent
    // never prints garbage (see the driver).
    registerWithVitest(
      engineConformance(acpEngine({ preset: agent.preset }), {
        name: `acp preset ${agent.preset}`,
        workDir: () => h.work,
        engineOptions: () => ({ env: h.env, cancelTimeoutMs: CANCEL_TIMEOUT_MS }),
        driver: () => {
          const model = agent.model(bench.mock);
          return {
            text: (answer) => model.text(answer),
            // No `badOutput`: the real agent never prints garbage, and injecting some (a wrapper
            // between it and the engine) would test our line reader, which the ACP stand-in run
            // (test/kit/acp-stand-in.test.ts) already proves with the same kit check; here it would
            // only add an agent start (docs/testing.md).
            ...(agent.quietTool && { tool: (_command: string, then: string) => agent.quietTool!(bench.mock, then) }),
            ...(agent.failure && { failure: () => agent.failure!(bench.mock) }),
            permission: (command, then) => {
              model.shell(command);
              model.text(then);
            },
            stall: () => stallTurn(agent, bench.mock),
          };
        },
        leftovers: () => processesUnder(bench.root),
        turnTimeoutMs: 120_000,
        skip: ['start', 'text_turn', 'tool_turn', 'permission_allow', 'permission_deny', 'failure', 'abort', 'resume', 'stop'],
        ...(agent.reportsUsage === false && { reportsUsage: false }),
      }),
      { describe, it },
    );
  });
}
