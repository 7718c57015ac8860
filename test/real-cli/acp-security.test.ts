/**
 * Security scenarios of the ACP client-side fs/terminal against a REAL agent: the pinned
 * claude-code-acp 0.16.2 (it routes its Read/Write/Bash tools through the client's fs/* and
 * terminal/*, reference acp.md §4) driven by the AcpEngine, with our Anthropic mock scripting the
 * tool calls. Every permission prompt is ALLOWED, so the client-side confinement is the only
 * barrier under test.
 *
 * Asserted: reads and writes outside workDir through '..', an absolute path, a symlinked
 * directory, a leaf symlink (existing and dangling) and '..' after a symlink are all answered
 * -32602 on the wire, the tool fails, nothing outside workDir changes and the outside secret never
 * reaches the model; an in-workDir read, write (new directory) and terminal command work end to
 * end; a terminal the agent times out (release while wait_for_exit is pending) and a background
 * terminal left at session end leave no process. One test pins a KNOWN agent-side bypass that
 * the client cannot stop (paths under CLAUDE_CONFIG_DIR never reach the client).
 *
 * The fs/terminal exchanges are recorded (paths as $ROOT) into
 * test/fixtures/acp-client/claude-code-acp-security.jsonl (when UPDATE_ACP_CLIENT_FIXTURES=1 or
 * missing) and replayed without the agent by test/unit/acp-client-fs-replay.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcpEngine } from '../../src/engines/acp/index.js';
import { TrafficRecorder, type TrafficEntry } from '../support/acp-traffic.js';
import { startAnthropicMock, type AnthropicMock, type MockResponse } from '../mocks/anthropic-mock.js';
import { EventLog, hermeticClaudeCodeAcp, isMainClaudeRequest, type AcpHermetic } from '../support/acp-hermetic.js';
import { realContext } from '../support/acp-scenarios.js';
import { testRunEnv } from '../support/orphan-check.js';
import { processesUnder, waitNoProcessesUnder } from '../support/processes.js';

const SECRET = 'TOP-SECRET-OUTSIDE';
const fixturePath = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'acp-client', 'claude-code-acp-security.jsonl');

/** The tree below the per-test root ($ROOT). Written into the fixture, so the replay builds the same. */
const TREE = {
  dirs: ['work/sub', 'outside'],
  files: {
    'work/inside.txt': 'inside line 1\ninside line 2\n',
    'outside/secret.txt': `${SECRET}\n`,
    'secret.txt': `${SECRET}\n`,
  } as Record<string, string>,
  symlinks: {
    'work/link-out': '$ROOT/outside',
    'work/leak.txt': '$ROOT/outside/secret.txt',
    'work/dangling.txt': '$ROOT/outside/created-by-agent.txt',
  } as Record<string, string>,
};

/** Everything below `root` except the agent's own state dirs and workDir: path → content/link. */
function outsideSnapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const skip = new Set(['work', 'home', 'config', 'tmp', 'xdg'].map((d) => join(root, d)));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (skip.has(path)) continue;
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out[path] = `link:${readlinkSync(path)}`;
      else if (st.isDirectory()) {
        out[path] = 'dir';
        walk(path);
      } else out[path] = `file:${readFileSync(path, 'utf8')}`;
    }
  };
  walk(root);
  return out;
}

/** Request/response pairs of the agent's requests for `methods`, from the recorded wire. */
function exchanges(entries: readonly TrafficEntry[], methods: readonly string[]) {
  type Msg = { id?: unknown; method?: string; params?: any; result?: any; error?: { code: number; message: string } };
  const pairs: { method: string; params: any; result?: any; error?: { code: number; message: string } }[] = [];
  const byId = new Map<unknown, (typeof pairs)[number]>();
  for (const entry of entries) {
    const msg = entry.msg as Msg | undefined;
    if (!msg) continue;
    if (entry.dir === 'agent->client' && msg.method && methods.includes(msg.method)) {
      const pair = { method: msg.method, params: msg.params };
      pairs.push(pair);
      byId.set(msg.id, pair);
    } else if (entry.dir === 'client->agent' && msg.method === undefined && byId.has(msg.id)) {
      const pair = byId.get(msg.id)!;
      if (msg.error) pair.error = msg.error;
      else pair.result = msg.result;
      byId.delete(msg.id);
    }
  }
  return pairs;
}

