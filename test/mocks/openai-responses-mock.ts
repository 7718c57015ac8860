/**
 * A small, scriptable mock of the OpenAI Responses API (`POST /v1/responses`, SSE) for driving the
 * real Codex binaries (codex 0.169.0 exec/app-server, 0.153.4 mcp-server, zed codex-acp 0.16.0)
 * hermetically. Listens on 127.0.0.1 only (port 0 = any free port). Modelled on anthropic-mock.ts.
 *
 * - `POST /v1/responses` takes the next scripted reply from the queue (a fixed reply, or a function
 *   of the recorded request) and streams it as SSE. When the queue is empty it echoes the last
 *   real user text as `Echo: <text>` (texts Codex injects itself, such as `<environment_context>`
 *   or AGENTS.md, are skipped).
 * - anything else → 404 with an OpenAI-style JSON error body.
 *
 * Every request is recorded (method, path, headers, parsed body, time). Tool names differ between
 * Codex versions and front ends (`exec_command` in 0.169/0.153.4/codex-acp, `shell` in older
 * models' tool sets, custom `apply_patch`), so tool-call replies take the tool name and arguments
 * verbatim: the caller picks. See /work/shared/reference/codex.md §3 for what the binaries send.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { openEventStream, split, sseEvent } from './event-stream.js';
import { readRequest, sendJson, startLoopbackServer, type RecordedRequest } from './loopback-server.js';

export type { RecordedRequest } from './loopback-server.js';

/** Token usage reported in `response.completed` (Responses API shape, flattened). */
export interface MockUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens: number;
}

/** One output item the mock model produces, in order. */
export type MockOutputItem =
  | { type: 'message'; text: string; id?: string; /** text_delta pieces (default 3) */ chunks?: number }
  | { type: 'reasoning'; summary: string; id?: string; chunks?: number }
  | {
      type: 'function_call';
      /** tool name exactly as offered by the binary, e.g. `exec_command`, `shell`, `update_plan` */
      name: string;
      /** object (JSON-encoded for the wire) or an already-encoded string */
      arguments: Record<string, unknown> | string;
      callId?: string;
      id?: string;
      /** the tool's namespace when it is offered inside one (e.g. `collaboration` for `spawn_agent`) */
      namespace?: string;
    }
  | {
      type: 'custom_tool_call';
      /** freeform tool name, e.g. `apply_patch` */
      name: string;
      input: string;
      callId?: string;
      id?: string;
    };

interface StreamOptions {
  /** delay after every SSE event in ms (a "slow stream") */
  delayMs?: number;
  /** override parts of the usage reported in `response.completed` */
  usage?: Partial<MockUsage>;
}

export type MockReply =
  | ({
      kind: 'text';
      text: string;
      /** optional reasoning summary emitted before the text (Codex: "thinking") */
      reasoning?: string;
      chunks?: number;
    } & StreamOptions)
  | ({
      kind: 'tool_call';
      name: string;
      arguments: Record<string, unknown> | string;
      callId?: string;
      /** the tool's namespace (e.g. `collaboration` for `spawn_agent`) */
      namespace?: string;
      /** optional assistant text before the call */
      text?: string;
      reasoning?: string;
    } & StreamOptions)
  | ({ kind: 'custom_tool_call'; name: string; input: string; callId?: string; text?: string; reasoning?: string } & StreamOptions)
  /** the general form: any sequence of output items in one response */
  | ({ kind: 'items'; items: MockOutputItem[] } & StreamOptions)
  /** `response.failed` after `response.created` (Codex: "stream disconnected before completion: <message>") */
  | ({ kind: 'failed'; message: string; code?: string } & StreamOptions)
  /**
   * `response.created`, optionally some text deltas, then nothing: the stream stays open until the
   * client disconnects or the mock closes. For interrupt/abort tests (wait on `requests` instead of sleeping).
   */
  | { kind: 'stall'; partialText?: string }
  /** a plain HTTP error status with a JSON error body */
  | { kind: 'error'; status: number; message?: string; code?: string; type?: string };

/** A scripted entry: a fixed reply, or a function of the recorded request. */
export type MockScript = MockReply | ((request: RecordedRequest) => MockReply);

export interface OpenAIResponsesMockOptions {
  /** input tokens reported per response (default 100) */
  inputTokens?: number;
  /** cached input tokens reported per response (default 0) */
  cachedInputTokens?: number;
}

