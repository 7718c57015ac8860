#!/usr/bin/env node
// A stand-in for the `claude` CLI, for the consumer test: speaks just enough stream-json for one
// turn, the way Claude Code 2.1.330 does (reference claude-stream-json.md): `--version` prints the
// version; otherwise it answers the `initialize` control request and, per user message, writes
// `system/init`, one assistant message and a `result`. Without ANTHROPIC_API_KEY it answers like
// the real CLI does ("Not logged in", an error result). Every start is appended to calls.jsonl
// next to this script (argv, and the API key it saw), so the test can tell what reached it.
import { appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
if (argv.includes('--version')) {
  process.stdout.write('2.1.330 (Claude Code)\n');
  process.exit(0);
}
const key = process.env.ANTHROPIC_API_KEY;
appendFileSync(join(dirname(fileURLToPath(import.meta.url)), 'calls.jsonl'), `${JSON.stringify({ argv, ANTHROPIC_API_KEY: key ?? null, NODE_OPTIONS: process.env.NODE_OPTIONS ?? null })}\n`);

const sessionId = argv[argv.indexOf('--session-id') + 1] ?? '00000000-0000-4000-8000-000000000000';
const out = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
let turns = 0;
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line.trim() === '') continue;
    const message = JSON.parse(line);
    if (message.type === 'control_request' && message.request?.subtype === 'initialize') {
      out({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { commands: [], models: [] } } });
    } else if (message.type === 'user') {
      turns += 1;
      const base = { session_id: sessionId, uuid: `u-${turns}` };
      out({ type: 'system', subtype: 'init', cwd: process.cwd(), tools: ['Bash', 'Read'], mcp_servers: [], model: 'stand-in', permissionMode: 'default', apiKeySource: key ? 'ANTHROPIC_API_KEY' : 'none', claude_code_version: '2.1.330', ...base });
      if (!key) {
        out({ type: 'assistant', message: { id: `m-${turns}`, type: 'message', role: 'assistant', model: '<synthetic>', content: [{ type: 'text', text: 'Not logged in · Please run /login' }], stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 } }, parent_tool_use_id: null, error: 'authentication_failed', ...base });
        out({ type: 'result', subtype: 'success', is_error: true, result: 'Not logged in · Please run /login', stop_reason: 'stop_sequence', terminal_reason: 'completed', total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 }, ...base });
        continue;
      }
      const text = `hello from the stand-in (turn ${turns})`;
      out({ type: 'assistant', message: { id: `m-${turns}`, type: 'message', role: 'assistant', model: 'stand-in', content: [{ type: 'text', text }], stop_reason: null, usage: { input_tokens: 3, output_tokens: 5 } }, parent_tool_use_id: null, ...base });
      out({ type: 'result', subtype: 'success', is_error: false, result: text, stop_reason: 'end_turn', terminal_reason: 'completed', num_turns: 1, total_cost_usd: 0.0003 * turns, usage: { input_tokens: 3, output_tokens: 5 }, ...base });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
