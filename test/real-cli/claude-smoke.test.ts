/**
 * Smoke test of the REAL pinned Claude Code CLI (stream-json in/out) against our mock Messages
 * API on 127.0.0.1, with a hermetic environment (temp HOME/CLAUDE_CONFIG_DIR/TMPDIR, no copy of
 * process.env). No network but loopback is used.
 *
 * Set UPDATE_CLAUDE_FIXTURES=1 to (re)write test/fixtures/claude/smoke-multi-turn-tool.jsonl;
 * it is also written when missing.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { CLAUDE_PINNED_VERSION, claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { LineCarry, Wakeup } from '../support/ndjson-stream.js';
import { findProcesses } from '../support/processes.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixturePath = join(repoRoot, 'test', 'fixtures', 'claude', 'smoke-multi-turn-tool.jsonl');
const WAIT_MS = 20_000;

type Json = Record<string, any>;
/** One fixture line: a protocol message, or the stdin EOF / process exit markers. */
interface TrafficEntry {
  t: number;
  dir: 'host->cli' | 'cli->host';
  msg?: Json;
  eof?: true;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/** A tiny NDJSON driver for one CLI process: records both directions with timestamps. */
class Driver {
  readonly lines: Json[] = [];
  readonly traffic: TrafficEntry[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly carry = new LineCarry();
  private cursor = 0;
  private readonly wakeup = new Wakeup();
  private readonly t0 = performance.now();

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      for (const line of this.carry.push(chunk)) {
        let msg: Json;
        try {
          msg = JSON.parse(line) as Json;
        } catch {
          msg = { type: '__unparseable__', line };
        }
        this.lines.push(msg);
        this.traffic.push({ t: this.now(), dir: 'cli->host', msg });
      }
      this.wakeup.wake();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    this.exited = new Promise((resolveExit) => {
      child.on('exit', (code, signal) => {
        this.traffic.push({ t: this.now(), dir: 'cli->host', exit: { code, signal } });
        this.wakeup.wake();
        resolveExit({ code, signal });
      });
    });
  }

  now(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  write(msg: Json): void {
    this.traffic.push({ t: this.now(), dir: 'host->cli', msg });
    this.child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  /** Next line (after the cursor) matching `pred`; lines before it are consumed too. */
  async next(pred: (m: Json) => boolean, what: string, timeoutMs = WAIT_MS): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.lines.length) {
        const m = this.lines[this.cursor++]!;
        if (pred(m)) return m;
      }
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`CLI exited (${this.child.exitCode ?? this.child.signalCode}) while waiting for ${what}; stderr: ${this.stderr}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`);
      await this.wakeup.sleep(left);
    }
  }

  /** All lines seen since index `from`. */
  since(from: number): Json[] {
    return this.lines.slice(from);
  }
}

function userMessage(text: string): Json {
  return { type: 'user', session_id: '', message: { role: 'user', content: [{ type: 'text', text }] }, parent_tool_use_id: null };
}

function textDeltas(lines: Json[]): string {
  return lines
    .filter((m) => m.type === 'stream_event' && m.event?.type === 'content_block_delta' && m.event.delta?.type === 'text_delta')
    .map((m) => m.event.delta.text as string)
    .join('');
}

/** pids whose argv runs `binary` with our session id (so concurrent runs don't interfere). */
function processesRunning(binary: string, marker: string): number[] {
  return findProcesses((proc) => {
    const cmdline = proc.cmdline();
    return cmdline.includes(binary) && cmdline.includes(marker);
  });
}

const round = (n: number) => Math.round(n);

