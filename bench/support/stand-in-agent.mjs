#!/usr/bin/env node
// The stand-in agent of the side-by-side benchmark: it plays Claude Code (stream-json), the Codex
// app-server or an ACP agent just far enough to run one turn, and answers at once, so what a
// consumer's time measures is the consumer. `--version` prints the version the engines are tested
// against (by the name it was started as: claude.mjs / codex.mjs). Otherwise STANDIN_SCRIPT names
// a script (bench/support/agent-streams.ts): how to answer the handshake, and the recorded turn
// it writes to stdout in 1 MiB chunks (honouring backpressure) once the turn is asked for. Exits
// on stdin EOF. STANDIN_CHUNK=<bytes> writes chunks of that size instead, one per timer tick: a
// slow stream, whose consumer mostly reads one event at a time.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

if (process.argv.includes('--version')) {
  process.stdout.write(basename(process.argv[1] ?? '').startsWith('codex') ? 'codex-cli 0.169.0\n' : '2.1.330 (Claude Code)\n');
  process.exit(0);
}

const script = JSON.parse(readFileSync(process.env.STANDIN_SCRIPT, 'utf8'));
const stream = readFileSync(script.stream);
const SLOW = process.env.STANDIN_CHUNK !== undefined;
const CHUNK = SLOW ? Number(process.env.STANDIN_CHUNK) : 1024 * 1024;
const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

function pipeStream() {
  return new Promise((resolve) => {
    let offset = 0;
    const next = () => {
      while (offset < stream.length) {
        const chunk = stream.subarray(offset, offset + CHUNK);
        offset += chunk.length;
        if (!process.stdout.write(chunk)) return process.stdout.once('drain', next);
        if (SLOW) return setTimeout(next, 0);
      }
      resolve();
    };
    next();
  });
}

function onClaude(message) {
  if (message.type === 'control_request') {
    write({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: {} } });
  } else if (message.type === 'user') {
    void pipeStream();
  }
}

function onJsonRpc(message) {
  if (typeof message.method !== 'string' || message.id === undefined) return; // notifications, responses
  const answer = (result) => write({ ...(script.jsonrpc2 && { jsonrpc: '2.0' }), id: message.id, result });
  const result = script.answers?.[message.method] ?? {};
  if (message.method !== script.trigger) return answer(result);
  if (!script.answerTriggerLast) {
    answer(result);
    void pipeStream();
  } else {
    void pipeStream().then(() => answer(result));
  }
}

const handle = script.protocol === 'claude' ? onClaude : onJsonRpc;
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line.trim() !== '') handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
