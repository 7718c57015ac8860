/**
 * The Claude Code control protocol over stream-json (reference §6): host→CLI requests with
 * `request_id` correlation and timeouts, and the CLI→host requests the host must answer exactly
 * once. `can_use_tool` is surfaced to a callback and answered later via {@link ControlClient.answer};
 * `mcp_message` (the host's in-process MCP server, reference host-tools.md §1) is answered
 * asynchronously by a callback: the CLI sends it before it answers our `initialize`, so it must
 * never wait behind our own requests; `control_cancel_request` drops a pending request (it is never
 * answered; a running `mcp_message` gets its signal aborted) and is reported; every other CLI→host
 * subtype is answered with an error — never left unanswered, or the turn blocks.
 */
import type { PermissionDecision } from '../../events/engine-input.js';
import { AgentError, AseError, toAseError } from '../../errors.js';
import { CanUseToolRequestSchema, classifyClaudeMessage, type ControlRequest, type ControlResponse } from './messages.js';

/** A `can_use_tool` request waiting for the host's decision. */
export interface PermissionAsk {
  requestId: string;
  toolName: string;
  input: unknown;
  callId?: string;
  suggestions?: unknown[];
}

type Timer = { readonly id: number } | ReturnType<typeof setTimeout>;
export interface ControlTimers {
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(handle: Timer): void;
}

const defaultTimers: ControlTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface ControlClientOptions {
  /** Writes one value as one line (rejects once the CLI's stdin is gone). */
  writer: { write(value: unknown): Promise<void> };
  /** A `can_use_tool` request arrived; answer it with `answer(requestId, decision)`. */
  onPermissionRequest?: (ask: PermissionAsk) => void;
  /**
   * Answers one `mcp_message` (JSON-RPC tunnelled to the host's in-process MCP server `serverName`)
   * with the JSON-RPC response to send back as `mcp_response`. `signal` aborts when the CLI cancels
   * the request. Rejecting answers the request with an error. Without it, `mcp_message` is refused.
   */
  onMcpMessage?: (serverName: string, message: unknown, signal: AbortSignal) => Promise<unknown>;
  /** The CLI cancelled a pending request of its own (`control_cancel_request`); it must not be answered. */
  onCancel?: (requestId: string, ask: PermissionAsk | undefined) => void;
  /** Write failures of answers (the stream went away). */
  onWriteError?: (error: Error) => void;
  timers?: ControlTimers;
  /** Prefix of our request ids (default `ase`). */
  idPrefix?: string;
  /** Default timeout for `request` (default 30 s). */
  defaultTimeoutMs?: number;
}

interface PendingRequest {
  subtype: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: Timer | undefined;
}

export class ControlClient {
  readonly #opts: ControlClientOptions;
  readonly #timers: ControlTimers;
  readonly #pending = new Map<string, PendingRequest>();
  readonly #asks = new Map<string, PermissionAsk>();
  /** `mcp_message` requests being answered, by request id: a cancel aborts the call. */
  readonly #mcpCalls = new Map<string, AbortController>();
  #seq = 0;
  #closed: AseError | undefined;

  constructor(options: ControlClientOptions) {
    this.#opts = options;
    this.#timers = options.timers ?? defaultTimers;
  }