describe('real Claude Code CLI against the mock Messages API', () => {
  let root: string;
  let mock: AnthropicMock;
  let child: ChildProcessWithoutNullStreams | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-smoke-'));
    mock = await startAnthropicMock();
  });

  afterEach(async () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    child = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('initialize, two text turns, a Bash tool turn with can_use_tool, clean exit', async () => {
    const binary = claudeBinary();
    const sessionId = randomUUID();
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root });
    const args = [
      '-p',
      '--input-format', 'stream-json',
      '--output-format', 'stream-json',
      '--verbose',
      '--permission-prompt-tool', 'stdio',
      '--include-partial-messages',
      '--session-id', sessionId,
    ];

    const tSpawn = performance.now();
    child = spawn(binary, args, { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const cli = new Driver(child);
    const timings: Record<string, number> = {};

    // --- initialize handshake ---
    cli.write({ type: 'control_request', request_id: 'init-1', request: { subtype: 'initialize' } });
    const init = await cli.next((m) => m.type === 'control_response' && m.response?.request_id === 'init-1', 'initialize response');
    timings.spawnToInitializeMs = round(performance.now() - tSpawn);
    expect(init.response.subtype).toBe('success');
    expect(init.response.response.claude_code_version).toBe(CLAUDE_PINNED_VERSION);

    // --- turn 1: scripted text ---
    const text1 = 'Hello from the mock, streamed in pieces.';
    mock.enqueue({ kind: 'text', text: text1, chunks: 4 });
    let mark = cli.lines.length;
    let t = performance.now();
    cli.write(userMessage('first prompt'));
    const sysInit = await cli.next((m) => m.type === 'system' && m.subtype === 'init', 'system/init (turn 1)');
    const result1 = await cli.next((m) => m.type === 'result', 'result (turn 1)');
    timings.turn1Ms = round(performance.now() - t);
    expect(result1.is_error).toBe(false);
    expect(result1.result).toBe(text1);
    expect(sysInit.session_id).toBe(sessionId);
    expect(result1.session_id).toBe(sessionId);
    expect(textDeltas(cli.since(mark))).toBe(text1);
    expect(mock.requests).toHaveLength(1);
    const req1 = mock.requests[0]!;
    expect(req1.method).toBe('POST');
    expect(req1.pathname).toBe('/v1/messages');
    expect(req1.body.stream).toBe(true);
    expect(req1.headers['x-api-key']).toBe('dummy');
    expect(req1.headers['x-claude-code-session-id']).toBe(sessionId);

    // --- turn 2: default echo response, same process ---
    mark = cli.lines.length;
    t = performance.now();
    cli.write(userMessage('second prompt'));
    const result2 = await cli.next((m) => m.type === 'result', 'result (turn 2)');
    timings.turn2Ms = round(performance.now() - t);
    expect(result2.is_error).toBe(false);
    expect(result2.result).toBe('Echo: second prompt');
    expect(textDeltas(cli.since(mark))).toBe('Echo: second prompt');
    expect(mock.requests).toHaveLength(2);
    expect(mock.requests[1]!.body.stream).toBe(true);

    // --- turn 3: Bash tool_use that needs approval; host allows with updatedInput ---
    const asked = join(root, 'x.txt');
    const approved = join(root, 'y.txt');
    mock.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: `touch ${asked}`, description: 'Create a file' } },
      { kind: 'text', text: 'File created.' },
    );
    mark = cli.lines.length;
    t = performance.now();
    cli.write(userMessage('please create the file'));
    const permission = await cli.next(
      (m) => m.type === 'control_request' && m.request?.subtype === 'can_use_tool',
      'can_use_tool request',
    );
    timings.turn3ToCanUseToolMs = round(performance.now() - t);
    expect(permission.request.tool_name).toBe('Bash');
    expect(permission.request.input.command).toBe(`touch ${asked}`);
    cli.write({
      type: 'control_response',
      response: {
        subtype: 'success',
        request_id: permission.request_id,
        response: { behavior: 'allow', updatedInput: { ...permission.request.input, command: `touch ${approved}` } },
      },
    });
    const toolResult = await cli.next(
      (m) => m.type === 'user' && Array.isArray(m.message?.content) && m.message.content.some((b: Json) => b.type === 'tool_result'),
      'tool_result echo',
    );
    const result3 = await cli.next((m) => m.type === 'result', 'result (turn 3)');
    timings.turn3Ms = round(performance.now() - t);
    const block = toolResult.message.content.find((b: Json) => b.type === 'tool_result');
    expect(block.tool_use_id).toBe(permission.request.tool_use_id);
    expect(block.is_error).toBe(false);
    expect(result3.is_error).toBe(false);
    expect(result3.result).toBe('File created.');
    // updatedInput replaced the command: the approved file exists, the originally asked one not.
    expect(existsSync(approved)).toBe(true);
    expect(existsSync(asked)).toBe(false);
    expect(mock.requests).toHaveLength(4);
    expect(mock.requests.every((r) => r.method === 'POST' && r.pathname === '/v1/messages' && r.body?.stream === true)).toBe(true);
    // the second API call of the tool turn carries the tool_result back to the model
    const lastMessages: Json[] = mock.requests[3]!.body.messages;
    expect(JSON.stringify(lastMessages)).toContain(permission.request.tool_use_id);
    expect(mock.pending()).toBe(0);
    expect(cli.since(mark).some((m) => m.type === '__unparseable__')).toBe(false);

    // --- shutdown: end stdin, the process exits, nothing of ours remains ---
    t = performance.now();
    cli.traffic.push({ t: cli.now(), dir: 'host->cli', eof: true });
    child.stdin.end();
    const exit = await Promise.race([
      cli.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('CLI did not exit after stdin EOF')), WAIT_MS)),
    ]);
    timings.stdinEofToExitMs = round(performance.now() - t);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(processesRunning(binary, sessionId)).toEqual([]);
    expect(cli.lines.some((m) => m.type === '__unparseable__')).toBe(false);

    console.log(`[claude-smoke] timings ${JSON.stringify(timings)}`);

    if (process.env.UPDATE_CLAUDE_FIXTURES === '1' || !existsSync(fixturePath)) {
      mkdirSync(dirname(fixturePath), { recursive: true });
      const body = cli.traffic.map((e) => JSON.stringify(e).replaceAll(root, '<ROOT>')).join('\n');
      writeFileSync(fixturePath, `${body}\n`);
    }
  });
});
