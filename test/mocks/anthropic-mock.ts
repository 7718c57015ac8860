/**
 * A small, scriptable mock of the Anthropic Messages API for driving the real
 * Claude Code CLI hermetically. Listens on 127.0.0.1 only (port 0 = any free port).
 *
 * - `POST /v1/messages` (any query, e.g. `?beta=true`) with `stream: true` takes the next
 *   scripted response from the queue (or, when the queue is empty, echoes the last user text as
 *   `Echo: <text>`) and streams it as SSE.
 * - `POST /v1/messages` with `stream: false` (e.g. the CLI's `set_model` probe) gets a plain
 *   Message JSON and does NOT consume the queue (unless the queue head is an `error`).
 * - `POST /v1/messages/count_tokens` → `{"input_tokens": N}`.
 * - anything else → 404 with an Anthropic error body.
 *
 * Every request is recorded (method, path, headers, parsed body). Usage numbers are kept small so
 * the CLI never auto-compacts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { openEventStream, split, sseEvent } from './event-stream.js';
import { readRequest, sendJson as writeJson, startLoopbackServer, type RecordedRequest } from './loopback-server.js';

export type { RecordedRequest } from './loopback-server.js';

export type MockResponse =
  | {
      kind: 'text';
      text: string;
      /** how many text_delta pieces (default 3) */
      chunks?: number;
      stopReason?: string;
      /** delay between SSE events in ms (a "slow stream") */
      delayMs?: number;
    }
  | {
      kind: 'tool_use';
      name: string;
      input: Record<string, unknown>;
      id?: string;
      /** optional text block emitted before the tool_use block */
      text?: string;
      chunks?: number;
      delayMs?: number;
    }
  | {
      kind: 'thinking';
      thinking: string;
      text: string;
      signature?: string;
      chunks?: number;
      delayMs?: number;
    }
  | {
      kind: 'error';
      status: number;
      /** Anthropic error type, e.g. `invalid_request_error`, `overloaded_error` */
      errorType?: string;
      message?: string;
    };

/** A scripted entry: a fixed response, or a function of the recorded request. */
export type MockScript = MockResponse | ((request: RecordedRequest) => MockResponse);

export interface AnthropicMockOptions {
  /** value returned by count_tokens (default 42) */
  countTokens?: number;
  /** usage.input_tokens reported in message_start (default 12) */
  inputTokens?: number;
  /**
   * Which streaming requests take the next scripted response (default: all). The others get the
   * echo, so an agent's own helper calls (e.g. claude-code-acp's haiku requests, which arrive at
   * unpredictable moments) cannot eat the responses scripted for the main conversation.
   */
  consumesQueue?: (request: RecordedRequest) => boolean;
}

export interface AnthropicMock {
  readonly port: number;
  readonly baseUrl: string;
  /** every request received, in order */
  readonly requests: RecordedRequest[];
  /** append scripted responses to the queue */
  enqueue(...responses: MockScript[]): void;
  /** number of scripted responses not yet consumed */
  pending(): number;
  close(): Promise<void>;
}

const SYSTEM_REMINDER = /^\s*<system-reminder>/;

/** The last `role:"user"` message's last text block that is not a `<system-reminder>`. */
export function lastUserText(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') {
      return SYSTEM_REMINDER.test(message.content) ? '' : message.content;
    }
    const blocks: any[] = Array.isArray(message.content) ? message.content : [];
    for (let j = blocks.length - 1; j >= 0; j--) {
      const block = blocks[j];
      if (block?.type === 'text' && typeof block.text === 'string' && !SYSTEM_REMINDER.test(block.text)) {
        return block.text;
      }
    }
    return '';
  }
  return '';
}

