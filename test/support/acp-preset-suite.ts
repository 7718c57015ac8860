/**
 * The real-agent test of an ACP preset whose agent talks to one scripted mock model (acp-opencode,
 * acp-qwen): a bench per test (temp root, the mock, the hermetic HOME), the ACP scenario suite on
 * one engine process (its traffic recorded as the agent's fixture), and the kit's conformance
 * checks. Each file supplies only what differs: its mock, how the model is scripted, how a turn is
 * made to stall, which of the agent's requests are its turns.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine, type AcpPresetName } from '../../src/engines/acp/index.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { AcpAgentBench, type AgentMock } from './acp-agent-bench.js';
import type { AcpHermetic } from './acp-hermetic.js';
import { runScenarioSuite, type ScriptedModel } from './acp-scenarios.js';
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
    it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded)', { timeout: 900_000 }, async () => {
      const setup = { work: h.work, options: { preset: agent.preset, env: h.env, cancelTimeoutMs: CANCEL_TIMEOUT_MS }, model: agent.model(bench.mock), close: async () => undefined };
      const timings = await runScenarioSuite(agent.preset, bench.root, setup, { thinking: true, contract: true }).catch((error: unknown) => {
        agent.explainFailure?.(bench.mock);
        throw error;
      });
      console.log(`[acp-${agent.preset}] timings ${JSON.stringify(timings)}`);
      expect(agent.turnRequests(bench.mock)).toBeGreaterThan(0);
    });

    // The kit's checks that apply to a real CLI (no bad output: the agent cannot be made to print it).
    // start, permission_allow, permission_deny and stop are skipped: the scenario test above makes
    // each of their assertions on its one agent (`contract: true`), and each check would start a
    // fresh agent (opencode: 12-17 s of CPU per start; these four were ~45% of the file's time).
    // text_turn (two like turns: usage per turn, not cumulative), abort (a turn stalled before its
    // first token, unlike the scenario's cancel mid-stream) and resume (a second agent) stay, and
    // tool_turn and failure where the agent's file gives the hooks (quietTool, failure).
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
            stall: () => {
              const before = agent.turnRequests(bench.mock);
              agent.stall(bench.mock);
              const stalled = (async () => {
                while (agent.turnRequests(bench.mock) <= before) await new Promise((r) => setTimeout(r, 20));
              })();
              return { stalled };
            },
          };
        },
        leftovers: () => processesUnder(bench.root),
        turnTimeoutMs: 120_000,
        skip: ['start', 'permission_allow', 'permission_deny', 'stop'],
        ...(agent.reportsUsage === false && { reportsUsage: false }),
      }),
      { describe, it },
    );
  });
}
