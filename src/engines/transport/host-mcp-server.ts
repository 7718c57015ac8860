/**
 * The loopback MCP server that carries a session's host tools to agents that can only reach tools
 * through MCP (ACP agents, Codex's fallback and `codex-exec`): Streamable HTTP, JSON-RPC over POST,
 * answered with plain JSON (no SSE stream, no MCP session id: every POST stands alone).
 *
 * The transport only: what each JSON-RPC message means is the caller's `handle` (the engines pass
 * the host tools' MCP dispatcher, engines/core/host-tools-mcp.ts, which serves `initialize`,
 * `ping`, `tools/list`, `tools/call`). Here: the gate below, the capped body, batches, `202` for
 * notifications, and aborting a call's signal when the agent cancels it (`notifications/cancelled`,
 * which arrives on a POST of its own) or hangs up. It is written here rather than taken from
 * `@modelcontextprotocol/sdk` because the checks must run before a byte of the body is read and
 * the body must be capped, and the SDK's stateless mode builds a server and a transport per
 * request for five methods (reference host-tools.md).
 *
 * Who may talk to it (reference host-tools.md, "Loopback MCP server"):
 * - bound to 127.0.0.1 on a random port, never 0.0.0.0 or `localhost`;
 * - reachable only at `/mcp/<32 random bytes, base64url>`, or at `/mcp` with the same token as
 *   `Authorization: Bearer` (for a client given the URL on its command line, where `ps` shows it:
 *   the token then travels in its environment); compared in constant time, never logged;
 * - `Host` must be `127.0.0.1:<port>` or `localhost:<port>` (DNS rebinding), and a request with
 *   any `Origin` header is refused (a browser page);
 * - POST only (GET/DELETE: 405), `application/json` only, bodies over {@link MAX_BODY_BYTES}: 413.
 *
 * One server per session at most (the engine starts it only when the session has tools); closing
 * it aborts the calls in flight and drops every connection, so no port outlives the session.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request body larger than this is refused (413) without being read to the end. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Answers one JSON-RPC message: the answer for a request, `undefined` for a notification. Never
 * rejects (a failure is a JSON-RPC error or an `isError` result); `signal` aborts when the agent
 * cancels this request or hangs up, or the server closes.
 */
export type McpMessageHandler = (message: unknown, ctx: { signal: AbortSignal }) => Promise<unknown>;

export interface HostMcpServerOptions {
  readonly handle: McpMessageHandler;
}

type JsonRpcId = string | number;


const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

export class HostMcpServer {
  /** `http://127.0.0.1:<port>/mcp/<token>`: a secret; hand it to the agent only. */
  readonly url: string;
  /** `http://127.0.0.1:<port>/mcp`: reachable only with {@link bearerToken} as `Authorization: Bearer`. */
  readonly bearerUrl: string;
  /** The token, for a client that sends it as `Authorization: Bearer` (a secret). */
  readonly bearerToken: string;
  readonly port: number;
  readonly #server: Server;
  readonly #token: Buffer;
  readonly #options: HostMcpServerOptions;
  readonly #sockets = new Set<Socket>();
  /** Calls in flight by JSON-RPC id, so `notifications/cancelled` (sent on another POST) can abort them. */
  readonly #calls = new Map<JsonRpcId, AbortController>();
  #closing: Promise<void> | undefined;

  private constructor(server: Server, port: number, token: Buffer, options: HostMcpServerOptions) {
    this.#server = server;
    this.port = port;
    this.#options = options;
    this.bearerToken = token.toString('base64url');
    // Compared as text: decoding what is presented would also accept a token whose last character
    // differs only in the bits base64url leaves unused (32 bytes are 43 characters, 2 bits spare).
    this.#token = Buffer.from(this.bearerToken);
    this.url = `http://127.0.0.1:${port}/mcp/${this.bearerToken}`;
    this.bearerUrl = `http://127.0.0.1:${port}/mcp`;
  }

