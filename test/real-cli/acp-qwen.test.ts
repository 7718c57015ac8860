/**
 * The acp engine's `qwen` preset with the REAL pinned Qwen Code 0.24.4 (`qwen --acp`, its cli.js
 * run by this Node) against our OpenAI chat-completions mock on 127.0.0.1 (`OPENAI_BASE_URL`, auth
 * type `openai`), hermetic HOME per test: the ACP scenario suite (text, tool allowed/rejected,
 * cancels; traffic recorded as test/fixtures/acp/qwen.jsonl for the replay test), and the kit's
 * conformance checks. Qwen Code reports token usage only in `_meta` of a message chunk (one per
 * model request), not in the prompt result; the engine sums those per turn (src/engines/acp/usage.ts).
 */
import { startOpenAIChatMock, type OpenAIChatMock } from '../mocks/openai-chat-mock.js';
import { hermeticQwen, isMainQwenRequest } from '../support/acp-hermetic.js';
import { describePresetAgent } from '../support/acp-preset-suite.js';

const shell = (command: string) => ({ kind: 'tool_call' as const, name: 'run_shell_command', args: { command, description: 'run it' } });

describePresetAgent<OpenAIChatMock>({
  title: 'acp engine with qwen --acp',
  preset: 'qwen',
  startMock: () => startOpenAIChatMock({ consumesQueue: isMainQwenRequest }),
  hermetic: (mock, root) => hermeticQwen({ baseUrl: mock.baseUrl, root }),
  model: (mock) => ({
    text: (text) => mock.enqueue({ kind: 'text', text }),
    thinking: (thinking, text) => mock.enqueue({ kind: 'thinking', thinking, text }),
    shell: (command) => mock.enqueue(shell(command)),
    slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
  }),
  turnRequests: (mock) => mock.streamed().filter(isMainQwenRequest).length,
  stall: (mock) => mock.enqueue({ kind: 'stall' }),
  // glob runs without asking (only the shell and edits ask); a 400 fails the turn (a 5xx or 429 it retries).
  quietTool: (mock, then) => mock.enqueue({ kind: 'tool_call', name: 'glob', args: { pattern: '*' } }, { kind: 'text', text: then }),
  failure: (mock) => mock.enqueue({ kind: 'error', status: 400, message: 'conformance: the model refused the request' }),
  // Which request took which answer, for a failure that depends on the agent's own requests.
  explainFailure: (mock) => {
    for (const r of mock.requests) console.log(`[acp-qwen] ${r.pathname} stream=${String(r.body?.stream)} tools=${(r.body?.tools ?? []).length} main=${isMainQwenRequest(r)} last=${JSON.stringify(r.body?.messages?.at(-1))?.slice(0, 160)}`);
  },
});