export interface OpenAIResponsesMock {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>/v1`: what Codex's `model_providers.<id>.base_url` must be */
  readonly providerBaseUrl: string;
  /** every request received, in order */
  readonly requests: RecordedRequest[];
  /** only the `POST /v1/responses` requests, in order */
  responsesRequests(): RecordedRequest[];
  /** append scripted replies to the queue */
  enqueue(...replies: MockScript[]): void;
  /** number of scripted replies not yet consumed */
  pending(): number;
  /**
   * Resolves once at least `count` `POST /v1/responses` requests have arrived (waits on the
   * request, not on a timer). Rejects after `timeoutMs` (default 20 s) naming what it saw.
   */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/** Codex's own request for a title of the first prompt (its terminal UI sends it beside the turn). */
export function isTitleRequest(request: RecordedRequest): boolean {
  return lastUserText(request.body).startsWith('Generate a concise, single-line task title');
}

/** Injected context Codex sends as user messages; never the user's own text. */
const INJECTED_USER_TEXT = [
  /^\s*<([a-z_][\w-]*)\b[^>]*>[\s\S]*<\/\1>\s*$/i, // whole text wrapped in one tag: <environment_context>…, <user_instructions>…
  /^\s*# AGENTS\.md instructions/i,
];

function isInjected(text: string): boolean {
  return INJECTED_USER_TEXT.some((re) => re.test(text));
}

function inputItems(body: any): any[] {
  return Array.isArray(body?.input) ? body.input : [];
}

function textsOf(item: any): string[] {
  if (typeof item?.content === 'string') return [item.content];
  const parts: any[] = Array.isArray(item?.content) ? item.content : [];
  return parts.filter((p) => typeof p?.text === 'string' && (p.type === 'input_text' || p.type === 'text')).map((p) => p.text as string);
}

/** Index of the last `role:"user"` message that carries real (non-injected) user text, or -1. */
function lastUserIndex(body: any): number {
  const items = inputItems(body);
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue;
    if (textsOf(item).some((t) => !isInjected(t))) return i;
  }
  return -1;
}

/** The last real user text of a Responses request body ('' when none). */
export function lastUserText(body: any): string {
  const index = lastUserIndex(body);
  if (index < 0) return '';
  const texts = textsOf(inputItems(body)[index]).filter((t) => !isInjected(t));
  return texts[texts.length - 1] ?? '';
}

export interface ToolOutput {
  type: 'function_call_output' | 'custom_tool_call_output';
  callId: string;
  /** the output text Codex sends back (object outputs are JSON-encoded) */
  output: string;
}

/**
 * Tool outputs that follow the last real user message: `[]` on the first request of a turn, one
 * entry per completed call afterwards. Scripts use it to answer "after the tool ran".
 */
export function toolOutputsSinceLastUser(body: any): ToolOutput[] {
  const items = inputItems(body).slice(lastUserIndex(body) + 1);
  return items
    .filter((i) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output')
    .map((i) => ({
      type: i.type,
      callId: String(i.call_id ?? ''),
      output: typeof i.output === 'string' ? i.output : JSON.stringify(i.output),
    }));
}

/** The names of the tools a request offers (function, custom, namespace… tools). */
export function offeredToolNames(body: any): string[] {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((t) => String(t?.name ?? t?.type ?? '')).filter((n) => n !== '');
}

/** `exec_command` arguments (codex 0.169 / 0.153.4 / codex-acp): runs `cmd` in a login bash. */
export function execCommandCall(cmd: string, extra: Record<string, unknown> = {}): MockReply {
  return { kind: 'tool_call', name: 'exec_command', arguments: { cmd, yield_time_ms: 10_000, ...extra } };
}

/** A custom `apply_patch` call with a complete `*** Begin Patch … *** End Patch` body. */
export function applyPatchCall(patch: string): MockReply {
  return { kind: 'custom_tool_call', name: 'apply_patch', input: patch };
}

/** Turns the convenience reply kinds into the general item list. */
function itemsOf(reply: Extract<MockReply, { kind: 'text' | 'tool_call' | 'custom_tool_call' | 'items' }>): MockOutputItem[] {
  switch (reply.kind) {
    case 'items':
      return reply.items;
    case 'text':
      return [
        ...(reply.reasoning !== undefined ? [{ type: 'reasoning' as const, summary: reply.reasoning }] : []),
        { type: 'message', text: reply.text, ...(reply.chunks !== undefined ? { chunks: reply.chunks } : {}) },
      ];
    case 'tool_call':
    case 'custom_tool_call': {
      const before: MockOutputItem[] = [
        ...(reply.reasoning !== undefined ? [{ type: 'reasoning' as const, summary: reply.reasoning }] : []),
        ...(reply.text !== undefined ? [{ type: 'message' as const, text: reply.text }] : []),
      ];
      const call: MockOutputItem =
        reply.kind === 'tool_call'
          ? { type: 'function_call', name: reply.name, arguments: reply.arguments, ...(reply.callId ? { callId: reply.callId } : {}), ...(reply.namespace ? { namespace: reply.namespace } : {}) }
          : { type: 'custom_tool_call', name: reply.name, input: reply.input, ...(reply.callId ? { callId: reply.callId } : {}) };
      return [...before, call];
    }
  }
}

export async function startOpenAIResponsesMock(options: OpenAIResponsesMockOptions = {}): Promise<OpenAIResponsesMock> {
  const baseInput = options.inputTokens ?? 100;
  const baseCached = options.cachedInputTokens ?? 0;
  const requests: RecordedRequest[] = [];
  const queue: MockScript[] = [];
  const stalled = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  // A random prefix per mock keeps item ids unique across mock instances (a resumed thread
  // served by a second mock must not repeat `msg_…` ids: consumers dedupe on them).
  const idPrefix = randomBytes(4).toString('hex');
  let counter = 0;
  const nextId = (kind: string) => `${kind}_${idPrefix}${(counter++).toString(36)}`;

  async function stream(res: ServerResponse, request: RecordedRequest, reply: Exclude<MockReply, { kind: 'error' }>): Promise<void> {
    const model = typeof request.body?.model === 'string' ? request.body.model : 'mock-model';
    const responseId = nextId('resp');
    const delayMs = 'delayMs' in reply ? (reply.delayMs ?? 0) : 0;
    let sequence = 0;
    const write = openEventStream(res, { delayMs, stopped: () => server.closed });
    const send = (event: Record<string, unknown> & { type: string }) => write(sseEvent(event.type, { ...event, sequence_number: sequence++ }));
    const responseObject = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
      id: responseId,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status,
      model,
      output,
      ...extra,
    });

    await send({ type: 'response.created', response: responseObject('in_progress', []) });

    if (reply.kind === 'stall') {
      if (reply.partialText) {
        const id = nextId('msg');
        await send({ type: 'response.output_item.added', output_index: 0, item: { id, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
        await send({ type: 'response.output_text.delta', item_id: id, output_index: 0, content_index: 0, delta: reply.partialText });
      }
      // Hold the stream open; close() (or the client going away) ends it.
      stalled.add(res);
      await new Promise<void>((resolve) => res.on('close', resolve));
      stalled.delete(res);
      return;
    }
    if (reply.kind === 'failed') {
      await send({
        type: 'response.failed',
        response: responseObject('failed', [], { error: { code: reply.code ?? 'server_error', message: reply.message } }),
      });
      res.end();
      return;
    }

    const output: unknown[] = [];
    let outputTokens = 0;
    let reasoningTokens = 0;
    const items = itemsOf(reply);
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      if (item.type === 'message') {
        const id = item.id ?? nextId('msg');
        await send({ type: 'response.output_item.added', output_index: index, item: { id, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
        await send({ type: 'response.content_part.added', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        for (const piece of split(item.text, item.chunks ?? 3)) {
          await send({ type: 'response.output_text.delta', item_id: id, output_index: index, content_index: 0, delta: piece });
        }
        const done = { id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: item.text, annotations: [] }] };
        await send({ type: 'response.output_item.done', output_index: index, item: done });
        output.push(done);
        outputTokens += Math.max(1, Math.ceil(item.text.length / 4));
      } else if (item.type === 'reasoning') {
        const id = item.id ?? nextId('rs');
        await send({ type: 'response.output_item.added', output_index: index, item: { id, type: 'reasoning', summary: [] } });
        await send({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        for (const piece of split(item.summary, item.chunks ?? 2)) {
          await send({ type: 'response.reasoning_summary_text.delta', item_id: id, output_index: index, summary_index: 0, delta: piece });
        }
        const done = { id, type: 'reasoning', summary: [{ type: 'summary_text', text: item.summary }] };
        await send({ type: 'response.output_item.done', output_index: index, item: done });
        output.push(done);
        reasoningTokens += Math.max(1, Math.ceil(item.summary.length / 4));
      } else if (item.type === 'function_call') {
        const id = item.id ?? nextId('fc');
        const callId = item.callId ?? nextId('call');
        const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments);
        const namespace = item.namespace ? { namespace: item.namespace } : {};
        await send({ type: 'response.output_item.added', output_index: index, item: { id, type: 'function_call', status: 'in_progress', name: item.name, ...namespace, arguments: '', call_id: callId } });
        const done = { id, type: 'function_call', status: 'completed', name: item.name, ...namespace, arguments: args, call_id: callId };
        await send({ type: 'response.output_item.done', output_index: index, item: done });
        output.push(done);
        outputTokens += Math.max(1, Math.ceil(args.length / 4));
      } else {
        const id = item.id ?? nextId('ctc');
        const callId = item.callId ?? nextId('call');
        await send({ type: 'response.output_item.added', output_index: index, item: { id, type: 'custom_tool_call', status: 'in_progress', name: item.name, input: '', call_id: callId } });
        const done = { id, type: 'custom_tool_call', status: 'completed', name: item.name, input: item.input, call_id: callId };
        await send({ type: 'response.output_item.done', output_index: index, item: done });
        output.push(done);
        outputTokens += Math.max(1, Math.ceil(item.input.length / 4));
      }
    }
    const usage: MockUsage = {
      inputTokens: baseInput,
      cachedInputTokens: baseCached,
      outputTokens: outputTokens + reasoningTokens,
      reasoningOutputTokens: reasoningTokens,
      ...reply.usage,
    };
    await send({
      type: 'response.completed',
      response: responseObject('completed', output, {
        usage: {
          input_tokens: usage.inputTokens,
          input_tokens_details: { cached_tokens: usage.cachedInputTokens },
          output_tokens: usage.outputTokens,
          output_tokens_details: { reasoning_tokens: usage.reasoningOutputTokens },
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      }),
    });
    res.end();
  }

  function nextReply(request: RecordedRequest): MockReply {
    // Codex's terminal UI asks the model for a title of its first prompt, alongside the turn and at
    // times of its own: that request is never a turn, so it never takes a scripted turn reply (it
    // took the first one whenever it won the race, and the turn got the second).
    if (isTitleRequest(request)) return { kind: 'text', text: 'A task title' };
    const script = queue.shift();
    if (script === undefined) return { kind: 'text', text: `Echo: ${lastUserText(request.body)}` };
    return typeof script === 'function' ? script(request) : script;
  }

  const isResponsesRequest = (r: RecordedRequest) => r.method === 'POST' && r.pathname === '/v1/responses';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await readRequest(req);
    requests.push(request);
    for (const wake of [...waiters]) wake();

    if (isResponsesRequest(request)) {
      const reply = nextReply(request);
      if (reply.kind === 'error') {
        sendJson(res, reply.status, {
          error: { message: reply.message ?? `mock ${reply.status}`, type: reply.type ?? 'invalid_request_error', param: null, code: reply.code ?? null },
        });
        return;
      }
      await stream(res, request, reply);
      return;
    }
    sendJson(res, 404, { error: { message: `mock: no route for ${request.method} ${request.pathname}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
  }

  const server = await startLoopbackServer({
    handle,
    internalError: (res, error) => sendJson(res, 500, { error: { message: String(error), type: 'server_error', param: null, code: null } }),
    beforeClose: () => {
      for (const res of stalled) res.destroy();
    },
  });
  const responsesRequests = () => requests.filter(isResponsesRequest);

  return {
    port: server.port,
    baseUrl: server.baseUrl,
    providerBaseUrl: `${server.baseUrl}/v1`,
    requests,
    responsesRequests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    pending: () => queue.length,
    waitForRequests: (count, timeoutMs = 20_000) =>
      new Promise<RecordedRequest>((resolve, reject) => {
        const check = () => {
          const seen = responsesRequests();
          if (seen.length < count) return false;
          cleanup();
          resolve(seen[count - 1]!);
          return true;
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`mock: waited ${timeoutMs} ms for ${count} /v1/responses request(s), saw ${responsesRequests().length}`));
        }, timeoutMs);
        const wake = () => void check();
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        waiters.add(wake);
        check();
      }),
    close: server.close,
  };
}
