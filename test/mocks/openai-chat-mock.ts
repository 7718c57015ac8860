/**
 * A small, scriptable mock of the OpenAI Chat Completions API, for agents that speak it (Qwen Code
 * with `OPENAI_BASE_URL=http://127.0.0.1:<port>/v1`, any OpenAI-compatible provider). Listens on
 * 127.0.0.1 only (port 0 = any free port).
 *
 * - `POST /v1/chat/completions` with `stream: true` takes the next scripted response from the
 *   queue (or, when the queue is empty, echoes the last user text as `Echo: <text>`; after a tool
 *   result it answers `Tool finished.`) and streams it as SSE chunks (`data: <chunk>\n\n`, then
 *   `data: [DONE]`), with a `usage` chunk last (`stream_options.include_usage`).
 * - the same with `stream: false` gets one `chat.completion` and does not consume the queue unless
 *   the queue head is an `error` (agents' helper calls: titles, next-speaker checks).
 * - `GET /v1/models` lists the one model; anything else → 404.
 *
 * Every request is recorded. Usage numbers are small.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openEventStream, split } from './event-stream.js';
import { readRequest, sendJson, startLoopbackServer, type RecordedRequest } from './loopback-server.js';

export type ChatMockResponse =
  | { kind: 'text'; text: string; chunks?: number; delayMs?: number }
  | { kind: 'thinking'; thinking: string; text: string; chunks?: number; delayMs?: number }
  /** A function (tool) call: `name` and its JSON `args`. */
  | { kind: 'tool_call'; name: string; args: Record<string, unknown>; id?: string; delayMs?: number }
  | { kind: 'error'; status: number; message?: string }
  /** The stream opens and sends nothing more until the client goes away (a stalled model). */
  | { kind: 'stall' };

export type ChatMockScript = ChatMockResponse | ((request: RecordedRequest) => ChatMockResponse);

export interface OpenAIChatMock {
  readonly port: number;
  /** `http://127.0.0.1:<port>/v1`, what OPENAI_BASE_URL takes. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  enqueue(...responses: ChatMockScript[]): void;
  pending(): number;
  /** The streamed chat requests (the agent's main turns). */
  streamed(): RecordedRequest[];
  /** Resolves once `count` streamed requests arrived. */
  waitForStreamed(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

/** The last user message's text, or undefined when the conversation ends with a tool result. */
function lastUserText(body: any): string | undefined {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

export interface OpenAIChatMockOptions {
  /**
   * Which streamed requests take the next scripted answer (default: all). Agents make requests of
   * their own besides the user's turn (Qwen Code's background forks); those get the default answer.
   */
  consumesQueue?: (request: RecordedRequest) => boolean;
}

export async function startOpenAIChatMock(options: OpenAIChatMockOptions = {}): Promise<OpenAIChatMock> {
  const requests: RecordedRequest[] = [];
  const queue: ChatMockScript[] = [];
  const held: ServerResponse[] = [];
  const wakers = new Set<() => void>();
  let seq = 0;

  function nextResponse(request: RecordedRequest): ChatMockResponse {
    const script = options.consumesQueue && !options.consumesQueue(request) ? undefined : queue.shift();
    if (script !== undefined) return typeof script === 'function' ? script(request) : script;
    const text = lastUserText(request.body);
    return { kind: 'text', text: text === undefined ? 'Tool finished.' : `Echo: ${text}` };
  }

  async function stream(res: ServerResponse, model: string, response: Exclude<ChatMockResponse, { kind: 'error' }>): Promise<void> {
    const id = `chatcmpl-mock-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const write = openEventStream(res, { delayMs: 'delayMs' in response ? (response.delayMs ?? 0) : 0, stopped: () => server.closed });
    if (response.kind === 'stall') {
      held.push(res);
      await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      return; // held open until the client goes away or the mock closes
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    await chunk({ role: 'assistant', content: '' });
    if (response.kind === 'thinking') for (const piece of split(response.thinking, response.chunks ?? 3)) await chunk({ reasoning_content: piece });
    if (response.kind === 'tool_call') {
      await chunk({ tool_calls: [{ index: 0, id: response.id ?? `call_mock_${seq}`, type: 'function', function: { name: response.name, arguments: JSON.stringify(response.args) } }] });
      await chunk({}, 'tool_calls');
    } else {
      for (const piece of split(response.text, response.chunks ?? 3)) await chunk({ content: piece });
      await chunk({}, 'stop');
    }
    await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: USAGE })}\n\n`);
    await write('data: [DONE]\n\n');
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await readRequest(req);
    requests.push(request);
    for (const wake of [...wakers]) wake();
    const { method, pathname, body } = request;
    if (method === 'GET' && pathname === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }] });
      return;
    }
    if (method !== 'POST' || pathname !== '/v1/chat/completions') {
      sendJson(res, 404, { error: { message: `mock: no route for ${method} ${pathname}`, type: 'invalid_request_error' } });
      return;
    }
    const model = String(body?.model ?? 'mock-model');
    const head = queue[0];
    if (head && typeof head !== 'function' && head.kind === 'error' && (!options.consumesQueue || options.consumesQueue(request))) {
      queue.shift();
      sendJson(res, head.status, { error: { message: head.message ?? `mock ${head.status}`, type: 'server_error', code: null } });
      return;
    }
    if (body?.stream !== true) {
      sendJson(res, 200, { id: `chatcmpl-mock-${++seq}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }], usage: USAGE });
      return;
    }
    const response = nextResponse(request);
    if (response.kind === 'error') {
      sendJson(res, response.status, { error: { message: response.message ?? `mock ${response.status}`, type: 'server_error', code: null } });
      return;
    }
    await stream(res, model, response);
  }

  const server = await startLoopbackServer({
    handle,
    internalError: (res, error) => sendJson(res, 500, { error: { message: String(error), type: 'server_error' } }),
    beforeClose: () => {
      for (const res of held.splice(0)) res.destroy();
    },
  });
  const streamed = () => requests.filter((r) => r.method === 'POST' && r.pathname === '/v1/chat/completions' && r.body?.stream === true);
  return {
    port: server.port,
    baseUrl: `${server.baseUrl}/v1`,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    pending: () => queue.length,
    streamed,
    waitForStreamed: (count, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (streamed().length < count) return;
          clearTimeout(timer);
          wakers.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          wakers.delete(check);
          reject(new Error(`openai chat mock: ${streamed().length} streamed requests, waited for ${count}`));
        }, timeoutMs);
        wakers.add(check);
        check();
      }),
    close: server.close,
  };
}
