/**
 * A scripted stand-in for Claude Code in stream-json mode (`claude -p --input-format stream-json
 * --output-format stream-json --permission-prompt-tool stdio`), shipped with the kit: it answers
 * the `initialize` and `interrupt` control requests, asks `can_use_tool` for a permission
 * directive, and obeys the directives of `standInDriver()` in each user message (JSON
 * `{"standIn":…}`); any other message is answered "ok". It keeps the session id it is given
 * (`--session-id` / `--resume`). With `-p` and no `--input-format` (print mode, the driven engine)
 * stdin is one plain-text prompt and the process ends after its turn. Self-contained (node: modules only): runs from source and package.
 */
import { randomUUID } from 'node:crypto';

type Json = Record<string, any>;
type Directive = { standIn?: string; answer?: string; command?: string; then?: string; kind?: string };

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
if (argv.includes('--version')) {
  process.stdout.write('0.0.0-stand-in (Claude Code stand-in)\n');
  process.exit(0);
}
const SESSION_ID = flag('--resume') ?? flag('--session-id') ?? randomUUID();
const out = (message: Json): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
let messages = 0;
let calls = 0;
let cost = 0;
/** The stalled turn, ended by an interrupt. */
let stalled = false;
/** Our `can_use_tool` requests waiting for the host's answer, by request id. */
const asked = new Map<string, (response: Json | undefined) => void>();

function directive(content: unknown): Directive {
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: Json) => (b?.type === 'text' ? String(b.text) : '')).join('') : '';
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && 'standIn' in parsed) return parsed as Directive;
  } catch {
    // a plain message
  }
  return { standIn: 'text', answer: 'ok' };
}

function assistant(content: Json[]): void {
  out({ type: 'assistant', message: { id: `msg-${++messages}`, type: 'message', role: 'assistant', content, usage: { input_tokens: 12, output_tokens: 7 } }, parent_tool_use_id: null, session_id: SESSION_ID });
}

function toolResult(callId: string, content: string, isError: boolean): void {
  out({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content, is_error: isError }] }, parent_tool_use_id: null, session_id: SESSION_ID });
}

function result(answer: string): void {
  cost += 0.0001;
  out({ type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', terminal_reason: 'completed', result: answer, session_id: SESSION_ID, total_cost_usd: cost, usage: { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
}

function answerWith(text: string): void {
  assistant([{ type: 'text', text }]);
  result(text);
}

function badLine(kind: string | undefined): string {
  if (kind === 'huge') return `${'x'.repeat(4 * 1024 * 1024)}\n`;
  if (kind === 'truncated') return `{"type":"assistant","message":{"id":"cut","content":[{"type":"text","text":"cut sh\n`;
  return 'this line is not JSON at all\n';
}

function turn(d: Directive): void {
  out({ type: 'system', subtype: 'init', session_id: SESSION_ID, cwd: process.cwd(), tools: ['Bash'], model: 'stand-in' });
  const answer = d.answer ?? d.then ?? 'ok';
  switch (d.standIn) {
    case 'failure':
      assistant([{ type: 'text', text: 'API Error: 500 the model request failed (stand-in)' }]);
      out({ type: 'result', subtype: 'success', is_error: true, api_error_status: 500, terminal_reason: 'api_error', result: 'API Error: 500 the model request failed (stand-in)', session_id: SESSION_ID, total_cost_usd: cost, usage: { input_tokens: 0, output_tokens: 0 } });
      return;
    case 'stall':
      stalled = true;
      assistant([{ type: 'text', text: 'Thinking it over' }]);
      return;
    case 'bad':
      process.stdout.write(badLine(d.kind));
      answerWith(answer);
      return;
    case 'tool': {
      const id = `toolu_${++calls}`;
      assistant([{ type: 'tool_use', id, name: 'Bash', input: { command: d.command } }]);
      toolResult(id, 'conformance', false);
      answerWith(answer);
      return;
    }
    case 'permission': {
      const id = `toolu_${++calls}`;
      const input = { command: d.command };
      assistant([{ type: 'tool_use', id, name: 'Bash', input }]);
      const requestId = randomUUID();
      asked.set(requestId, (response) => {
        const allowed = response?.['behavior'] === 'allow';
        toolResult(id, allowed ? 'done' : String(response?.['message'] ?? 'denied'), !allowed);
        answerWith(answer);
      });
      out({ type: 'control_request', request_id: requestId, request: { subtype: 'can_use_tool', tool_name: 'Bash', input, tool_use_id: id } });
      return;
    }
    default:
      answerWith(answer);
  }
}

function handle(m: Json): void {
  if (m['type'] === 'control_request') {
    const subtype = m['request']?.subtype;
    out({ type: 'control_response', response: { subtype: 'success', request_id: m['request_id'], response: subtype === 'initialize' ? { commands: [] } : {} } });
    if (subtype === 'interrupt') {
      asked.clear();
      if (stalled) {
        stalled = false;
        out({ type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_streaming', session_id: SESSION_ID, total_cost_usd: cost, usage: { input_tokens: 0, output_tokens: 0 } });
      }
    }
  } else if (m['type'] === 'control_response') {
    const id = m['response']?.request_id;
    const answer = asked.get(id);
    asked.delete(id);
    answer?.(m['response']?.response);
  } else if (m['type'] === 'user') {
    turn(directive(m['message']?.content));
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
if (argv.includes('-p') && !argv.includes('--input-format')) {
  // Print mode (one process a turn): the whole of stdin is the prompt; a stalled turn waits for its kill.
  process.stdin.on('data', (chunk: string) => void (buffer += chunk));
  process.stdin.on('end', () => {
    turn(directive(buffer));
    if (stalled) setInterval(() => undefined, 60_000);
  });
} else {
  process.stdin.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line === '') continue;
      try {
        handle(JSON.parse(line) as Json);
      } catch {
        // not ours to answer
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
