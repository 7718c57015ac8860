/**
 * How the client talks to `ase serve`: the base URL, the bearer token and `fetch` (the global one,
 * or yours), and the error a refused request becomes. Browser-safe: no `node:` import.
 */
import { AseError } from '../errors.js';
import type { ErrorCode } from '../events/error-codes.js';

/** The server's own error codes (docs/server.md), besides the library's `AseError` codes. */
export type ServerErrorCode = 'UNAUTHORIZED' | 'FORBIDDEN_ORIGIN' | 'NOT_FOUND' | 'BAD_JSON' | 'BODY_TOO_LARGE' | 'INTERNAL';

/**
 * A request the server refused (its `{error: {code, message}}` body) or a reply that was not what
 * the API promises. An `AseError` like the library's own, so one `isAseError(error, 'SESSION_OWNED')`
 * handles a refusal whether the session runs in this process or behind `ase serve`: `code` is the
 * server's (one of `ERROR_CODES`; a reply without one: `UNAUTHORIZED` for 401, `NOT_FOUND` for
 * 404, else `INTERNAL`). `details` are the server's `error.details` (per code, docs/errors.md) with
 * `status`, the HTTP status (0: no answer), also a property of its own; `body` the
 * parsed reply (a later permission answer's 409 carries the recorded `outcome` there).
 */
export class RemoteError extends AseError<Record<string, unknown> & { status: number }> {
  override readonly name: string = 'RemoteError';
  declare readonly code: ErrorCode | ServerErrorCode;
  constructor(
    code: ErrorCode | ServerErrorCode,
    message: string,
    readonly status: number,
    readonly body?: unknown,
  ) {
    // The server's `error.details` (e.g. SESSION_OWNED's owner, a routed TIMEOUT's withdrawn), with the status.
    const sent = (body as { error?: { details?: unknown } } | undefined)?.error?.details;
    super(code, message, { details: { ...(typeof sent === 'object' && sent !== null && !Array.isArray(sent) ? (sent as Record<string, unknown>) : {}), status } });
  }

  static async fromResponse(response: Response): Promise<RemoteError> {
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: a proxy's page
    }
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof error?.code === 'string' ? (error.code as RemoteError['code']) : response.status === 401 ? 'UNAUTHORIZED' : response.status === 404 ? 'NOT_FOUND' : 'INTERNAL';
    const message = typeof error?.message === 'string' ? error.message : `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    return new RemoteError(code, message, response.status, body);
  }
}

export interface RemoteTransport {
  /** `fetch` of a path under the server's URL, with the token. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** A JSON request; resolves with the parsed reply, rejects with a `RemoteError`. */
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export function remoteTransport(options: { url: string; token?: string; fetch?: typeof globalThis.fetch }): RemoteTransport {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const auth: Record<string, string> = options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {};
  const transport: RemoteTransport = {
    fetch: (path, init = {}) => doFetch(`${base}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } }),
    async json<T>(method: string, path: string, body?: unknown): Promise<T> {
      const response = await transport.fetch(path, {
        method,
        ...(body !== undefined && { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      if (!response.ok) throw await RemoteError.fromResponse(response);
      return (await response.json()) as T;
    },
  };
  return transport;
}
