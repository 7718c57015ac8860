/**
 * The recorded-turn streams of the side-by-side benchmark, generated (not checked in: 18 MB each).
 * Every line has the shape of a line in the recorded fixtures (test/fixtures/claude,
 * test/fixtures/codex, test/fixtures/acp); only the ids, uuids and texts vary, so every consumer
 * parses and translates exactly what a real agent would have sent for one long streamed turn.
 *
 * A stream file is the agent's output of one turn; the stand-in (stand-in-agent.mjs) writes it
 * after the turn's request, and a script file tells the stand-in how to answer the handshake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The stand-in agent (stand-in-agent.mjs beside this file). */
export const STAND_IN = fileURLToPath(new URL('./stand-in-agent.mjs', import.meta.url));

export const SESSION_ID = 'a0308261-f4a9-4701-8ea9-55dc9eb0b1d2';
export const THREAD_ID = '01a20788-2c8a-7042-a1ce-510530223095';
export const TURN_ID = '01a20788-2ca4-7582-8607-86d88a16f027';

/** What the stand-in needs to play one agent: how to answer requests, and when to write the stream. */
export interface StandInScript {
  protocol: 'claude' | 'jsonrpc';
  /** The turn's output, written in 1 MiB chunks after the trigger. */
  stream: string;
  /** JSON-RPC: result per request method; the trigger's result goes out before the stream unless `answerTriggerLast`. */
  answers?: Record<string, unknown>;
  /** JSON-RPC: the method that starts the turn (`turn/start`, `session/prompt`). Claude: a `user` line. */
  trigger?: string;
  /** JSON-RPC: the trigger's result is written after the stream (ACP: the prompt's response ends the turn). */
  answerTriggerLast?: boolean;
  /** Whether responses carry `"jsonrpc":"2.0"` (ACP does, Codex app-server does not). */
  jsonrpc2?: boolean;
}

/** A uuid-shaped id that is unique per `n` (deterministic, so every run writes the same bytes). */
function uuid(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `7c1d0e2a-5b3f-4e6a-9c8d-${hex}`;
}

/** A message id of the same length whether unique (`msg_mock_<32 hex>`) or repeated. */
function messageId(n: number, repeated: boolean): string {
  return `msg_mock_${(repeated ? 0 : n).toString(16).padStart(32, '0')}`;
}

const WORDS = ['Hello', ' from', ' the', ' mock,', ' streamed', ' in', ' pieces.', ' Echo:', ' second', ' prompt', ' File', ' created.'];

export interface ClaudeStreamOptions {
  lines: number;
  /** Every message has the same id (what a buggy or hostile agent can send). */
  repeatedIds?: boolean;
  /** Text deltas per message. */
  deltasPerMessage?: number;
}

/**
 * One Claude Code turn of `lines` stdout lines: `system/init`, then messages of the recorded shape
 * (`message_start`, `content_block_start`, text deltas, the block's `assistant` line,
 * `content_block_stop`, `message_delta`, `message_stop`), then the turn's `result`.
 */
export function claudeTurn({ lines, repeatedIds = false, deltasPerMessage = 3 }: ClaudeStreamOptions): string {
  const out: string[] = [];
  let u = 0;
  const base = () => `"session_id":"${SESSION_ID}","parent_tool_use_id":null,"uuid":"${uuid(u++)}"`;
  out.push(
    JSON.stringify({ type: 'system', subtype: 'init', cwd: '/tmp/bench/work', session_id: SESSION_ID, tools: ['Bash', 'Read', 'Write'], mcp_servers: [], model: 'claude-opus-5-5', permissionMode: 'default', apiKeySource: 'ANTHROPIC_API_KEY', claude_code_version: '2.1.330', output_style: 'default', uuid: uuid(u++) }),
  );
  const perMessage = 7 + deltasPerMessage;
  let m = 0;
  while (out.length + perMessage < lines) {
    const id = messageId(m++, repeatedIds);
    const ev = (event: string) => `{"type":"stream_event","event":${event},${base()},"api_message_id":"${id}"}`;
    out.push(ev(`{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`));
    out.push(ev('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'));
    let text = '';
    for (let d = 0; d < deltasPerMessage; d++) {
      const piece = WORDS[(m + d) % WORDS.length]!;
      text += piece;
      out.push(ev(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(piece)}}}`));
    }
    out.push(
      `{"type":"assistant","message":{"id":"${id}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":${JSON.stringify(text)}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},${base()}}`,
    );
    out.push(ev('{"type":"content_block_stop","index":0}'));
    out.push(ev('{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":10}}'));
    out.push(ev('{"type":"message_stop"}'));
  }
  // Filler deltas so every stream has exactly `lines` lines (the result is the last).
  while (out.length < lines - 1) {
    out.push(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" more"}},${base()},"api_message_id":"${messageId(m, repeatedIds)}"}`);
  }
  out.push(claudeResult('Hello from the mock, streamed in pieces.'));
  return out.join('\n') + '\n';
}

