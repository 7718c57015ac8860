/**
 * Smoke test of the OpenAI Responses mock + the Codex hermetic harness with the REAL pinned
 * binaries (0.169.0 and 0.153.4, `codex exec --json`): a text turn, a shell tool call that really
 * runs under Codex's sandbox, and the rollout file each run writes. Loopback only.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execCommandCall, startOpenAIResponsesMock, toolOutputsSinceLastUser, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { CODEX_VERSIONS, findRollouts, hermeticCodex, type CodexVersion, type HermeticCodex } from '../support/codex-hermetic.js';

interface ExecRun {
  code: number | null;
  events: any[];
  stderr: string;
  ms: number;
}

const running = new Set<number>();

/** Runs `codex exec --json` to completion (async: a sync spawn would block the in-process mock). */
function codexExec(h: HermeticCodex, prompt: string, extraArgs: string[] = []): Promise<ExecRun> {
  const started = performance.now();
  const child = spawn(h.bin, ['exec', '--json', '--skip-git-repo-check', '-C', h.workDir, ...extraArgs, prompt], {
    env: h.env,
    cwd: h.workDir,
    stdio: ['ignore', 'pipe', 'pipe'], // open stdin makes exec wait for EOF (reference §9.3)
    detached: true,
  });
  if (child.pid) running.add(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-8192)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (child.pid) running.delete(child.pid);
      const events = stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
      resolve({ code, events, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

function rolloutLines(h: HermeticCodex): any[] {
  const files = findRollouts(h.codexHome);
  expect(files).toHaveLength(1);
  return readFileSync(files[0]!, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

describe('OpenAI Responses mock + codex hermetic harness (real codex exec)', () => {
  let mock: OpenAIResponsesMock;
  let root: string;

  beforeEach(async () => {
    mock = await startOpenAIResponsesMock();
    root = mkdtempSync(join(tmpdir(), 'ase-codex-smoke-'));
  });

  afterEach(async () => {
    for (const pid of running) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    running.clear();
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('0.169.0: one text turn streams through the mock and writes a paginated rollout', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: '0.169.0' });
    mock.enqueue({ kind: 'text', text: 'Hello from the mock', reasoning: 'thinking about it' });
    const run = await codexExec(h, 'say hello');
    expect(run.code, run.stderr).toBe(0);

    const messages = run.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message');
    expect(messages.map((e) => e.item.text)).toEqual(['Hello from the mock']);
    expect(run.events.some((e) => e.type === 'item.completed' && e.item.type === 'reasoning' && e.item.text.includes('thinking about it'))).toBe(true);
    const completed = run.events.find((e) => e.type === 'turn.completed');
    expect(completed?.usage.input_tokens).toBe(100);

    const [request] = mock.responsesRequests();
    expect(request!.headers.authorization).toBe('Bearer dummy');
    expect(request!.body.stream).toBe(true);
    expect(request!.body.model).toBe('gpt-5.5');
    const tools = (request!.body.tools as any[]).map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['exec_command', 'apply_patch']));

    const lines = rolloutLines(h);
    expect(lines[0].type).toBe('session_meta');
    expect(lines[0].payload.history_mode).toBe('paginated');
    expect(lines[0].payload.cli_version).toBe('0.169.0');
    expect(lines.some((l) => l.payload?.type === 'task_complete' && l.payload.last_agent_message === 'Hello from the mock')).toBe(true);
    // Only loopback traffic reached the mock, and nothing but /v1/responses.
    expect(mock.requests.every((r) => r.pathname === '/v1/responses')).toBe(true);
  });

  it.each(CODEX_VERSIONS.map((v) => [v]))('%s: a shell tool call runs for real and its output reaches the model', async (version: CodexVersion) => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: version });
    mock.enqueue(execCommandCall('echo smoke-ok > out.txt && cat out.txt'), (request) => {
      const outputs = toolOutputsSinceLastUser(request.body);
      return { kind: 'text', text: outputs.some((o) => o.output.includes('smoke-ok')) ? 'tool output seen' : `no tool output: ${JSON.stringify(outputs)}` };
    });
    const run = await codexExec(h, 'run the command');
    expect(run.code, run.stderr).toBe(0);

    expect(readFileSync(join(h.workDir, 'out.txt'), 'utf8')).toBe('smoke-ok\n');
    const command = run.events.find((e) => e.type === 'item.completed' && e.item.type === 'command_execution');
    expect(command?.item.exit_code).toBe(0);
    // codex 0.153.4's exec --json sometimes reports an empty aggregated_output on a loaded machine
    // (3 of 16 runs beside three busy loops) although the model got the output: an upstream race
    // in that event, not in what the model sees (asserted next). 0.169.0 never showed it.
    if (version === '0.169.0' || command?.item.aggregated_output !== '') expect(command?.item.aggregated_output).toContain('smoke-ok');
    const messages = run.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message');
    expect(messages.map((e) => e.item.text)).toEqual(['tool output seen']);
    expect(mock.responsesRequests()).toHaveLength(2);

    const lines = rolloutLines(h);
    expect(lines[0].payload.cli_version).toBe(version);
    const call = lines.find((l) => l.type === 'response_item' && l.payload.type === 'function_call');
    expect(call?.payload.name).toBe('exec_command');
    expect(lines.some((l) => l.type === 'response_item' && l.payload.type === 'function_call_output' && l.payload.call_id === call.payload.call_id)).toBe(true);
  });

  it('HTTP errors and response.failed end the exec turn as failed', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl });
    mock.enqueue({ kind: 'failed', message: 'mock model exploded' });
    const run = await codexExec(h, 'fail please');
    expect(run.code).toBe(1);
    expect(run.events.find((e) => e.type === 'turn.failed')?.error.message).toContain('mock model exploded');

    mock.enqueue({ kind: 'error', status: 400, message: 'bad mock request' });
    const run2 = await codexExec(h, 'fail again');
    expect(run2.code).toBe(1);
    expect(run2.events.find((e) => e.type === 'turn.failed')?.error.message).toContain('bad mock request');
  });
});