describe('ACP client confinement against the real claude-code-acp 0.16.2', () => {
  let root: string;
  let mock: AnthropicMock;
  let hermetic: AcpHermetic;
  let engine: AcpEngine;
  let stopped = false;
  const log = new EventLog();
  const recorder = new TrafficRecorder();
  const mark = randomUUID();
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ase-acp-security-')));
    mock = await startAnthropicMock({ consumesQueue: isMainClaudeRequest });
    hermetic = hermeticClaudeCodeAcp({ port: mock.port, root });
    for (const dir of TREE.dirs) mkdirSync(join(root, dir), { recursive: true });
    for (const [path, content] of Object.entries(TREE.files)) writeFileSync(join(root, path), content);
    for (const [path, target] of Object.entries(TREE.symlinks)) symlinkSync(target.replace('$ROOT', root), join(root, path));
    engine = new AcpEngine(realContext(), {
      preset: 'claude-code-acp',
      env: hermetic.env,
      onTraffic: recorder.tap,
      fs: { enabled: true },
      // The marker lets us find terminal processes in /proc; testRunEnv() lets the suite's orphan check see leaks.
      terminal: { enabled: true, env: { PATH: hermetic.env.PATH!, HOME: hermetic.home, LANG: 'C.UTF-8', ...testRunEnv(), ACP_SECURITY_MARK: mark } },
    });
    engine.onEvent(log.push);
    // Allow everything the agent asks: only the client's confinement stands in the way.
    engine.onEvent((event) => {
      if (event.type === 'permission_request') void engine.answerPermission(event.requestId, { behavior: 'allow' });
    });
    const started = Date.now();
    const ready = log.next('ready', 'ready', 60_000);
    await engine.start({ gen: 1, mode: 'remote', workDir: hermetic.work, options: {} });
    await ready;
    timings.spawnToReadyMs = Date.now() - started;
  }, 90_000);

  afterAll(async () => {
    if (!stopped) await engine?.stop().catch(() => undefined);
    await mock?.close();
    const left = root ? await waitNoProcessesUnder(root) : [];
    if (root) {
      saveFixture();
      rmSync(root, { recursive: true, force: true });
    }
    console.log(`acp-security timings: ${JSON.stringify(timings)}`);
    expect(left).toEqual([]);
  });

  function saveFixture(): void {
    if (process.env.UPDATE_ACP_CLIENT_FIXTURES !== '1' && existsSync(fixturePath)) return;
    const methods = ['fs/read_text_file', 'fs/write_text_file', 'terminal/create', 'terminal/output', 'terminal/wait_for_exit', 'terminal/kill', 'terminal/release'];
    const ids = new Set<unknown>();
    const lines = [JSON.stringify({ tree: TREE })];
    for (const entry of recorder.entries) {
      const msg = entry.msg as { id?: unknown; method?: string } | undefined;
      if (!msg) continue;
      const isRequest = entry.dir === 'agent->client' && msg.method !== undefined && methods.includes(msg.method);
      const isResponse = entry.dir === 'client->agent' && msg.method === undefined && ids.has(msg.id);
      if (isRequest) ids.add(msg.id);
      if (!isRequest && !isResponse) continue;
      lines.push(JSON.stringify(entry).replaceAll(root, '$ROOT'));
    }
    mkdirSync(dirname(fixturePath), { recursive: true });
    writeFileSync(fixturePath, `${lines.join('\n')}\n`);
  }

  /** One prompt whose model answers are `tools` (one tool_use each) and then a closing text. */
  async function turn(name: string, tools: MockResponse[]): Promise<{ entries: TrafficEntry[]; events: typeof log.events }> {
    const entriesFrom = recorder.entries.length;
    const eventsFrom = log.events.length;
    mock.enqueue(...tools, { kind: 'text', text: `finished ${name}` });
    const started = Date.now();
    const done = log.next('turn_complete', `turn_complete of ${name}`, 45_000);
    await engine.send({ localId: name, text: `run ${name}` });
    const complete = await done;
    timings[`turn:${name}`] = Date.now() - started;
    expect(complete).toMatchObject({ status: 'completed' });
    expect(mock.pending()).toBe(0);
    return { entries: recorder.entries.slice(entriesFrom), events: log.events.slice(eventsFrom) };
  }

  const read = (id: string, path: string): MockResponse => ({ kind: 'tool_use', id, name: 'mcp__acp__Read', input: { file_path: path } });
  const write = (id: string, path: string, content: string): MockResponse => ({ kind: 'tool_use', id, name: 'mcp__acp__Write', input: { file_path: path, content } });
  const bash = (id: string, command: string, extra: Record<string, unknown> = {}): MockResponse => ({ kind: 'tool_use', id, name: 'mcp__acp__Bash', input: { command, timeout: 10_000, description: id, ...extra } });
  const secretNeverSentToModel = () => expect(JSON.stringify(mock.requests.map((r) => r.body))).not.toContain(SECRET);
  const markedProcesses = () => waitNoProcessesUnder(mark, 3000);

  it('denies reads outside workDir via .., an absolute path, a symlinked dir, a leaf symlink and .. after a symlink', async () => {
    const work = hermetic.work;
    const paths = [`${work}/../outside/secret.txt`, join(root, 'outside', 'secret.txt'), `${work}/link-out/secret.txt`, `${work}/leak.txt`, `${work}/link-out/../secret.txt`];
    const before = outsideSnapshot(root);
    const { entries, events } = await turn('escaping-reads', paths.map((p, i) => read(`toolu_read_out_${i}`, p)));
    const reads = exchanges(entries, ['fs/read_text_file']);
    // On a mismatch, say what became of each call (the agent's own tool results).
    const outcomes = events.filter((e) => e.type === 'tool_result').map((e) => JSON.stringify(e).slice(0, 400));
    expect(reads.map((r) => r.params.path), outcomes.join('\n')).toEqual(paths);
    for (const r of reads) {
      expect(r.error?.code, r.params.path).toBe(-32602);
      expect(r.error?.message).toMatch(/outside the allowed directories/);
      expect(r.result).toBeUndefined();
    }
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => [e.callId, e.status])).toEqual(paths.map((_, i) => [`toolu_read_out_${i}`, 'failed']));
    secretNeverSentToModel();
    expect(outsideSnapshot(root)).toEqual(before);
  });

  it('denies writes outside workDir via .., an absolute path, a symlinked dir, leaf symlinks (existing, dangling) and .. after a symlink', async () => {
    const work = hermetic.work;
    const paths = [`${work}/../pwned.txt`, join(root, 'outside', 'pwned.txt'), `${work}/link-out/pwned.txt`, `${work}/leak.txt`, `${work}/dangling.txt`, `${work}/link-out/../pwned.txt`];
    const before = outsideSnapshot(root);
    const { entries, events } = await turn('escaping-writes', paths.map((p, i) => write(`toolu_write_out_${i}`, p, `pwned ${i}\n`)));
    const writes = exchanges(entries, ['fs/write_text_file']);
    expect(writes.map((w) => w.params.path)).toEqual(paths);
    for (const w of writes) {
      expect(w.error?.code, w.params.path).toBe(-32602);
      expect(w.error?.message).toMatch(/outside the allowed directories|symlink whose target does not exist/);
    }
    expect(events.filter((e) => e.type === 'permission_request')).toHaveLength(paths.length); // all were allowed
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.status)).toEqual(paths.map(() => 'failed'));
    expect(outsideSnapshot(root)).toEqual(before);
    expect(readFileSync(join(root, 'outside', 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
    expect(existsSync(join(root, 'outside', 'created-by-agent.txt'))).toBe(false);
    expect(existsSync(join(root, 'pwned.txt'))).toBe(false);
  });

  it('serves a read, a write into a new directory and a terminal command inside workDir end to end', async () => {
    const work = hermetic.work;
    const before = outsideSnapshot(root);
    const { entries, events } = await turn('inside', [
      read('toolu_read_in', join(work, 'inside.txt')),
      write('toolu_write_in', join(work, 'new', 'dir', 'made.txt'), 'made by the agent\n'),
      bash('toolu_bash_in', 'pwd && echo from-terminal > made-by-terminal.txt && cat inside.txt'),
    ]);
    const [readIn] = exchanges(entries, ['fs/read_text_file']);
    expect(readIn).toMatchObject({ params: { line: 1, limit: 2000 }, result: { content: 'inside line 1\ninside line 2\n' } });
    const [writeIn] = exchanges(entries, ['fs/write_text_file']);
    expect(writeIn).toMatchObject({ result: {} });
    expect(readFileSync(join(work, 'new', 'dir', 'made.txt'), 'utf8')).toBe('made by the agent\n');
    const terminal = exchanges(entries, ['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']);
    expect(terminal.map((t) => t.method)).toEqual(['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']);
    expect(terminal[0]).toMatchObject({ params: { outputByteLimit: 32000 }, result: { terminalId: expect.any(String) } });
    expect(terminal[1]!.result).toEqual({ exitCode: 0, signal: null });
    expect(terminal[2]!.result).toEqual({ output: `${work}\ninside line 1\ninside line 2\n`, truncated: false, exitStatus: { exitCode: 0, signal: null } });
    expect(readFileSync(join(work, 'made-by-terminal.txt'), 'utf8')).toBe('from-terminal\n');
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.status)).toEqual(['completed', 'completed', 'completed']);
    // The model got the file content back (the read really reached it).
    expect(JSON.stringify(mock.requests.at(-1)?.body)).toContain('inside line 2');
    expect(outsideSnapshot(root)).toEqual(before);
  });

  it('a terminal the agent times out is released while wait_for_exit is pending, and its process group dies', async () => {
    const { entries, events } = await turn('timeout', [bash('toolu_bash_timeout', 'echo sleeping; sleep 300', { timeout: 800 })]);
    const terminal = exchanges(entries, ['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']);
    expect(terminal.map((t) => t.method)).toEqual(['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']);
    expect(terminal[2]!.result).toMatchObject({ output: 'sleeping\n', exitStatus: null });
    expect(terminal[3]!.result).toEqual({});
    // The release resolved the pending wait with the kill's exit.
    expect(terminal[1]!.result).toMatchObject({ exitCode: null, signal: expect.stringMatching(/SIGTERM|SIGKILL/) });
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.status)).toEqual(['completed']);
    expect(await markedProcesses()).toEqual([]);
  });

  it('KNOWN agent-side bypass: claude-code-acp reads/writes paths under CLAUDE_CONFIG_DIR itself, even with .., so they never reach the client', async () => {
    // mcp-server.js internalPath(): `file_path.startsWith(CLAUDE_CONFIG_DIR)` on the raw string.
    // The client cannot confine what it never sees: sandbox the agent process (docs/engines/acp-client.md).
    const bypass = `${hermetic.env.CLAUDE_CONFIG_DIR}/../bypass.txt`;
    const { entries } = await turn('config-dir-bypass', [write('toolu_bypass', bypass, 'written by the agent itself\n')]);
    expect(exchanges(entries, ['fs/write_text_file'])).toEqual([]);
    expect(readFileSync(join(root, 'bypass.txt'), 'utf8')).toBe('written by the agent itself\n');
    rmSync(join(root, 'bypass.txt'));
  });

  it('a background terminal still running at session end is killed with its group (closeAll)', async () => {
    await turn('background', [bash('toolu_bash_bg', 'sleep 300', { run_in_background: true })]);
    expect(processesUnder(mark).length).toBeGreaterThan(0);
    const stopping = Date.now();
    await engine.stop();
    stopped = true;
    timings.stopMs = Date.now() - stopping;
    expect(await markedProcesses()).toEqual([]);
  });
});