/**
 * A Claude turn dense in events (issue 24): the shape of recorded `--include-partial-messages`
 * traffic for a model call with thinking and tool use, repeated to `lines` lines. Each call:
 * `message_start`; a thinking block (5 `thinking_delta`, a `signature_delta`, its `assistant`
 * line); a text block (7 `text_delta`, its `assistant` line); a `tool_use` block (4
 * `input_json_delta`, its `assistant` line); `message_delta`, `message_stop`; then the `user` line
 * carrying the tool's result. 31 lines and 13 AgentEvents per call (about 0.42 per line).
 */
export function claudeDenseTurn({ lines }: { lines: number }): string {
  const out: string[] = [];
  let u = 0;
  const base = () => `"session_id":"${SESSION_ID}","parent_tool_use_id":null,"uuid":"${uuid(u++)}"`;
  out.push(
    JSON.stringify({ type: 'system', subtype: 'init', cwd: '/tmp/bench/work', session_id: SESSION_ID, tools: ['Bash', 'Read', 'Write'], mcp_servers: [], model: 'claude-opus-5-5', permissionMode: 'default', apiKeySource: 'ANTHROPIC_API_KEY', claude_code_version: '2.1.330', output_style: 'default', uuid: uuid(u++) }),
  );
  const usage = '"usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}';
  let m = 0;
  while (out.length + 31 < lines) {
    const id = messageId(m++, false);
    const toolId = `toolu_mock_${m.toString(16).padStart(24, '0')}`;
    const ev = (event: string) => `{"type":"stream_event","event":${event},${base()},"api_message_id":"${id}"}`;
    const assistant = (content: string) =>
      `{"type":"assistant","message":{"id":"${id}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[${content}],"stop_reason":null,"stop_sequence":null,${usage}},${base()}}`;
    out.push(ev(`{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"stop_reason":null,"stop_sequence":null,${usage}}}`));
    // thinking
    out.push(ev('{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}'));
    let thought = '';
    for (let d = 0; d < 5; d++) {
      const piece = WORDS[(m + d) % WORDS.length]!;
      thought += piece;
      out.push(ev(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":${JSON.stringify(piece)}}}`));
    }
    out.push(ev('{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EpYBCkYIBxgCKkBmock0signature0bytes0for0the0bench0only0=="}}'));
    out.push(assistant(`{"type":"thinking","thinking":${JSON.stringify(thought)},"signature":"EpYBCkYIBxgCKkBmock0signature0bytes0for0the0bench0only0=="}`));
    out.push(ev('{"type":"content_block_stop","index":0}'));
    // text
    out.push(ev('{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}'));
    let text = '';
    for (let d = 0; d < 7; d++) {
      const piece = WORDS[(m + d + 3) % WORDS.length]!;
      text += piece;
      out.push(ev(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":${JSON.stringify(piece)}}}`));
    }
    out.push(assistant(`{"type":"text","text":${JSON.stringify(text)}}`));
    out.push(ev('{"type":"content_block_stop","index":1}'));
    // tool use
    out.push(ev(`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"${toolId}","name":"Bash","input":{}}}`));
    for (const part of ['{"command": ', '"ls -la ', '/tmp/bench', '/work"}']) {
      out.push(ev(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(part)}}}`));
    }
    out.push(assistant(`{"type":"tool_use","id":"${toolId}","name":"Bash","input":{"command":"ls -la /tmp/bench/work"}}`));
    out.push(ev('{"type":"content_block_stop","index":2}'));
    out.push(ev('{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}'));
    out.push(ev('{"type":"message_stop"}'));
    out.push(
      `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"${toolId}","type":"tool_result","content":"total 8\\ndrwxr-xr-x 2 user user 4096 Nov 24 02:29 .\\ndrwxr-xr-x 3 user user 4096 Nov 24 02:29 ..","is_error":false}]},${base()},"tool_use_result":{"stdout":"total 8","stderr":"","interrupted":false,"isImage":false}}`,
    );
  }
  while (out.length < lines - 1) {
    out.push(`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" more"}},${base()},"api_message_id":"${messageId(m, false)}"}`);
  }
  out.push(claudeResult('Hello from the mock, streamed in pieces.'));
  return out.join('\n') + '\n';
}

function claudeResult(result: string): string {
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 217,
    duration_api_ms: 51,
    num_turns: 1,
    result,
    stop_reason: 'end_turn',
    terminal_reason: 'completed',
    session_id: SESSION_ID,
    total_cost_usd: 0.000248,
    usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 },
    uuid: uuid(9_999_999),
  });
}

/** One Claude turn whose answer is a single `assistant` line of about `bytes` bytes (one huge text block). */
export function claudeOneLine(bytes: number): string {
  const init = JSON.stringify({ type: 'system', subtype: 'init', cwd: '/tmp/bench/work', session_id: SESSION_ID, tools: [], mcp_servers: [], model: 'claude-opus-5-5', permissionMode: 'default', uuid: uuid(0) });
  const head = `{"type":"assistant","message":{"id":"${messageId(1, false)}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"`;
  const tail = `"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}},"session_id":"${SESSION_ID}","parent_tool_use_id":null,"uuid":"${uuid(1)}"}`;
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((bytes - head.length - tail.length) / 27)).slice(0, bytes - head.length - tail.length);
  return `${init}\n${head}${filler}${tail}\n${claudeResult('done')}\n`;
}

