/**
 * The acp engine's `opencode` preset with the REAL pinned opencode 1.18.33 (`opencode acp`, the
 * native binary of opencode-linux-x64) against our Anthropic Messages mock on 127.0.0.1 (a provider
 * of opencode's bundled `@ai-sdk/anthropic` pointed at it), hermetic HOME per test: the ACP scenario
 * suite (text, thinking, tool allowed/rejected, cancels; traffic recorded as
 * test/fixtures/acp/opencode.jsonl for the replay test), and the kit's conformance checks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine } from '../../src/engines/acp/index.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { AcpAgentBench } from '../support/acp-agent-bench.js';
import { hermeticOpencode, isMainOpencodeRequest, type AcpHermetic } from '../support/acp-hermetic.js';
import { runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { processesUnder } from '../support/processes.js';

describe('acp engine with opencode acp', () => {
  let bench: AcpAgentBench<AnthropicMock>;
  let mock: AnthropicMock;
  let h: AcpHermetic;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-opencode-', () => startAnthropicMock({ consumesQueue: isMainOpencodeRequest }));
    mock = bench.mock;
    h = hermeticOpencode({ port: mock.port, root: bench.root });
  });

  afterEach(async () => {
    await bench.close();
  });

  const shell = (command: string) => ({ kind: 'tool_use' as const, name: 'bash', input: { command, description: 'run it' } });

  function setup(): AgentSetup {
    return {
      work: h.work,
      // Under load the agent takes seconds to settle a cancel: wait for it rather than kill it.
      options: { preset: 'opencode', env: h.env, cancelTimeoutMs: 60_000 },
      model: {
        text: (text) => mock.enqueue({ kind: 'text', text }),
        thinking: (thinking, text) => mock.enqueue({ kind: 'thinking', thinking, text }),
        shell: (command) => mock.enqueue(shell(command)),
        slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
      },
      close: async () => undefined,
    };
  }

  // The agent takes 30-60 s to start on a loaded 2-core machine (measured: opencode's initialize 32-37 s at load 22).
  it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded)', { timeout: 900_000 }, async () => {
    const timings = await runScenarioSuite('opencode', bench.root, setup(), { thinking: true });
    console.log(`[acp-opencode] timings ${JSON.stringify(timings)}`);
    expect(mock.requests.length).toBeGreaterThan(0);
  });

  // The kit's checks that apply to a real CLI (no bad output: opencode cannot be made to print it).
  registerWithVitest(
    engineConformance(acpEngine({ preset: 'opencode' }), {
      name: 'acp preset opencode',
      workDir: () => h.work,
      engineOptions: () => ({ env: h.env, cancelTimeoutMs: 60_000 }),
      driver: () => ({
        text: (answer) => void mock.enqueue({ kind: 'text', text: answer }),
        permission: (command, then) => void mock.enqueue(shell(command), { kind: 'text', text: then }),
        stall: () => {
          const before = mock.requests.filter(isMainOpencodeRequest).length;
          mock.enqueue({ kind: 'text', text: 'a very slow answer that is aborted long before it ends', chunks: 60, delayMs: 500 });
          const stalled = (async () => {
            while (mock.requests.filter(isMainOpencodeRequest).length <= before) await new Promise((r) => setTimeout(r, 20));
          })();
          return { stalled };
        },
      }),
      leftovers: () => processesUnder(bench.root),
      turnTimeoutMs: 120_000,
    }),
    { describe, it },
  );
});