  /** Ids of `can_use_tool` requests still waiting for an answer. */
  get pendingPermissions(): string[] {
    return [...this.#asks.keys()];
  }

  /** Number of host→CLI requests waiting for a response. */
  get pendingRequests(): number {
    return this.#pending.size;
  }

  /** Sends a host→CLI control request and resolves with its `response` payload. */
  request(subtype: string, fields: Record<string, unknown> = {}, options: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.#closed) return Promise.reject(this.#closed);
    const requestId = `${this.#opts.idPrefix ?? 'ase'}-${++this.#seq}`;
    const timeoutMs = options.timeoutMs ?? this.#opts.defaultTimeoutMs ?? 30_000;
    return new Promise<unknown>((resolve, reject) => {
      const entry: PendingRequest = { subtype, resolve, reject, timer: undefined };
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.timer = this.#timers.setTimeout(() => {
          if (this.#pending.get(requestId) !== entry) return;
          this.#pending.delete(requestId);
          reject(new AseError('TIMEOUT', `control request "${subtype}" got no response within ${timeoutMs} ms`, { details: { request: subtype, timeoutMs } }));
        }, timeoutMs);
      }
      this.#pending.set(requestId, entry);
      this.#opts.writer.write({ type: 'control_request', request_id: requestId, request: { ...fields, subtype } }).catch((error: unknown) => {
        if (this.#pending.get(requestId) !== entry) return;
        this.#settle(requestId, entry);
        reject(toAseError(error, 'CONNECTION_CLOSED'));
      });
    });
  }

  /**
   * Offers one decoded CLI→host message. Returns true when it was control traffic (handled here),
   * false for everything else.
   */
  handle(value: unknown): boolean {
    const message = classifyClaudeMessage(value);
    switch (message.kind) {
      case 'control_response':
        this.#onResponse(message.msg);
        return true;
      case 'control_request':
        this.#onRequest(message.msg);
        return true;
      case 'control_cancel_request': {
        const mcp = this.#mcpCalls.get(message.msg.request_id);
        if (mcp) {
          this.#mcpCalls.delete(message.msg.request_id);
          mcp.abort(new AseError('ABORTED', 'cancelled by the CLI'));
        }
        const ask = this.#asks.get(message.msg.request_id);
        this.#asks.delete(message.msg.request_id);
        this.#opts.onCancel?.(message.msg.request_id, ask);
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * Answers a pending `can_use_tool`. Returns false (and writes nothing) when the request is not
   * pending (already answered, cancelled by the CLI, or unknown).
   */
  async answer(requestId: string, decision: PermissionDecision): Promise<boolean> {
    const ask = this.#asks.get(requestId);
    if (!ask) return false;
    this.#asks.delete(requestId);
    const response =
      decision.behavior === 'allow'
        ? {
            behavior: 'allow',
            updatedInput: decision.updatedInput ?? ask.input ?? {},
            ...(decision.updatedPermissions !== undefined && { updatedPermissions: decision.updatedPermissions }),
          }
        : { behavior: 'deny', message: decision.message ?? 'Denied by the host', interrupt: decision.interrupt };
    await this.#opts.writer.write({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
    return true;
  }

  /** Rejects every pending host→CLI request (code `CONNECTION_CLOSED`). Idempotent. */
  close(reason = 'control connection closed'): void {
    if (this.#closed) return;
    this.#closed = new AseError('CONNECTION_CLOSED', reason);
    for (const [id, entry] of [...this.#pending]) {
      this.#settle(id, entry);
      entry.reject(this.#closed);
    }
    this.#asks.clear();
    for (const mcp of this.#mcpCalls.values()) mcp.abort(this.#closed);
    this.#mcpCalls.clear();
  }

  #settle(id: string, entry: PendingRequest): void {
    this.#pending.delete(id);
    if (entry.timer !== undefined) this.#timers.clearTimeout(entry.timer);
  }

  #onResponse(msg: ControlResponse): void {
    const { request_id: id, subtype } = msg.response;
    const entry = this.#pending.get(id);
    if (!entry) return; // late or unknown: ignored, like the CLI does
    this.#settle(id, entry);
    if (subtype === 'success') entry.resolve(msg.response.response ?? {});
    else {
      const upstreamMessage = typeof msg.response.error === 'string' ? msg.response.error : JSON.stringify(msg.response.error ?? subtype);
      const upstreamCode = msg.response.error_code;
      entry.reject(
        new AgentError({
          request: entry.subtype,
          upstreamCode: typeof upstreamCode === 'number' || typeof upstreamCode === 'string' ? upstreamCode : undefined,
          upstreamMessage,
          ...(upstreamCode !== undefined && { data: { error_code: upstreamCode } }),
          message: `control request "${entry.subtype}" failed: ${upstreamMessage}`,
        }),
      );
    }
  }

  #onRequest(msg: ControlRequest): void {
    const id = msg.request_id;
    const subtype = msg.request.subtype;
    if (subtype === 'can_use_tool') {
      const parsed = CanUseToolRequestSchema.safeParse(msg.request);
      if (!parsed.success) {
        this.#replyError(id, `Malformed can_use_tool request: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        return;
      }
      const r = parsed.data;
      const ask: PermissionAsk = {
        requestId: id,
        toolName: r.tool_name,
        input: r.input ?? {},
        ...(r.tool_use_id !== undefined && { callId: r.tool_use_id }),
        ...(r.permission_suggestions && { suggestions: r.permission_suggestions }),
      };
      if (!this.#opts.onPermissionRequest) {
        this.#replyError(id, 'No permission handler registered');
        return;
      }
      this.#asks.set(id, ask);
      this.#opts.onPermissionRequest(ask);
      return;
    }
    if (subtype === 'mcp_message' && this.#opts.onMcpMessage) {
      this.#answerMcp(id, msg.request as { server_name?: unknown; message?: unknown });
      return;
    }
    this.#replyError(id, `Unsupported control request subtype: ${subtype}`);
  }

  /** Runs the MCP callback and answers `mcp_response`, unless the CLI cancelled the request meanwhile. */
  #answerMcp(id: string, request: { server_name?: unknown; message?: unknown }): void {
    const controller = new AbortController();
    this.#mcpCalls.set(id, controller);
    const serverName = typeof request.server_name === 'string' ? request.server_name : '';
    void this.#opts
      .onMcpMessage!(serverName, request.message, controller.signal)
      .then(
        (mcpResponse) => {
          if (this.#mcpCalls.get(id) !== controller) return; // cancelled: never answered
          this.#mcpCalls.delete(id);
          return this.#opts.writer.write({ type: 'control_response', response: { subtype: 'success', request_id: id, response: { mcp_response: mcpResponse } } });
        },
        (error: unknown) => {
          if (this.#mcpCalls.get(id) !== controller) return;
          this.#mcpCalls.delete(id);
          this.#replyError(id, error instanceof Error ? error.message : String(error));
        },
      )
      .catch((e: unknown) => this.#opts.onWriteError?.(toAseError(e, 'CONNECTION_CLOSED')));
  }

  #replyError(requestId: string, error: string): void {
    this.#opts.writer
      .write({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error } })
      .catch((e: unknown) => this.#opts.onWriteError?.(toAseError(e, 'CONNECTION_CLOSED')));
  }
}