function errorTypeFor(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

const requestId = () => `req_mock_${randomUUID().replace(/-/g, '')}`;

/** Every Anthropic response carries a `request-id`. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  writeJson(res, status, body, { 'request-id': requestId() });
}

export async function startAnthropicMock(options: AnthropicMockOptions = {}): Promise<AnthropicMock> {
  const countTokens = options.countTokens ?? 42;
  const inputTokens = options.inputTokens ?? 12;
  const requests: RecordedRequest[] = [];
  const queue: MockScript[] = [];

  const usage = (outputTokens: number) => ({
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  });

  async function stream(res: ServerResponse, request: RecordedRequest, response: Exclude<MockResponse, { kind: 'error' }>) {
    const delayMs = response.delayMs ?? 0;
    const chunks = response.chunks ?? 3;
    const model = typeof request.body?.model === 'string' ? request.body.model : 'claude-mock';
    const messageId = `msg_mock_${randomUUID().replace(/-/g, '')}`;
    const write = openEventStream(res, { delayMs, stopped: () => server.closed, headers: { 'request-id': requestId() } });
    const send = (event: Record<string, unknown> & { type: string }) => write(sseEvent(event.type, event));
    let index = 0;
    let outputTokens = 0;
    const textBlock = async (text: string) => {
      await send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of split(text, chunks)) {
        await send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      }
      await send({ type: 'content_block_stop', index });
      outputTokens += Math.max(1, Math.ceil(text.length / 4));
      index++;
    };

    await send({
      type: 'message_start',
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(1),
      },
    });
    let stopReason = 'end_turn';
    if (response.kind === 'text') {
      await textBlock(response.text);
      stopReason = response.stopReason ?? 'end_turn';
    } else if (response.kind === 'thinking') {
      await send({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of split(response.thinking, chunks)) {
        await send({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
      }
      await send({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: response.signature ?? 'mock-signature' },
      });
      await send({ type: 'content_block_stop', index });
      outputTokens += Math.max(1, Math.ceil(response.thinking.length / 4));
      index++;
      await textBlock(response.text);
    } else {
      if (response.text) await textBlock(response.text);
      const id = response.id ?? `toolu_mock_${randomUUID().replace(/-/g, '')}`;
      await send({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: response.name, input: {} } });
      const json = JSON.stringify(response.input);
      for (const piece of split(json, chunks)) {
        await send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
      await send({ type: 'content_block_stop', index });
      outputTokens += Math.max(1, Math.ceil(json.length / 4));
      index++;
      stopReason = 'tool_use';
    }
    await send({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    });
    await send({ type: 'message_stop' });
    res.end();
  }

  function nextResponse(request: RecordedRequest): MockResponse {
    const script = options.consumesQueue && !options.consumesQueue(request) ? undefined : queue.shift();
    if (script === undefined) return { kind: 'text', text: `Echo: ${lastUserText(request.body)}` };
    return typeof script === 'function' ? script(request) : script;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await readRequest(req);
    const { pathname, body } = request;
    requests.push(request);

    if (request.method === 'POST' && pathname === '/v1/messages/count_tokens') {
      sendJson(res, 200, { input_tokens: countTokens });
      return;
    }
    if (request.method === 'POST' && pathname === '/v1/messages') {
      const head = queue[0];
      const streaming = body?.stream === true;
      if (!streaming && !(head && typeof head !== 'function' && head.kind === 'error')) {
        // Non-streaming (e.g. the set_model probe): plain Message JSON, queue untouched.
        const text = `Echo: ${lastUserText(body)}`;
        sendJson(res, 200, {
          id: `msg_mock_${randomUUID().replace(/-/g, '')}`,
          type: 'message',
          role: 'assistant',
          model: typeof body?.model === 'string' ? body.model : 'claude-mock',
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: usage(Math.max(1, Math.ceil(text.length / 4))),
        });
        return;
      }
      const response = nextResponse(request);
      if (response.kind === 'error') {
        sendJson(res, response.status, {
          type: 'error',
          error: { type: response.errorType ?? errorTypeFor(response.status), message: response.message ?? `mock ${response.status}` },
        });
        return;
      }
      await stream(res, request, response);
      return;
    }
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `mock: no route for ${request.method} ${pathname}` } });
  }

  const server = await startLoopbackServer({
    handle,
    internalError: (res, error) => sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(error) } }),
  });

  return {
    port: server.port,
    baseUrl: server.baseUrl,
    requests,
    enqueue: (...responses) => {
      queue.push(...responses);
    },
    pending: () => queue.length,
    close: server.close,
  };
}
