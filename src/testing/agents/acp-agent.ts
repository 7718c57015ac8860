/**
 * A scripted stand-in ACP agent (Agent Client Protocol, JSON-RPC 2.0 over NDJSON on stdio), shipped
 * with the kit so an engine test needs no real agent and no model: run it as
 * `node <this file>` (see `standInAgent('acp')`). Each prompt is a directive the kit's
 * `standInDriver()` writes (JSON: `{"standIn":"text","answer":…}`, `tool`, `permission`, `failure`,
 * `stall`, `bad`); any other prompt is answered "ok". Self-contained (node: modules only), so it
 * runs from the source tree (Node's type stripping) and from the built package alike.
 */
import { randomUUID } from 'node:crypto';

type Json = Record<string, any>;
type Directive = { standIn?: string; answer?: string; command?: string; then?: string; kind?: string };

const USAGE = { inputTokens: 12, outputTokens: 7, cachedReadTokens: 0, cachedWriteTokens: 0 };
const write = (message: Json): void => void process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const update = (sessionId: string, body: Json): void => write({ method: 'session/update', params: { sessionId, update: body } });
const say = (sessionId: string, text: string): void => update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

/** The turn in progress: its prompt request id, and how it ends when cancelled. */
let current: { id: unknown; sessionId: string; cancel: () => void } | undefined;
/** Our requests to the client (permission asks), by id. */
const asked = new Map<number, (result: Json | undefined) => void>();
let nextRequest = 0;
let toolCalls = 0;

function directive(prompt: unknown): Directive {
  const text = Array.isArray(prompt) ? prompt.map((b: Json) => (b?.type === 'text' ? String(b.text) : '')).join('') : '';
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && 'standIn' in parsed) return parsed as Directive;
  } catch {
    // a plain prompt
  }
  return { standIn: 'text', answer: 'ok' };
}

function finish(id: unknown, stopReason: string): void {
  current = undefined;
  write({ id, result: { stopReason, usage: USAGE } });
}

function badLine(kind: string | undefined): string {
  if (kind === 'huge') return `${'x'.repeat(4 * 1024 * 1024)}\n`;
  if (kind === 'truncated') return '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"cut-sh\n';
  return 'this line is not JSON at all\n';
}

function prompt(id: unknown, sessionId: string, d: Directive): void {
  const answer = d.answer ?? d.then ?? 'ok';
  switch (d.standIn) {
    case 'failure':
      current = undefined;
      write({ id, error: { code: -32603, message: 'Internal error: the model request failed (stand-in)' } });
      return;
    case 'stall':
      current = { id, sessionId, cancel: () => finish(id, 'cancelled') };
      say(sessionId, 'Thinking it over');
      return;
    case 'bad':
      process.stdout.write(badLine(d.kind));
      say(sessionId, answer);
      finish(id, 'end_turn');
      return;
    case 'tool': {
      const toolCallId = `call-${++toolCalls}`;
      update(sessionId, { sessionUpdate: 'tool_call', toolCallId, title: d.command ?? 'tool', kind: 'execute', status: 'in_progress', rawInput: { command: d.command } });
      update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'conformance\n' } }] });
      say(sessionId, answer);
      finish(id, 'end_turn');
      return;
    }
    case 'permission': {
      const toolCallId = `call-${++toolCalls}`;
      const toolCall = { toolCallId, title: d.command ?? 'tool', kind: 'execute', status: 'pending', rawInput: { command: d.command } };
      update(sessionId, { sessionUpdate: 'tool_call', ...toolCall });
      const requestId = nextRequest++;
      current = { id, sessionId, cancel: () => undefined };
      current.cancel = () => {
        asked.delete(requestId);
        finish(id, 'cancelled');
      };
      asked.set(requestId, (result) => {
        const allowed = result?.['outcome']?.outcome === 'selected' && result['outcome'].optionId === 'allow';
        update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: allowed ? 'completed' : 'failed', content: [{ type: 'content', content: { type: 'text', text: allowed ? 'done\n' : 'refused by the user' } }] });
        say(sessionId, answer);
        finish(id, 'end_turn');
      });
      write({
        id: requestId,
        method: 'session/request_permission',
        params: { sessionId, toolCall, options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] },
      });
      return;
    }
    default:
      say(sessionId, answer);
      finish(id, 'end_turn');
  }
}

function handle(message: Json): void {
  if (message['method'] === undefined) {
    // A response to one of our requests (or the client's answer to a line it could not parse: id null).
    if (typeof message['id'] === 'number') {
      const resolve = asked.get(message['id']);
      asked.delete(message['id']);
      resolve?.(message['result']);
    }
    return;
  }
  const { id, method, params = {} } = message as { id?: unknown; method: string; params?: Json };
  switch (method) {
    case 'initialize':
      write({ id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [], agentInfo: { name: 'ase-stand-in-acp', version: '1.0.0' } } });
      return;
    case 'session/new':
      write({ id, result: { sessionId: randomUUID() } });
      return;
    case 'session/load':
      // The stand-in keeps no history: loading any id continues it (no fork).
      write({ id, result: {} });
      return;
    case 'session/prompt':
      prompt(id, String(params['sessionId']), directive(params['prompt']));
      return;
    case 'session/cancel':
      current?.cancel();
      return;
    default:
      if (id !== undefined) write({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
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
