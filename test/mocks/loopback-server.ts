/**
 * The HTTP plumbing the mock model servers (anthropic-mock.ts, openai-responses-mock.ts,
 * gemini-mock.ts) share, so each mock file holds only its API's routes and wire shapes:
 *
 * - {@link startLoopbackServer}: listens on 127.0.0.1 only (port 0 = any free port), tracks the
 *   open sockets and destroys them on close (a CLI's keep-alive connection, or a stream held open,
 *   must not keep `close()` waiting), and turns a handler that throws into a 500 (or a torn
 *   connection once headers went out).
 * - {@link readRequest}: one request as the mocks record it, the body parsed as JSON.
 * - {@link sendJson}: a JSON response with its length.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** path including the query string, e.g. `/v1/messages?beta=true` */
  url: string;
  /** path without the query string */
  pathname: string;
  headers: IncomingHttpHeaders;
  /** parsed JSON body (undefined when empty or not JSON) */
  body: any;
  /** `Date.now()` when the request arrived */
  at: number;
}

/** Reads the whole body; `at` is taken once it is in. */
export async function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  let body: any;
  try {
    body = raw.length > 0 ? JSON.parse(raw) : undefined;
  } catch {
    body = undefined;
  }
  const url = req.url ?? '/';
  const pathname = url.split('?')[0] ?? url;
  return { method: req.method ?? 'GET', url, pathname, headers: req.headers, body, at: Date.now() };
}

/** `headers` are added to (or override) `content-type: application/json` and `content-length`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers });
  res.end(data);
}

export interface LoopbackServerOptions {
  /** Answers one request; a rejection becomes {@link LoopbackServerOptions.internalError}. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Sends the mock's own 500 body for a handler that threw before any header went out. */
  internalError(res: ServerResponse, error: unknown): void;
  /** Runs first in `close()`, e.g. to end responses the mock holds open on purpose. */
  beforeClose?(): void;
}

export interface LoopbackServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** true from the first `close()` on: streams stop writing. */
  readonly closed: boolean;
  /** Idempotent; destroys every open connection, so it never waits on a client. */
  close(): Promise<void>;
}

export async function startLoopbackServer(options: LoopbackServerOptions): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  let closed = false;
  const server = createServer((req, res) => {
    options.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) options.internalError(res, error);
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    get closed() {
      return closed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        options.beforeClose?.();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        server.close(() => resolve());
      }),
  };
}