describe('codex hermetic harness with zed codex-acp 0.16.0', () => {
  it('initialize, session/new and a text prompt over ACP reach the mock', async () => {
    const mock = await startOpenAIResponsesMock();
    const root = mkdtempSync(join(tmpdir(), 'ase-codex-acp-smoke-'));
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: 'codex-acp' });
    const child = spawn(h.bin, [], { env: h.env, cwd: h.workDir, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-8192)));
    const messages: any[] = [];
    const waiters: Array<() => void> = [];
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() !== '') messages.push(JSON.parse(line));
      }
      for (const w of waiters.splice(0)) w();
    });
    const request = async (id: number, method: string, params: unknown) => {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      for (;;) {
        const reply = messages.find((m) => m.id === id && ('result' in m || 'error' in m));
        if (reply) return reply;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no reply to ${method}; stderr: ${stderr}`)), 20_000);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    };
    try {
      mock.enqueue({ kind: 'text', text: 'hello over acp' });
      const init = await request(0, 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'ase-smoke', version: '0' } });
      expect(init.result.agentInfo.version).toBe('0.16.0');
      const session = await request(1, 'session/new', { cwd: h.workDir, mcpServers: [] });
      const sessionId = session.result.sessionId as string;
      expect(sessionId).toMatch(/./);
      const prompt = await request(2, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
      expect(prompt.result.stopReason).toBe('end_turn');
      const text = messages
        .filter((m) => m.method === 'session/update' && m.params.update.sessionUpdate === 'agent_message_chunk')
        .map((m) => m.params.update.content.text)
        .join('');
      expect(text).toBe('hello over acp');
      expect(mock.responsesRequests()[0]!.body.model).toBe('gpt-5.4');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL'); // codex-acp does not exit on stdin EOF (reference acp.md §4)
      } catch {
        // already gone
      }
      await mock.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
