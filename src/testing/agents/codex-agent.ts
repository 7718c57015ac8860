/**
 * A scripted stand-in for `codex app-server` (JSON-RPC over NDJSON on stdio, without the
 * `jsonrpc` field, as Codex writes it), shipped with the kit: it answers `initialize`,
 * `thread/start` / `thread/resume` (a resumed thread keeps its id), `turn/start` and
 * `turn/interrupt`, asks `item/commandExecution/requestApproval` for a permission directive, and
 * obeys the directives of `standInDriver()` (JSON `{"standIn":…}` as the turn's text); any other
 * text is answered "ok". `--version` prints a version. Self-contained (node: modules only).
 */
import { randomUUID } from 'node:crypto';

type Json = Record<string, any>;
type Directive = { standIn?: string; answer?: string; command?: string; then?: string; kind?: string };

if (process.argv.includes('--version')) {
  process.stdout.write('codex-cli 0.0.0-stand-in\n');
  process.exit(0);
}

const out = (message: Json): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
const notify = (method: string, params: Json): void => out({ method, params });
let threadId = '';
let items = 0;
let nextRequest = 0;
/** Running totals: `thread/tokenUsage/updated` carries the total and this turn's `last`. */
const total = { inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0 };
/** The running turn and how an interrupt ends it. */
let running: { turnId: string; interrupt: () => void } | undefined;
const asked = new Map<number, (result: Json | undefined) => void>();

function directive(input: unknown): Directive {
  const text = Array.isArray(input) ? input.map((b: Json) => (b?.type === 'text' ? String(b.text) : '')).join('') : '';
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && 'standIn' in parsed) return parsed as Directive;
  } catch {
    // a plain prompt
  }
  return { standIn: 'text', answer: 'ok' };
}

function complete(turnId: string, status: 'completed' | 'failed' | 'interrupted', error: Json | null = null): void {
  running = undefined;
  notify('turn/completed', { threadId, turn: { id: turnId, items: [], status, error } });
}

function answer(turnId: string, text: string): void {
  const id = `msg_${++items}`;
  notify('item/started', { threadId, turnId, item: { type: 'agentMessage', id, text: '' } });
  notify('item/agentMessage/delta', { threadId, turnId, itemId: id, delta: text });
  notify('item/completed', { threadId, turnId, item: { type: 'agentMessage', id, text } });
  const last = { inputTokens: 100, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 7, reasoningOutputTokens: 0, totalTokens: 107 };
  total.inputTokens += last.inputTokens;
  total.outputTokens += last.outputTokens;
  notify('thread/tokenUsage/updated', { threadId, turnId, tokenUsage: { total: { ...total, reasoningOutputTokens: 0, totalTokens: total.inputTokens + total.outputTokens }, last } });
  complete(turnId, 'completed');
}

function command(turnId: string, id: string, cmd: string, status: string, output: string | null): Json {
  return { threadId, turnId, item: { type: 'commandExecution', id, command: cmd, cwd: process.cwd(), status, commandActions: [], aggregatedOutput: output, exitCode: status === 'completed' ? 0 : null, durationMs: status === 'inProgress' ? null : 1 } };
}

function badLine(kind: string | undefined): string {
  if (kind === 'huge') return `${'x'.repeat(4 * 1024 * 1024)}\n`;
  if (kind === 'truncated') return '{"method":"item/agentMessage/delta","params":{"threadId":"cut-sh\n';
  return 'this line is not JSON at all\n';
}

function turn(turnId: string, d: Directive): void {
  notify('turn/started', { threadId, turn: { id: turnId, items: [], status: 'inProgress', error: null } });
  const then = d.answer ?? d.then ?? 'ok';
  switch (d.standIn) {
    case 'failure':
      notify('error', { threadId, turnId, willRetry: false, error: { message: 'stream error: the model request failed (stand-in)', codexErrorInfo: 'internalServerError' } });
      complete(turnId, 'failed', { message: 'stream error: the model request failed (stand-in)', codexErrorInfo: 'internalServerError' });
      return;
    case 'stall': {
      const id = `msg_${++items}`;
      notify('item/started', { threadId, turnId, item: { type: 'agentMessage', id, text: '' } });
      notify('item/agentMessage/delta', { threadId, turnId, itemId: id, delta: 'Thinking it over' });
      running = { turnId, interrupt: () => complete(turnId, 'interrupted') };
      return;
    }
    case 'bad':
      process.stdout.write(badLine(d.kind));
      answer(turnId, then);
      return;
    case 'tool': {
      const id = `call_${++items}`;
      notify('item/started', command(turnId, id, d.command ?? 'true', 'inProgress', null));
      notify('item/completed', command(turnId, id, d.command ?? 'true', 'completed', 'conformance\n'));
      answer(turnId, then);
      return;
    }
    case 'permission': {
      const id = `call_${++items}`;
      const cmd = d.command ?? 'true';
      notify('item/started', command(turnId, id, cmd, 'inProgress', null));
      const requestId = nextRequest++;
      running = {
        turnId,
        interrupt: () => {
          asked.delete(requestId);
          notify('serverRequest/resolved', { threadId, requestId });
          complete(turnId, 'interrupted');
        },
      };
      asked.set(requestId, (result) => {
        const allowed = result?.['decision'] === 'accept' || result?.['decision'] === 'acceptForSession';
        notify('serverRequest/resolved', { threadId, requestId });
        notify('item/completed', command(turnId, id, cmd, allowed ? 'completed' : 'declined', allowed ? 'done\n' : null));
        answer(turnId, then);
      });
      out({ id: requestId, method: 'item/commandExecution/requestApproval', params: { threadId, turnId, itemId: id, reason: 'stand-in asks', command: cmd, cwd: process.cwd(), commandActions: [] } });
      return;
    }
    default:
      answer(turnId, then);
  }
}

function thread(id: string): Json {
  return { thread: { id, path: null, preview: '', ephemeral: false }, model: 'stand-in', approvalPolicy: 'on-request' };
}

function handle(m: Json): void {
  if (m['method'] === undefined) {
    const answerTo = typeof m['id'] === 'number' ? asked.get(m['id']) : undefined;
    if (answerTo) {
      asked.delete(m['id']);
      answerTo(m['result']);
    }
    return;
  }
  const { id, method, params = {} } = m as { id?: number; method: string; params?: Json };
  switch (method) {
    case 'initialize':
      out({ id, result: { userAgent: 'codex-stand-in/0.0.0', codexHome: '', platformFamily: 'unix', platformOs: 'linux' } });
      return;
    case 'initialized':
      return;
    case 'thread/start':
      threadId = randomUUID();
      out({ id, result: thread(threadId) });
      return;
    case 'thread/resume':
      threadId = String(params['threadId']);
      out({ id, result: thread(threadId) });
      return;
    case 'turn/start': {
      const turnId = randomUUID();
      out({ id, result: { turn: { id: turnId, items: [], status: 'inProgress', error: null } } });
      turn(turnId, directive(params['input']));
      return;
    }
    case 'turn/interrupt':
      out({ id, result: {} });
      running?.interrupt();
      return;
    default:
      if (id !== undefined) out({ id, error: { code: -32601, message: `method not found: ${method}` } });
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
