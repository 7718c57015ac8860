/**
 * A test's client of the server's HTTP API: one request with the bearer token, the status and the
 * body (parsed when it is JSON, else the text, e.g. the page). Shared by the in-process test
 * server and the `ase serve` process the end-to-end tests start.
 */
export type ServerApi = (method: string, route: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

export function serverApi(url: string, token: string): ServerApi {
  const base = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return async (method, route, body, headers = {}) => {
    // A string body is sent as it is, so a test can send malformed JSON.
    const response = await fetch(`${url}${route}`, { method, headers: { ...base, ...headers }, ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (the page)
    }
    return { status: response.status, body: parsed };
  };
}