  /** Listens on 127.0.0.1, a random port, a fresh token. */
  static async start(options: HostMcpServerOptions): Promise<HostMcpServer> {
    // Imported here, not at the top: importing node:http as an ES module evaluates every export,
    // fetch's undici among them (~40 ms of CPU), in every process that imports this library.
    const { createServer } = await import('node:http');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const mcp = new HostMcpServer(server, port, randomBytes(32), options);
    server.on('connection', (socket) => {
      mcp.#sockets.add(socket);
      socket.on('close', () => mcp.#sockets.delete(socket));
    });
    server.on('request', (req, res) => void mcp.#handle(req, res));
    return mcp;
  }

  /** Calls still running. */
  get activeCalls(): number {
    return this.#calls.size;
  }

  /** Stops listening, aborts the calls in flight and drops every connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const call of this.#calls.values()) call.abort(new Error('host MCP server closed'));
      this.#calls.clear();
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      for (const socket of this.#sockets) socket.destroy();
      await closed;
    })();
    return this.#closing;
  }

  // ------------------------------------------------------------------------------ the gate

  /** Why a request is refused before its body is read, or undefined when it may proceed. */
  #refusal(req: IncomingMessage): { status: number; message: string; headers?: Record<string, string> } | undefined {
    if (req.headers.origin !== undefined) return { status: 403, message: 'requests with an Origin are refused' };
    const host = req.headers.host;
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`) return { status: 403, message: 'wrong Host' };
    if (!this.#tokenMatches(req.url ?? '', req.headers.authorization)) return { status: 404, message: 'not found' };
    if (req.method !== 'POST') return { status: 405, message: 'only POST', headers: { allow: 'POST' } };
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) return { status: 415, message: 'content-type must be application/json' };
    const length = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(length) && length > MAX_BODY_BYTES) return { status: 413, message: 'body too large' };
    return undefined;
  }

  /** `/mcp/<token>`, or `/mcp` with `Authorization: Bearer <token>` (a query string is ignored); constant time. */
  #tokenMatches(url: string, authorization: string | undefined): boolean {
    const path = url.split('?')[0] ?? '';
    let presented: string;
    if (path === '/mcp') {
      const bearer = /^Bearer ([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
      if (!bearer) return false;
      presented = bearer[1]!;
    } else if (path.startsWith('/mcp/')) presented = path.slice('/mcp/'.length);
    else return false;
    if (!/^[A-Za-z0-9_-]*$/.test(presented)) return false;
    const given = Buffer.from(presented);
    // A different length says nothing about the token's characters; the compare needs equal lengths.
    if (given.length !== this.#token.length) return false;
    return timingSafeEqual(given, this.#token);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = this.#refusal(req);
    if (refused) {
      // The body is not wanted: the connection goes with the answer, so a client cannot keep
      // streaming into it.
      res.writeHead(refused.status, { 'content-type': 'text/plain', connection: 'close', ...refused.headers });
      res.end(refused.message);
      req.resume();
      return;
    }
    const body = await readCapped(req, MAX_BODY_BYTES);
    if (body === 'too large') {
      res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
      res.end('body too large');
      return;
    }
    if (body === 'aborted') return;
    let message: unknown;
    try {
      message = JSON.parse(body);
    } catch {
      return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'parse error' } });
    }
    // The client may give up on a call (its HTTP request closes): the handler's signal says so.
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort(new Error('the agent closed the request'));
    });
    const batch = Array.isArray(message);
    const messages = batch ? (message as unknown[]) : [message];
    if (messages.length === 0) return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'empty batch' } });
    const replies = (await Promise.all(messages.map((m) => this.#dispatch(m, gone.signal)))).filter((r) => r !== undefined);
    if (res.destroyed) return;
    if (replies.length === 0) {
      res.writeHead(202).end();
      return;
    }
    sendJson(res, 200, batch ? replies : replies[0]);
  }

  // ------------------------------------------------------------------------------ JSON-RPC

  /** One message: its answer, or nothing for a notification or a client's response. */
  async #dispatch(raw: unknown, gone: AbortSignal): Promise<unknown> {
    if (typeof raw !== 'object' || raw === null) return { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'not a JSON-RPC message' } };
    const m = raw as { id?: unknown; method?: unknown; params?: unknown };
    const id = typeof m.id === 'string' || typeof m.id === 'number' ? m.id : undefined;
    if (m.method === 'notifications/cancelled') {
      const params = (typeof m.params === 'object' && m.params !== null ? m.params : {}) as Record<string, unknown>;
      this.#calls.get(params['requestId'] as JsonRpcId)?.abort(new Error(String(params['reason'] ?? 'cancelled by the agent')));
      return undefined;
    }
    if (id === undefined) {
      // A notification, or a response to a request of ours (we send none): the handler may look,
      // but nothing is answered.
      if (typeof m.method === 'string') await this.#options.handle(raw, { signal: gone });
      return undefined;
    }
    const controller = new AbortController();
    const onGone = () => controller.abort(gone.reason);
    gone.addEventListener('abort', onGone, { once: true });
    this.#calls.set(id, controller);
    try {
      return await this.#options.handle(raw, { signal: controller.signal });
    } catch (error) {
      return { jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: error instanceof Error ? error.message : String(error) } };
    } finally {
      gone.removeEventListener('abort', onGone);
      if (this.#calls.get(id) === controller) this.#calls.delete(id);
    }
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

/** The whole body as text, or 'too large' (then the request is torn down) / 'aborted'. */
function readCapped(req: IncomingMessage, max: number): Promise<string | 'too large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: string | 'too large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > max) {
        settle('too large');
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => settle('aborted'));
    req.on('close', () => settle('aborted'));
  });
}
