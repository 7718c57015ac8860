/**
 * A small JSON-RPC 2.0 peer over an NDJSON stream, knowing nothing of any one agent. Both Codex
 * engines use it (`codex mcp-server` speaks JSON-RPC 2.0; `codex app-server` speaks the same
 * without the `jsonrpc` member, which it tolerates when sent).
 *
 * - Requests in both directions. Ours get numeric ids, a timeout and an AbortSignal; theirs are
 *   handed to a handler and ALWAYS answered: a method without a handler gets a JSON-RPC error
 *   (-32601), never silence, because the agent blocks its turn on an unanswered request.
 * - Notifications in both directions.
 * - Requests that by protocol never get a response (an MCP `tools/call` after
 *   `notifications/cancelled`) are given up locally with {@link JsonRpcPeer.forget}.
 * - Malformed or unmatched messages are reported to `onInvalid` and skipped, never thrown.
 */
import { AgentError, AseError, toAseError } from '../../errors.js';
import type { ErrorCode } from '../../events/error-codes.js';
import type { NdjsonWriter } from './ndjson.js';

export type JsonRpcId = number | string;

/**
 * What a request handler throws to answer with a specific JSON-RPC error (anything else it throws
 * is answered with -32603): an AseError (code `PROTOCOL_ERROR` unless given) with the `rpcCode`,
 * and any data for the agent, in its details.
 */
export function rpcError(rpcCode: number, message: string, data?: unknown, code: ErrorCode = 'PROTOCOL_ERROR'): AseError<RpcErrorDetails> {
  return new AseError(code, message, { details: { rpcCode, ...(data !== undefined && { data }) } });
}

/** The JSON-RPC error an AseError asks to be answered with (see {@link rpcError}), if any. */
export function rpcErrorDetails(error: unknown): RpcErrorDetails | undefined {
  const details = error instanceof AseError ? (error.details as Partial<RpcErrorDetails> | undefined) : undefined;
  return typeof details?.rpcCode === 'number' ? { rpcCode: details.rpcCode, ...(details.data !== undefined && { data: details.data }) } : undefined;
}

export type RpcErrorDetails = {
  rpcCode: number;
  data?: unknown;
};

export const INVALID_PARAMS = -32602;
export const METHOD_NOT_FOUND = -32601;
export const INTERNAL_ERROR = -32603;

export interface InvalidMessage {
  reason: string;
  raw: unknown;
}

type Timer = { readonly id: number } | ReturnType<typeof setTimeout>;
export interface JsonRpcTimers {
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(handle: Timer): void;
}

const defaultTimers: JsonRpcTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Handles one request from the remote; its return value (or a thrown {@link rpcError}) is the answer. */
export type RequestHandler = (params: unknown, id: JsonRpcId) => unknown;
export type NotificationListener = (method: string, params: unknown) => void;

export interface JsonRpcPeerOptions {
  /** Only `write` is used: one value per line. */
  writer: Pick<NdjsonWriter, 'write'>;
  /** Send `"jsonrpc": "2.0"` on every message (MCP requires it; app-server tolerates it). Default true. */
  jsonrpcField?: boolean;
  timers?: JsonRpcTimers;
  /** Default request timeout; 0 or Infinity = none. Default 30 s. */
  defaultTimeoutMs?: number;
  onNotification?: NotificationListener;
  onInvalid?: (invalid: InvalidMessage) => void;
  /** An answer to the remote could not be written (the stream went away). */
  onWriteError?: (error: Error) => void;
}

export interface RequestOptions {
  /** Overrides the default timeout; 0 or Infinity = wait forever. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A request in flight: its id is known before the response (MCP routes events by it). */
export interface OutgoingRequest<T = unknown> {
  readonly id: number;
  readonly result: Promise<T>;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: Timer | undefined;
  cleanup: () => void;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is JsonRpcId => typeof value === 'number' || typeof value === 'string';

export class JsonRpcPeer {
  readonly #opts: JsonRpcPeerOptions;
  readonly #timers: JsonRpcTimers;
  readonly #pending = new Map<number, Pending>();
  readonly #handlers = new Map<string, RequestHandler>();
  #nextId = 1;
  #closed: AseError | undefined;

  constructor(options: JsonRpcPeerOptions) {
    this.#opts = options;
    this.#timers = options.timers ?? defaultTimers;
  }

  /** Number of our requests still waiting for a response. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Registers the handler for requests of `method` from the remote (replacing any earlier one). */
  handle(method: string, handler: RequestHandler): void {
    this.#handlers.set(method, handler);
  }

  /** Sends a request and resolves with its `result`. */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.start<T>(method, params, options).result;
  }