/**
 * One Codex app-server turn (notifications after the `turn/start` response): per message
 * `item/started` (agentMessage), deltas, `item/completed`; `turn/completed` last.
 */
export function codexTurn({ lines, deltasPerMessage = 6 }: { lines: number; deltasPerMessage?: number }): string {
  const out: string[] = [];
  const at = 1795422694669;
  const ids = `"threadId":"${THREAD_ID}","turnId":"${TURN_ID}"`;
  out.push(`{"method":"turn/started","params":{"threadId":"${THREAD_ID}","turn":{"id":"${TURN_ID}","rootTurnId":"${TURN_ID}","items":[],"itemsView":"notLoaded","status":"inProgress","error":null,"startedAt":1795422694,"completedAt":null,"durationMs":null}},"emittedAtMs":${at}}`);
  let m = 0;
  const perMessage = 2 + deltasPerMessage;
  while (out.length + perMessage < lines) {
    const id = `msg_${(m++).toString(16).padStart(12, '0')}`;
    out.push(`{"method":"item/started","params":{"item":{"type":"agentMessage","moderation":null,"id":"${id}","text":"","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":${at},"completedAtMs":null},${ids},"startedAtMs":${at}},"emittedAtMs":${at}}`);
    let text = '';
    for (let d = 0; d < deltasPerMessage; d++) {
      const piece = WORDS[(m + d) % WORDS.length]!;
      text += piece;
      out.push(`{"method":"item/agentMessage/delta","params":{${ids},"itemId":"${id}","delta":${JSON.stringify(piece)}},"emittedAtMs":${at}}`);
    }
    out.push(`{"method":"item/completed","params":{"item":{"type":"agentMessage","moderation":null,"id":"${id}","text":${JSON.stringify(text)},"phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":${at},"completedAtMs":${at}},${ids},"completedAtMs":${at}},"emittedAtMs":${at}}`);
  }
  while (out.length < lines - 1) out.push(`{"method":"item/agentMessage/delta","params":{${ids},"itemId":"msg_${m.toString(16).padStart(12, '0')}","delta":" more"},"emittedAtMs":${at}}`);
  out.push(`{"method":"turn/completed","params":{"threadId":"${THREAD_ID}","turn":{"id":"${TURN_ID}","rootTurnId":"${TURN_ID}","items":[],"itemsView":"notLoaded","status":"completed","error":null,"startedAt":1795422694,"completedAt":1795422695,"durationMs":900}},"emittedAtMs":${at}}`);
  return out.join('\n') + '\n';
}

