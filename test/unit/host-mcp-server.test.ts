/**
 * The loopback MCP server (transport/host-mcp-server.ts) as a hostile client meets it over real
 * HTTP on 127.0.0.1: a wrong or missing token, a foreign Host, any Origin, GET, a non-JSON type,
 * a huge body (declared and streamed) are refused before a tool runs; the served subset answers
 * as the agents expect; a cancel or a client that hangs up aborts the handler's signal; after
 * close() the port is gone.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { HostToolbox } from '../../src/engines/core/host-tools.js';
import { answerMcpMessage } from '../../src/engines/core/host-tools-mcp.js';
import { HostMcpServer, MAX_BODY_BYTES } from '../../src/engines/transport/host-mcp-server.js';
import { stdioShimServer } from '../../src/engines/transport/host-mcp-stdio-shim.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function post(url: string, body: string | Buffer, headers: Record<string, string> = {}, method = 'POST'): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: u.port, path: u.pathname + u.search, method, headers: { 'content-type': 'application/json', host: `127.0.0.1:${u.port}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const rpc = (method: string, params: unknown = {}, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('host MCP server', () => {
  let server: HostMcpServer | undefined;
  const calls: { name: string; args: unknown; callId: string }[] = [];
  let release: (() => void) | undefined;
  let aborted: unknown;

  const toolbox = new HostToolbox(
    [
      {
        name: 'add',
        description: 'Add two numbers',
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        handler: (args: { a: number; b: number }, { callId }: { callId: string }) => {
          calls.push({ name: 'add', args, callId });
          return `sum=${args.a + args.b}`;
        },
      },
      {
        name: 'wait',
        description: 'Waits until released or aborted',
        inputSchema: { type: 'object' },
        handler: async (args: unknown, { callId, signal }: { callId: string; signal: AbortSignal }) => {
          calls.push({ name: 'wait', args, callId });
          await new Promise<void>((resolve) => {
            release = resolve;
            signal.addEventListener('abort', () => {
              aborted = signal.reason;
              resolve();
            });
          });
          return 'released';
        },
      },
    ] as never[],
    { sessionId: 's1' },
  );
  // The transport with the host tools' own MCP answers, as the engines wire it (host-tools-loopback.ts).
  const start = () => {
    const hostCalls = toolbox.calls();
    return HostMcpServer.start({ handle: (message, { signal }) => answerMcpMessage(hostCalls, message, { serverName: 'host', signal }) });
  };

  afterEach(async () => {
    await server?.close();
    server = undefined;
    calls.length = 0;
    release = undefined;
    aborted = undefined;
  });

  it('binds 127.0.0.1 with a 32-byte token in the path', async () => {
    server = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/[A-Za-z0-9_-]{43}$/);
  });

  it('serves initialize, ping, tools/list and tools/call; a notification is 202', async () => {
    server = await start();
    const init = await post(server.url, rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    expect(init.status).toBe(200);
    expect(JSON.parse(init.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'host' } } });
    expect((await post(server.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);
    expect(JSON.parse((await post(server.url, rpc('ping', {}, 'p'))).body)).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    const list = JSON.parse((await post(server.url, rpc('tools/list'))).body);
    expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(['add', 'wait']);
    const call = JSON.parse((await post(server.url, rpc('tools/call', { name: 'add', arguments: { a: 2, b: 3 }, _meta: { callId: 'call_1' } }, 7))).body);
    expect(call).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'sum=5' }] } });
    expect(calls).toEqual([{ name: 'add', args: { a: 2, b: 3 }, callId: 'call_1' }]);
    const unknownTool = JSON.parse((await post(server.url, rpc('tools/call', { name: 'rm_rf', arguments: {} }))).body);
    expect(unknownTool.result).toMatchObject({ isError: true });
    const unknownMethod = JSON.parse((await post(server.url, rpc('resources/list'))).body);
    expect(unknownMethod.error).toMatchObject({ code: -32601 });
    const batch = JSON.parse((await post(server.url, `[${rpc('ping', {}, 1)},${rpc('ping', {}, 2)}]`)).body);
    expect(batch.map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect((await post(server.url, '{not json')).status).toBe(400);
  });

  it('refuses a wrong, missing or truncated token, a foreign Host, any Origin, GET and non-JSON, and runs nothing', async () => {
    server = await start();
    const good = new URL(server.url);
    const token = good.pathname.split('/').pop()!;
    const call = rpc('tools/call', { name: 'add', arguments: { a: 1, b: 1 } });
    const at = (path: string) => `http://127.0.0.1:${good.port}${path}`;
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await post(at(`/mcp/${flipped}`), call)).status).toBe(404);
    // The same 32 bytes spelt otherwise: the last character's lowest bit is one base64url leaves unused.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = token.slice(0, -1) + alphabet[alphabet.indexOf(token.at(-1)!) ^ 1];
    expect(Buffer.from(sameBytes, 'base64url').equals(Buffer.from(token, 'base64url'))).toBe(true);
    expect((await post(at(`/mcp/${sameBytes}`), call)).status).toBe(404);
    expect((await post(server.bearerUrl, call, { authorization: `Bearer ${sameBytes}` })).status).toBe(404);
    expect((await post(at('/mcp/'), call)).status).toBe(404);
    expect((await post(at(`/mcp/${token.slice(0, 20)}`), call)).status).toBe(404);
    expect((await post(at(`/${token}`), call)).status).toBe(404);
    expect((await post(at(`/mcp/${token}/x`), call)).status).toBe(404);
    expect((await post(server.url, call, { host: `evil.example:${good.port}` })).status).toBe(403);
    expect((await post(server.url, call, { host: `127.0.0.1:${Number(good.port) + 1}` })).status).toBe(403);
    expect((await post(server.url, call, { host: '127.0.0.1' })).status).toBe(403);
    expect((await post(server.url, call, { origin: 'http://127.0.0.1' })).status).toBe(403);
    expect((await post(server.url, call, { origin: 'null' })).status).toBe(403);
    const get = await post(server.url, '', {}, 'GET');
    expect(get.status).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    expect((await post(server.url, '', {}, 'DELETE')).status).toBe(405);
    expect((await post(server.url, call, { 'content-type': 'text/plain' })).status).toBe(415);
    // The bearer form: /mcp with the token in Authorization, and nothing less.
    expect((await post(server.bearerUrl, call)).status).toBe(404);
    expect((await post(server.bearerUrl, call, { authorization: `Bearer ${flipped}` })).status).toBe(404);
    expect((await post(server.bearerUrl, call, { authorization: `Basic ${token}` })).status).toBe(404);
    expect((await post(`${server.bearerUrl}/${flipped}`, call, { authorization: `Bearer ${token}` })).status).toBe(404);
    expect(calls).toEqual([]);
    expect((await post(server.bearerUrl, call, { authorization: `Bearer ${server.bearerToken}` })).status).toBe(200);
    calls.length = 0;
    // localhost:<port> is the other name of the same place.
    expect((await post(server.url, call, { host: `localhost:${good.port}` })).status).toBe(200);
  });

  it('refuses a huge body, declared or streamed without a length, and stays usable', async () => {
    server = await start();
    const huge = Buffer.alloc(MAX_BODY_BYTES + 1, 0x20);
    expect((await post(server.url, huge)).status).toBe(413);
    const streamed = await new Promise<number>((resolve, reject) => {
      const u = new URL(server!.url);
      const req = request({ host: '127.0.0.1', port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', host: `127.0.0.1:${u.port}`, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 5; i++) req.write(chunk);
      req.end();
    });
    expect(streamed).toBe(413);
    expect(calls).toEqual([]);
    expect(JSON.parse((await post(server.url, rpc('ping'))).body).result).toEqual({});
  });

  it('a notifications/cancelled, or the client hanging up, aborts the running handler', async () => {
    server = await start();
    const waiting = post(server.url, rpc('tools/call', { name: 'wait', arguments: {} }, 41));
    await expect.poll(() => calls.length, { timeout: 20_000 }).toBe(1);
    await post(server.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41, reason: 'user' } }));
    expect(aborted).toBeDefined();
    expect((await waiting).status).toBe(200);
    expect(server.activeCalls).toBe(0);

    aborted = undefined;
    const u = new URL(server.url);
    const req = request({ host: '127.0.0.1', port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', host: `127.0.0.1:${u.port}` } });
    req.on('error', () => undefined);
    req.end(rpc('tools/call', { name: 'wait', arguments: {} }, 42));
    await expect.poll(() => calls.length, { timeout: 20_000 }).toBe(2);
    req.destroy();
    await expect.poll(() => aborted !== undefined, { timeout: 20_000 }).toBe(true);
    expect(release).toBeDefined();
  });

  it('close() aborts calls in flight and frees the port', async () => {
    server = await start();
    const port = server.port;
    const waiting = post(server.url, rpc('tools/call', { name: 'wait', arguments: {} })).catch((e: Error) => e);
    await expect.poll(() => calls.length, { timeout: 20_000 }).toBe(1);
    await server.close();
    expect(aborted).toBeDefined();
    await waiting;
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    await server.close(); // idempotent
  });

  it('the stdio shim forwards newline JSON-RPC to the server and answers an unreachable server with an error', async () => {
    server = await start();
    const run = async (url: string, lines: string[]): Promise<unknown[]> => {
      const entry = stdioShimServer('host', url);
      const child = spawn(entry.command, entry.args, { env: { PATH: process.env['PATH'] ?? '', ...Object.fromEntries(entry.env.map((e) => [e.name, e.value])) }, stdio: ['pipe', 'pipe', 'inherit'] });
      const answers: unknown[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => answers.push(JSON.parse(line)));
      for (const line of lines) child.stdin.write(`${line}\n`);
      child.stdin.end();
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
      return answers;
    };
    const answers = await run(server.url, [
      rpc('initialize', { protocolVersion: '2025-06-18' }, 1),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      rpc('tools/call', { name: 'add', arguments: { a: 20, b: 22 } }, 2),
    ]);
    expect(answers).toHaveLength(2);
    expect(answers).toContainEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'sum=42' }] } });
    const port = server.port;
    await server.close();
    const dead = await run(`http://127.0.0.1:${port}/mcp/x`, [rpc('ping', {}, 9)]);
    expect(dead).toEqual([{ jsonrpc: '2.0', id: 9, error: { code: -32603, message: expect.stringContaining('unreachable') } }]);
  }, 60_000);
});
