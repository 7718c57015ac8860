/**
 * A forward HTTP proxy on 127.0.0.1 for an agent CLI's `HTTP_PROXY` that makes its MCP connection
 * slow, as on a loaded machine: the JSON-RPC `initialize` POST is held for `holdMs` before it is
 * passed on; everything else (the model's requests, the rest of MCP) passes at once, streamed both
 * ways. Claude Code sends its MCP HTTP traffic through `HTTP_PROXY`, loopback included, so a test
 * can stretch the time between the terminal UI taking input and the CLI having the host tools
 * (the race local mode's `ready` must cover) without touching our own server. `held` counts the
 * holds, so a test shows the delay really happened.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowMcpProxy {
  /** For the CLI's `HTTP_PROXY`. */
  readonly url: string;
  /** How many `initialize` requests were held. */
  readonly held: number;
  close(): Promise<void>;
}

export async function startSlowMcpProxy(holdMs: number): Promise<SlowMcpProxy> {
  let held = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (): void => {
        const upstream = http.request(req.url ?? '/', { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      if (/"method"\s*:\s*"initialize"/.test(body.toString('utf8'))) {
        held++;
        setTimeout(forward, holdMs);
      } else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get held() {
      return held;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
