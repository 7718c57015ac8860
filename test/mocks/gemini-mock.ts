/**
 * A small, scriptable mock of the Gemini API (generativelanguage v1beta) for driving the real
 * gemini-cli hermetically (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>`). Listens on
 * 127.0.0.1 only (port 0 = any free port).
 *
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` takes the next scripted response
 *   from the queue (or, when the queue is empty, echoes the last user text as `Echo: <text>`;
 *   after a function response it answers `Tool finished: <name>`) and streams it as SSE
 *   (`data: <GenerateContentResponse>\r\n\r\n`).
 * - `POST …:generateContent` (gemini-cli's JSON-mode helper calls: next-speaker check, model
 *   router, loop detection, …) answers a JSON object built from the request's response schema
 *   (first enum value / empty values), never consuming the queue — unless the queue head is an
 *   `error`.
 * - `POST …:countTokens` → `{ totalTokens }`; anything else → 404.
 *
 * Every request is recorded (method, path, parsed body). Usage numbers are small.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openEventStream, split } from './event-stream.js';
import { readRequest, sendJson as writeJson, startLoopbackServer } from './loopback-server.js';

export type GeminiMockResponse =
  | {
      kind: 'text';
      text: string;
      /** how many SSE chunks (default 3) */
      chunks?: number;
      /** delay between SSE chunks in ms (a "slow stream") */
      delayMs?: number;
    }
  | {
      kind: 'thinking';
      thinking: string;
      text: string;
      chunks?: number;
      delayMs?: number;
    }
  | {
      /** e.g. `run_shell_command {command}` or `write_file {file_path, content}` */
      kind: 'function_call';
      name: string;
      args: Record<string, unknown>;
      /** optional text streamed before the call */
      text?: string;
      delayMs?: number;
    }
  | { kind: 'error'; status: number; message?: string };

export type GeminiMockScript = GeminiMockResponse | ((request: GeminiRecordedRequest) => GeminiMockResponse);

export interface GeminiRecordedRequest {
  method: string;
  url: string;
  pathname: string;
  /** `streamGenerateContent`, `generateContent`, `countTokens`, … (after the `:`) */
  action: string;
  /** the model segment of the path */
  model: string;
  body: any;
  at: number;
}

export interface GeminiMock {
  readonly port: number;
  readonly baseUrl: string;
  readonly requests: GeminiRecordedRequest[];
  enqueue(...responses: GeminiMockScript[]): void;
  pending(): number;
  /** Requests of one action (`streamGenerateContent` = the agent's main turns). */
  requestsFor(action: string): GeminiRecordedRequest[];
  close(): Promise<void>;
}

/** The last user turn's text, or `function:<name>` when it carries a function response. */
export function lastUserTurn(body: any): { text: string; functionResponse?: string } {
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c?.role !== 'user') continue;
    const parts: any[] = Array.isArray(c.parts) ? c.parts : [];
    const fr = parts.find((p) => p?.functionResponse);
    if (fr) return { text: '', functionResponse: String(fr.functionResponse.name ?? 'tool') };
    const texts = parts.filter((p) => typeof p?.text === 'string').map((p) => p.text as string);
    return { text: texts.at(-1) ?? '' };
  }
  return { text: '' };
}

/** A value satisfying a (Gemini or JSON) schema: first enum value, empty strings/arrays, 1 (or the minimum), false. */
export function sampleFromSchema(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(schema.type ?? (schema.properties ? 'object' : 'string')).toLowerCase();
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(schema.properties ?? {})) out[key] = sampleFromSchema(value);
      return out;
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      // gemini-cli validates its router's `complexity_score` as 1..100
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    default:
      return '';
  }
}

/**
 * The helper-call answers gemini-cli needs to keep going: the next-speaker check must say `user`
 * (otherwise the CLI asks the model to continue), the model router any valid choice.
 */
function helperAnswer(body: any): unknown {
  const config = body?.generationConfig ?? {};
  const schema = config.responseJsonSchema ?? config.responseSchema;
  const value = sampleFromSchema(schema) as Record<string, unknown>;
  if (value && typeof value === 'object' && 'next_speaker' in value) value['next_speaker'] = 'user';
  return value;
}

