/**
 * The hook command a local-mode CLI runs (Claude Code and Codex share the hook contract: JSON on
 * stdin, `hookSpecificOutput` on stdout), shipped as source text so the package carries it and no
 * build step or file layout can lose it: the engine writes it into its private temp directory
 * (0700) at start (hook-dir.ts).
 *
 * What it does: reads the hook's JSON from stdin, sends `{"hook": <that JSON>}` as one line over
 * the engine's unix socket (argv[2]) and waits for one reply line. For `PermissionRequest` the
 * reply is the hook output the CLI reads from stdout (allow/deny); for every other hook an
 * acknowledgement, printed as nothing.
 *
 * Fail closed and fast: when the engine is gone (no socket, a refused or dropped connection, no
 * reply within the bound) a `PermissionRequest` is denied, every other hook exits 0 at once, so a
 * TUI whose engine died never runs a tool nobody could approve, and never hangs on a hook.
 * No dependencies beyond Node's standard library (it runs with the host's own `node`).
 */
export const HOOK_SCRIPT = String.raw`'use strict';
// agent-session-engine: local-mode hook of Claude Code / Codex (see hook-script.ts in the package).
const net = require('node:net');
const socketPath = process.argv[2];
const CONNECT_MS = 2000;
let input = '';
let done = false;
function finish(output) {
  if (done) return;
  done = true;
  if (output) process.stdout.write(output + '\n');
  process.exit(0);
}
function failClosed(event, why) {
  if (event === 'PermissionRequest') {
    finish(JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'agent-session-engine is not reachable (' + why + '): denied.' },
      },
    }));
  } else finish('');
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  let hook;
  try { hook = JSON.parse(input); } catch { hook = { hook_event_name: 'unknown', raw: input }; }
  const event = hook && hook.hook_event_name;
  if (!socketPath) return failClosed(event, 'no socket');
  const socket = net.createConnection(socketPath);
  let reply = '';
  const connectTimer = setTimeout(() => { socket.destroy(); failClosed(event, 'connect timeout'); }, CONNECT_MS);
  socket.setEncoding('utf8');
  socket.on('connect', () => {
    clearTimeout(connectTimer);
    socket.write(JSON.stringify({ hook }) + '\n');
  });
  socket.on('data', (chunk) => {
    reply += chunk;
    const end = reply.indexOf('\n');
    if (end < 0) return;
    let answer;
    try { answer = JSON.parse(reply.slice(0, end)); } catch { answer = {}; }
    socket.end();
    finish(answer && answer.output ? JSON.stringify(answer.output) : '');
  });
  socket.on('error', (error) => { clearTimeout(connectTimer); failClosed(event, error.code || 'socket error'); });
  socket.on('close', () => { clearTimeout(connectTimer); failClosed(event, 'connection closed'); });
});
`;
