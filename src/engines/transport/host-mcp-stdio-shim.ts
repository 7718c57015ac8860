/**
 * The stdio shim for agents that can reach an MCP server only by spawning it (ACP `McpServerStdio`,
 * the one transport every ACP agent must support): a small Node script, run as `node -e <script>`,
 * that reads newline-delimited JSON-RPC on stdin, POSTs each message to the session's loopback MCP
 * server (host-mcp-server.ts) and writes each JSON answer as one line on stdout.
 *
 * Shipped as source text and given on the command line, so there is no file to write or leave
 * behind; the loopback URL (a secret: it carries the path token) travels in the environment
 * (`ASE_HOST_MCP_URL`), not in argv, where any local user's `ps` would show it.
 * Requests are forwarded concurrently and answered as they finish (JSON-RPC matches by id). When
 * the server cannot be reached a request gets a JSON-RPC error, never silence; stdin's end exits.
 * Only Node's standard library (it runs with the host's own `node`).
 */
export const HOST_MCP_URL_ENV = 'ASE_HOST_MCP_URL';

export const HOST_MCP_STDIO_SHIM = String.raw`'use strict';
// agent-session-engine: stdio -> loopback MCP shim (see host-mcp-stdio-shim.ts in the package).
const http = require('node:http');
const target = new URL(process.env.${HOST_MCP_URL_ENV} || 'http://127.0.0.1:1/');
let pending = 0;
let ended = false;
function out(message) { process.stdout.write(JSON.stringify(message) + '\n'); }
function maybeExit() { if (ended && pending === 0) process.exit(0); }
function forward(line) {
  let message;
  try { message = JSON.parse(line); } catch { return out({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }); }
  const id = message && typeof message === 'object' && 'id' in message && message.method !== undefined ? message.id : undefined;
  const fail = (why) => { if (id !== undefined) out({ jsonrpc: '2.0', id, error: { code: -32603, message: 'host MCP server unreachable: ' + why } }); };
  const body = Buffer.from(line, 'utf8');
  pending++;
  const req = http.request({
    host: target.hostname, port: target.port, path: target.pathname, method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length },
  }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      pending--;
      const text = Buffer.concat(chunks).toString('utf8');
      if (res.statusCode === 202 || text === '') { maybeExit(); return; }
      let answer;
      try { answer = JSON.parse(text); } catch { fail('HTTP ' + res.statusCode); maybeExit(); return; }
      for (const m of Array.isArray(answer) ? answer : [answer]) out(m);
      maybeExit();
    });
  });
  req.on('error', (e) => { pending--; fail(e.code || e.message); maybeExit(); });
  req.end(body);
}
let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  // A chunk without a line end completes no line: do not rescan the buffered part of a long one.
  if (!chunk.includes('\n')) return;
  let end;
  while ((end = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, end).trim();
    buffered = buffered.slice(end + 1);
    if (line !== '') forward(line);
  }
});
process.stdin.on('end', () => { ended = true; if (buffered.trim() !== '') forward(buffered.trim()); maybeExit(); });
`;

/** The ACP `McpServerStdio` entry that runs the shim against `url`. */
export function stdioShimServer(name: string, url: string, nodePath: string = process.execPath): { name: string; command: string; args: string[]; env: { name: string; value: string }[] } {
  return { name, command: nodePath, args: ['-e', HOST_MCP_STDIO_SHIM], env: [{ name: HOST_MCP_URL_ENV, value: url }] };
}