  /** Sends a request and returns its id at once, with the eventual result. */
  start<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): OutgoingRequest<T> {
    const id = this.#nextId++;
    if (this.#closed) return { id, result: Promise.reject(this.#closed) };
    if (options.signal?.aborted) return { id, result: Promise.reject(new AseError('CONNECTION_CLOSED', `${method} aborted before it was sent`)) };
    const result = new Promise<T>((resolve, reject) => {
      const onAbort = (): void => void this.#fail(id, new AseError('CONNECTION_CLOSED', `${method} aborted`));
      const entry: Pending = {
        method,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer: undefined,
        cleanup: () => options.signal?.removeEventListener('abort', onAbort),
      };
      const timeoutMs = options.timeoutMs ?? this.#opts.defaultTimeoutMs ?? 30_000;
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.timer = this.#timers.setTimeout(() => void this.#fail(id, new AseError('TIMEOUT', `${method} got no response within ${timeoutMs} ms`, { details: { request: method, timeoutMs } })), timeoutMs);
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, entry);
      this.#write({ id, method, ...(params !== undefined && { params }) }).catch((error: unknown) =>
        this.#fail(id, toAseError(error, 'CONNECTION_CLOSED')),
      );
    });
    return { id, result };
  }

  /** Sends a notification. Rejects when the stream is gone. */
  notify(method: string, params?: unknown): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closed);
    return this.#write({ method, ...(params !== undefined && { params }) });
  }

  /**
   * Gives up on one of our requests locally: its promise rejects (code `CONNECTION_CLOSED`) and a
   * late response is ignored. For requests the protocol never answers (cancelled MCP tool calls).
   */
  forget(id: number, reason: string): boolean {
    return this.#fail(id, new AseError('CONNECTION_CLOSED', reason));
  }

  /** Feeds one decoded message from the remote. Never throws. */
  receive(message: unknown): void {
    if (!isObject(message)) {
      this.#opts.onInvalid?.({ reason: 'not a JSON-RPC object', raw: message });
      return;
    }
    const { id, method } = message;
    if (typeof method === 'string') {
      if (id === undefined || id === null) this.#opts.onNotification?.(method, message['params']);
      else if (isId(id)) this.#onRequest(id, method, message['params']);
      else this.#opts.onInvalid?.({ reason: 'request with an invalid id', raw: message });
      return;
    }
    if (isId(id) && ('result' in message || 'error' in message)) {
      this.#onResponse(id, message);
      return;
    }
    this.#opts.onInvalid?.({ reason: 'neither request, notification nor response', raw: message });
  }

  /** Rejects every pending request (code `CONNECTION_CLOSED`); later requests reject at once. Idempotent. */
  close(reason = 'JSON-RPC connection closed'): void {
    if (this.#closed) return;
    this.#closed = new AseError('CONNECTION_CLOSED', reason);
    for (const id of [...this.#pending.keys()]) this.#fail(id, this.#closed);
  }

  #fail(id: number, error: Error): boolean {
    const entry = this.#take(id);
    if (!entry) return false;
    entry.reject(error);
    return true;
  }

  #take(id: number): Pending | undefined {
    const entry = this.#pending.get(id);
    if (!entry) return undefined;
    this.#pending.delete(id);
    if (entry.timer !== undefined) this.#timers.clearTimeout(entry.timer);
    entry.cleanup();
    return entry;
  }

  #onResponse(id: JsonRpcId, message: Record<string, unknown>): void {
    const entry = typeof id === 'number' ? this.#take(id) : undefined;
    if (!entry) {
      // Late (timed out / forgotten) or not ours: nothing waits for it any more.
      this.#opts.onInvalid?.({ reason: `response to an unknown request id ${JSON.stringify(id)}`, raw: message });
      return;
    }
    if ('error' in message && message['error'] !== undefined && message['error'] !== null) {
      const err = isObject(message['error']) ? message['error'] : {};
      const code = typeof err['code'] === 'number' ? err['code'] : INTERNAL_ERROR;
      const text = typeof err['message'] === 'string' ? err['message'] : JSON.stringify(message['error']);
      entry.reject(new AgentError({ request: entry.method, upstreamCode: code, upstreamMessage: text, data: err['data'] }));
      return;
    }
    entry.resolve(message['result']);
  }

  #onRequest(id: JsonRpcId, method: string, params: unknown): void {
    const handler = this.#handlers.get(method);
    if (!handler) {
      this.#answer(id, { error: { code: METHOD_NOT_FOUND, message: `Method not supported by this client: ${method}` } });
      return;
    }
    let outcome: Promise<unknown>;
    try {
      outcome = Promise.resolve(handler(params, id));
    } catch (error) {
      outcome = Promise.reject(error);
    }
    outcome.then(
      (result) => this.#answer(id, { result: result ?? {} }),
      (error: unknown) => {
        const details = rpcErrorDetails(error);
        if (details) {
          this.#answer(id, { error: { code: details.rpcCode, message: error instanceof Error ? error.message : String(error), ...(details.data !== undefined && { data: details.data }) } });
        } else {
          this.#answer(id, { error: { code: INTERNAL_ERROR, message: error instanceof Error ? error.message : String(error) } });
        }
      },
    );
  }

  #answer(id: JsonRpcId, body: { result: unknown } | { error: unknown }): void {
    this.#write({ id, ...body }).catch((error: unknown) => this.#opts.onWriteError?.(toAseError(error, 'CONNECTION_CLOSED')));
  }

  #write(message: Record<string, unknown>): Promise<void> {
    const framed = this.#opts.jsonrpcField === false ? message : { jsonrpc: '2.0', ...message };
    return this.#opts.writer.write(framed);
  }
}
