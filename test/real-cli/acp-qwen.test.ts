/**
 * The acp engine's `qwen` preset with the REAL pinned Qwen Code 0.24.4 (`qwen --acp`, its cli.js
 * run by this Node) against our OpenAI chat-completions mock on 127.0.0.1 (`OPENAI_BASE_URL`, auth
 * type `openai`), hermetic HOME per test: the ACP scenario suite (text, tool allowed/rejected,
 * cancels; traffic recorded as test/fixtures/acp/qwen.jsonl for the replay test), and the kit's
 * conformance checks. Qwen Code reports token usage only in `_meta` of a message chunk, not in the
 * prompt result, so the engine reports zero usage (`reportsUsage: false`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine } from '../../src/engines/acp/index.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { startOpenAIChatMock, type OpenAIChatMock } from '../mocks/openai-chat-mock.js';
import { AcpAgentBench } from '../support/acp-agent-bench.js';
import { hermeticQwen, isMainQwenRequest, type AcpHermetic } from '../support/acp-hermetic.js';
import { runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { processesUnder } from '../support/processes.js';

describe('acp engine with qwen --acp', () => {
  let bench: AcpAgentBench<OpenAIChatMock>;
  let mock: OpenAIChatMock;
  let h: AcpHermetic;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-qwen-', () => startOpenAIChatMock({ consumesQueue: isMainQwenRequest }));
    mock = bench.mock;
    h = hermeticQwen({ baseUrl: mock.baseUrl, root: bench.root });
  });

  afterEach(async () => {
    await bench.close();
  });

  const shell = (command: string) => ({ kind: 'tool_call' as const, name: 'run_shell_command', args: { command, description: 'run it' } });

  function setup(): AgentSetup {
    return {
      work: h.work,
      // Under load the agent takes seconds to settle a cancel: wait for it rather than kill it.
      options: { preset: 'qwen', env: h.env, cancelTimeoutMs: 60_000 },
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
    const timings = await runScenarioSuite('qwen', bench.root, setup(), { thinking: true }).catch((error: unknown) => {
      // Which request took which answer, for a failure that depends on the agent's own requests.
      for (const r of mock.requests) console.log(`[acp-qwen] ${r.pathname} stream=${String(r.body?.stream)} tools=${(r.body?.tools ?? []).length} main=${isMainQwenRequest(r)} last=${JSON.stringify(r.body?.messages?.at(-1))?.slice(0, 160)}`);
      throw error;
    });
    console.log(`[acp-qwen] timings ${JSON.stringify(timings)}`);
    expect(mock.streamed().length).toBeGreaterThan(0);
  });

  registerWithVitest(
    engineConformance(acpEngine({ preset: 'qwen' }), {
      name: 'acp preset qwen',
      workDir: () => h.work,
      engineOptions: () => ({ env: h.env, cancelTimeoutMs: 60_000 }),
      driver: () => ({
        text: (answer) => void mock.enqueue({ kind: 'text', text: answer }),
        permission: (command, then) => void mock.enqueue(shell(command), { kind: 'text', text: then }),
        stall: () => {
          const before = mock.streamed().filter(isMainQwenRequest).length;
          mock.enqueue({ kind: 'stall' });
          const stalled = (async () => {
            while (mock.streamed().filter(isMainQwenRequest).length <= before) await new Promise((r) => setTimeout(r, 20));
          })();
          return { stalled };
        },
      }),
      leftovers: () => processesUnder(bench.root),
      turnTimeoutMs: 120_000,
      reportsUsage: false,
    }),
    { describe, it },
  );
});