export async function startGeminiMock(): Promise<GeminiMock> {
  const requests: GeminiRecordedRequest[] = [];
  const queue: GeminiMockScript[] = [];
  let seq = 0;

  const usage = (out: number) => ({ promptTokenCount: 12, candidatesTokenCount: out, totalTokenCount: 12 + out });

  function sendJson(res: ServerResponse, status: number, body: unknown): void {
    writeJson(res, status, body, { 'content-type': 'application/json; charset=UTF-8' });
  }

  function nextResponse(request: GeminiRecordedRequest): GeminiMockResponse {
    const script = queue.shift();
    if (script !== undefined) return typeof script === 'function' ? script(request) : script;
    const last = lastUserTurn(request.body);
    return { kind: 'text', text: last.functionResponse ? `Tool finished: ${last.functionResponse}` : `Echo: ${last.text}` };
  }

  async function stream(res: ServerResponse, request: GeminiRecordedRequest, response: Exclude<GeminiMockResponse, { kind: 'error' }>) {
    const responseId = `mock-resp-${++seq}`;
    const write = openEventStream(res, { delayMs: response.delayMs ?? 0, stopped: () => server.closed });
    const send = (parts: unknown[], finish?: string, out = 1) => {
      const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
      if (finish) candidate['finishReason'] = finish;
      const chunk = { candidates: [candidate], usageMetadata: usage(out), modelVersion: request.model, responseId };
      return write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    };
    if (response.kind === 'thinking') {
      for (const piece of split(response.thinking, response.chunks ?? 3)) await send([{ text: piece, thought: true }]);
    }
    if (response.kind === 'function_call') {
      if (response.text) await send([{ text: response.text }]);
      await send([{ functionCall: { name: response.name, args: response.args } }], 'STOP', 5);
    } else {
      const pieces = split(response.text, response.chunks ?? 3);
      for (let i = 0; i < pieces.length; i++) await send([{ text: pieces[i] }], i === pieces.length - 1 ? 'STOP' : undefined, i + 1);
    }
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { method, url, pathname, body, at } = await readRequest(req);
    const match = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
    const request: GeminiRecordedRequest = { method, url, pathname, action: match?.[2] ?? '', model: match?.[1] ?? '', body, at };
    requests.push(request);
    if (request.method !== 'POST' || !match) {
      sendJson(res, 404, { error: { code: 404, message: `mock: no route for ${request.method} ${pathname}`, status: 'NOT_FOUND' } });
      return;
    }
    const head = queue[0];
    if (head && typeof head !== 'function' && head.kind === 'error' && (request.action === 'streamGenerateContent' || request.action === 'generateContent')) {
      queue.shift();
      sendJson(res, head.status, { error: { code: head.status, message: head.message ?? `mock ${head.status}`, status: head.status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } });
      return;
    }
    switch (request.action) {
      case 'countTokens':
        sendJson(res, 200, { totalTokens: 42 });
        return;
      case 'generateContent':
        sendJson(res, 200, {
          candidates: [{ content: { role: 'model', parts: [{ text: JSON.stringify(helperAnswer(body)) }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: usage(5),
          modelVersion: request.model,
        });
        return;
      case 'streamGenerateContent': {
        const response = nextResponse(request);
        if (response.kind === 'error') {
          sendJson(res, response.status, { error: { code: response.status, message: response.message ?? `mock ${response.status}`, status: 'INTERNAL' } });
          return;
        }
        await stream(res, request, response);
        return;
      }
      default:
        sendJson(res, 404, { error: { code: 404, message: `mock: unsupported action ${request.action}`, status: 'NOT_FOUND' } });
    }
  }

  const server = await startLoopbackServer({
    handle,
    internalError: (res, error) => sendJson(res, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } }),
  });
  return {
    port: server.port,
    baseUrl: server.baseUrl,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    pending: () => queue.length,
    requestsFor: (action) => requests.filter((r) => r.action === action),
    close: server.close,
  };
}