/** The Codex app-server handshake answers (shapes from test/fixtures/codex/app-server-text-two-turns.jsonl). */
export const CODEX_ANSWERS: Record<string, unknown> = {
  initialize: { userAgent: 'agent_session_engine/0.169.0 (bench)', codexHome: '/tmp/bench/codex-home', platformFamily: 'unix', platformOs: 'linux' },
  'thread/start': {
    thread: { id: THREAD_ID, sessionId: THREAD_ID, forkedFromId: null, preview: '', modelProvider: 'openai', createdAt: 1795422694, updatedAt: 1795422694, status: { type: 'idle' }, path: null, cwd: '/tmp/bench/work', cliVersion: '0.169.0', source: 'appServer', agentNickname: null, agentRole: null, gitInfo: null, name: null, turns: [] },
    model: 'gpt-5.4',
    modelProvider: 'openai',
    cwd: '/tmp/bench/work',
    approvalPolicy: 'on-request',
    sandbox: { type: 'workspaceWrite', writableRoots: [], networkAccess: false, excludeTmpdirEnvVar: false, excludeSlashTmp: false },
    reasoningEffort: null,
  },
  'turn/start': { turn: { id: TURN_ID, rootTurnId: TURN_ID, items: [], itemsView: 'notLoaded', status: 'inProgress', error: null, startedAt: null, completedAt: null, durationMs: null } },
};

/** One ACP turn: `session/update` notifications (`agent_message_chunk`) for the running prompt. */
export function acpTurn({ lines }: { lines: number }): string {
  const out: string[] = [];
  for (let i = 0; i < lines - 1; i++) {
    const piece = WORDS[i % WORDS.length]!;
    out.push(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"${THREAD_ID}","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":${JSON.stringify(piece)}}}}}`);
  }
  out.push(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"${THREAD_ID}","update":{"sessionUpdate":"usage_update","used":107,"size":258400}}}`);
  return out.join('\n') + '\n';
}

/** The ACP handshake answers (shapes from test/fixtures/acp/codex-acp.jsonl); the prompt's answer ends the turn. */
export const ACP_ANSWERS: Record<string, unknown> = {
  initialize: { protocolVersion: 1, agentCapabilities: { loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: false } }, authMethods: [] },
  'session/new': { sessionId: THREAD_ID },
  'session/prompt': { stopReason: 'end_turn' },
};

/** Writes a stream and its stand-in script into `dir`; returns the script's path. */
export function writeScript(dir: string, name: string, stream: string, script: Omit<StandInScript, 'stream'>): string {
  fs.mkdirSync(dir, { recursive: true });
  const streamPath = path.join(dir, `${name}.stream`);
  fs.writeFileSync(streamPath, stream);
  const scriptPath = path.join(dir, `${name}.json`);
  fs.writeFileSync(scriptPath, JSON.stringify({ ...script, stream: streamPath } satisfies StandInScript));
  return scriptPath;
}

/** A temp directory set up for the stand-in: a working directory, the stand-in linked as the agent's `bin`, and one turn's script. */
export interface StandInDir {
  dir: string;
  workDir: string;
  bin: string;
  /** The engine's `env` option that hands the stand-in its script. */
  env: { STANDIN_SCRIPT: string };
}

/** Sets up a {@link StandInDir} under the system's temp dir (`prefix`) for `stream`; the caller removes `dir`. */
export function standInDir(prefix: string, binName: string, stream: string, script: Omit<StandInScript, 'stream'>): StandInDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const workDir = path.join(dir, 'work');
  fs.mkdirSync(workDir);
  const bin = path.join(dir, binName);
  fs.symlinkSync(STAND_IN, bin);
  return { dir, workDir, bin, env: { STANDIN_SCRIPT: writeScript(dir, 'turn', stream, script) } };
}
