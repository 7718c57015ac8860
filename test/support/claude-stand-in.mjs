// A stand-in for the Claude Code CLI, speaking just enough stream-json for the claude engine: it
// answers `initialize`, and each user line with `system/init` + an assistant message + `result`.
// Exits on stdin EOF (its children, if any, stay: that is what the tests are about).
//
// STANDIN (comma-separated) adds behaviours:
//   fork            at start: a `setsid sleep 600` (own session: escapes the process group) and a
//                   plain `sleep 600` (same group); writes {agent, setsid, plain} pids as JSON to
//                   the file STANDIN_PIDS once both run
//   garbage=N:B     at start: N lines of B bytes that are not JSON
//   bad-init        the `system/init` carries a session id with invalid UTF-8 bytes in it
//   result-first    at start, before any init: one error `result` (like `--resume` of an unknown id)
//   ignore-eof      stdin EOF does not end it (like Gemini CLI, or Claude Code in the middle of a
//                   long turn): only a signal does
import { spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';

const behaviours = new Set((process.env.STANDIN ?? '').split(',').filter(Boolean));
const option = (name) => [...behaviours].find((b) => b.startsWith(`${name}=`))?.slice(name.length + 1);
const out = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const SESSION_ID = '3f1c2a7e-0000-4000-8000-000000000001';

if (behaviours.has('fork')) {
  const setsid = spawn('setsid', ['sleep', '600'], { stdio: 'ignore' });
  const plain = spawn('sleep', ['600'], { stdio: 'ignore' });
  const file = process.env.STANDIN_PIDS;
  if (file) {
    writeFileSync(`${file}.tmp`, JSON.stringify({ agent: process.pid, setsid: setsid.pid, plain: plain.pid }));
    renameSync(`${file}.tmp`, file);
  }
}

const garbage = option('garbage');
if (garbage) {
  const [count, bytes] = garbage.split(':').map(Number);
  const line = Buffer.alloc(bytes, 'x');
  line[bytes - 1] = 0x0a;
  for (let i = 0; i < count; i++) process.stdout.write(line);
}

if (behaviours.has('result-first')) {
  out({ type: 'result', subtype: 'error_during_execution', is_error: true, errors: ['No conversation found with session ID: nope'], total_cost_usd: 7, usage: { input_tokens: 1000, output_tokens: 1000 } });
}

function init() {
  if (!behaviours.has('bad-init')) return out({ type: 'system', subtype: 'init', session_id: SESSION_ID, cwd: process.cwd() });
  // "3f1c…\xff\xfe…": bytes that are not UTF-8, written raw.
  const head = Buffer.from('{"type":"system","subtype":"init","session_id":"3f1c2a7e-');
  const tail = Buffer.from(`-4000-8000-000000000001","cwd":${JSON.stringify(process.cwd())}}\n`);
  process.stdout.write(Buffer.concat([head, Buffer.from([0xff, 0xfe, 0xc3]), tail]));
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    const m = JSON.parse(line);
    if (m.type === 'control_request' && m.request.subtype === 'initialize') {
      out({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: {} } });
    } else if (m.type === 'control_request') {
      out({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: {} } });
    } else if (m.type === 'user') {
      init();
      out({ type: 'assistant', message: { id: 'msg-1', role: 'assistant', content: [{ type: 'text', text: 'ok' }] } });
      out({ type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', terminal_reason: 'completed', total_cost_usd: 0.01, usage: { input_tokens: 1, output_tokens: 1 } });
    }
  }
});
if (behaviours.has('ignore-eof')) setInterval(() => {}, 60_000);
else process.stdin.on('end', () => process.exit(0));
