/**
 * The acp engine's `opencode` preset with the REAL pinned opencode 1.18.33 (`opencode acp`, the
 * native binary of opencode-linux-x64) against our Anthropic Messages mock on 127.0.0.1 (a provider
 * of opencode's bundled `@ai-sdk/anthropic` pointed at it), hermetic HOME per test: the ACP scenario
 * suite (text, thinking, tool allowed/rejected, cancels; traffic recorded as
 * test/fixtures/acp/opencode.jsonl for the replay test), and the kit's conformance checks.
 */
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { hermeticOpencode, isMainOpencodeRequest } from '../support/acp-hermetic.js';
import { describePresetAgent } from '../support/acp-preset-suite.js';

const shell = (command: string) => ({ kind: 'tool_use' as const, name: 'bash', input: { command, description: 'run it' } });

describePresetAgent<AnthropicMock>({
  title: 'acp engine with opencode acp',
  preset: 'opencode',
  startMock: () => startAnthropicMock({ consumesQueue: isMainOpencodeRequest }),
  hermetic: (mock, root) => hermeticOpencode({ port: mock.port, root }),
  model: (mock) => ({
    text: (text) => mock.enqueue({ kind: 'text', text }),
    thinking: (thinking, text) => mock.enqueue({ kind: 'thinking', thinking, text }),
    shell: (command) => mock.enqueue(shell(command)),
    slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
  }),
  turnRequests: (mock) => mock.requests.filter(isMainOpencodeRequest).length,
  stall: (mock) => mock.enqueue({ kind: 'text', text: 'a very slow answer that is aborted long before it ends', chunks: 60, delayMs: 500 }),
  // glob runs without asking (only bash and edits ask); a 400 fails the turn (a 5xx or 429 the SDK retries).
  quietTool: (mock, then) => mock.enqueue({ kind: 'tool_use', name: 'glob', input: { pattern: '*' } }, { kind: 'text', text: then }),
  failure: (mock) => mock.enqueue({ kind: 'error', status: 400, message: 'conformance: the model refused the request' }),
});
