/**
 * The `ase` CLI as a real process: `node dist/cli/bin.js ...`, the way a user runs it. The build is
 * refreshed first when dist is missing or older than the sources. Every run gets a throwaway HOME
 * and a marker in its environment, so the test can check that nothing was written to HOME and
 * that no `bin.js` process it started is still alive afterwards.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessionMachine } from '../../src/actors/session.js';
import { AgentEventSchema, type AgentEvent } from '../../src/events/agent-event.js';
import { PersistedSessionSchema } from '../../src/events/session-state.js';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

const ROOT = REPO_ROOT;
const BIN = ASE_BIN;
const MARKER = `ase-cli-test-${randomUUID()}`;
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(ensureBuiltCli, 120_000);

let tmp: string;
let home: string;
let dataDir: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-cli-it-'));
  home = path.join(tmp, 'home');
  dataDir = path.join(tmp, 'data');
  await fs.mkdir(home);
});
afterEach(async () => {
  // Nothing any command did may land in HOME: state goes to --data-dir (or the demo's own temp dir).
  expect(await fs.readdir(home)).toEqual([]);
  await fs.rm(tmp, { recursive: true, force: true });
});
afterAll(async () => {
  expect(await leftovers()).toEqual([]);
});

/** `bin.js` processes still alive that this file started (recognized by the marker in their environment). */
async function leftovers(): Promise<string[]> {
  const ps = await execa('ps', ['-eo', 'pid=,args='], { reject: false });
  expect(ps.exitCode).toBe(0);
  const found: string[] = [];
  for (const line of ps.stdout.split('\n')) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!match || !match[2]!.includes('bin.js')) continue;
    const environ = await fs.readFile(`/proc/${match[1]}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(`ASE_CLI_TEST=${MARKER}`)) found.push(line.trim());
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Starts `ase <args>` with a throwaway HOME, no terminal, and this file's marker. */
function spawnAse(args: string[]) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && key !== 'ASE_DATA_DIR') env[key] = value;
  Object.assign(env, { HOME: home, USERPROFILE: home, NO_COLOR: '1', ASE_CLI_TEST: MARKER });
  return execa(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env,
    extendEnv: false,
    stdin: 'ignore', // not a TTY: the CLI must not wait for a y/n answer
    stripFinalNewline: false, // compare output exactly
    reject: false,
    timeout: 30_000,
  });
}

interface Run {
  exitCode: number | undefined;
  signal: string | undefined;
  stdout: string;
  stderr: string;
}

/** Waits for the process to end, then checks that neither it nor anything it started is left. */
async function finished(subprocess: ReturnType<typeof spawnAse>, what: string): Promise<Run> {
  const result = await subprocess;
  expect(result.timedOut, `${what} timed out`).toBe(false);
  expect(subprocess.pid).toBeTypeOf('number');
  expect(isAlive(subprocess.pid!)).toBe(false);
  expect(await leftovers()).toEqual([]);
  return { exitCode: result.exitCode, signal: result.signal, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Runs `ase <args>` to completion (see `finished`). */
function ase(args: string[]): Promise<Run> {
  return finished(spawnAse(args), `ase ${args.join(' ')}`);
}

/** Resolves once the process printed `text` on stdout. */
function printed(subprocess: ReturnType<typeof spawnAse>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    subprocess.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
    void subprocess.then(() => reject(new Error(`exited before printing ${text}; stdout: ${seen}`)));
  });
}

function ndjson(stdout: string): AgentEvent[] {
  const lines = stdout.split('\n');
  expect(lines.pop()).toBe(''); // newline-terminated
  return lines.map((line) => {
    const parsed = AgentEventSchema.safeParse(JSON.parse(line));
    expect(parsed.success, `not an AgentEvent: ${line}`).toBe(true);
    return parsed.data!;
  });
}

async function writeScript(script: unknown): Promise<string> {
  const file = path.join(tmp, 'script.json');
  await fs.writeFile(file, JSON.stringify(script));
  return file;
}

const ASK_SCRIPT = {
  turns: [[{ ask: { toolName: 'Bash', input: { command: 'ls' } } }, { text: 'after the tool' }, { complete: {} }]],
};

describe('ase run', () => {
  it('--json streams the turn as NDJSON AgentEvents and keeps its state under --data-dir', async () => {
    const result = await ase(['run', '--agent', 'fake', '--json', '--data-dir', dataDir, 'hello']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^session [0-9a-f-]{36}\n$/); // the id, and nothing else
    const events = ndjson(result.stdout);
    expect(events.map((e) => e.type)).toEqual([
      'session_identified',
      'ready',
      'thinking',
      'text_delta',
      'text_delta',
      'text_delta',
      'message',
      'turn_complete',
      'exited',
    ]);
    expect(events.every((e) => e.gen === 1)).toBe(true);
    expect(events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')).toBe('echo: hello');
    expect(events.find((e) => e.type === 'message')).toMatchObject({ role: 'assistant', blocks: [{ type: 'text', text: 'echo: hello' }] });
    expect(events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(events.at(-1)).toMatchObject({ type: 'exited', code: 0, signal: null });

    // One session: its state, its lease (given back: owner null) and the (empty) lock folder.
    const files = (await fs.readdir(path.join(dataDir, 'sessions'))).sort();
    const [stateFile] = files.filter((f) => f.endsWith('.json'));
    const sessionId = stateFile!.replace(/\.json$/, '');
    expect(files).toEqual(['.locks', `${sessionId}.json`, `${sessionId}.lease`]);
    expect(JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${sessionId}.lease`), 'utf8'))).toMatchObject({ fence: 1, owner: null });
    expect(result.stderr).toBe(`session ${sessionId}\n`);
    const stored = JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', stateFile!), 'utf8')) as { version: number; state: unknown };
    const state = PersistedSessionSchema.parse(stored.state);
    expect(state).toMatchObject({ sessionId, agent: 'fake', phase: 'stopped', gen: 1, queue: [], requests: {}, workDir: ROOT });
    expect(state.usage.turns).toBe(1);
    const transcript = (await fs.readFile(path.join(dataDir, 'transcripts', `${sessionId}.jsonl`), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(transcript).toEqual(['session_identified', 'user_message', 'message', 'turn_complete', 'exited']);
  });

  it('--yes allows the permission request: the tool runs', async () => {
    const script = await writeScript(ASK_SCRIPT);
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--yes', '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(0);
    const events = ndjson(result.stdout);
    expect(events.map((e) => e.type)).toContain('permission_request');
    const request = events.find((e) => e.type === 'permission_request');
    const toolResult = events.find((e) => e.type === 'tool_result');
    expect(request).toMatchObject({ toolName: 'Bash', input: { command: 'ls' } });
    expect(toolResult).toMatchObject({ status: 'completed', output: 'ok', isError: false });
    expect(request?.type === 'permission_request' && toolResult?.type === 'tool_result' && toolResult.callId === request.callId).toBe(true);
    expect(events.indexOf(request!)).toBeLessThan(events.indexOf(toolResult!));
    expect(events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(result.stderr).not.toContain('denied');
  });

  it('--deny denies it: the agent sees the denial', async () => {
    const script = await writeScript(ASK_SCRIPT);
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--deny', '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(0);
    const events = ndjson(result.stdout);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'denied', output: 'Denied by the ase user.', isError: true });
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(1);
    expect(result.stderr).toMatch(/^session \S+\n$/); // an explicit --deny needs no explanation
  });

  it('without --yes/--deny and without a terminal it denies and says so on stderr', async () => {
    const script = await writeScript(ASK_SCRIPT);
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(0);
    const events = ndjson(result.stdout);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'denied', isError: true });
    expect(result.stderr).toMatch(/^session \S+\npermission fake-perm-1-1 \(Bash\) denied: not interactive; pass --yes to allow\n$/);
  });

  it('prints a readable transcript without --json', async () => {
    const script = await writeScript(ASK_SCRIPT);
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--yes', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('  ✓ completed ok\nafter the tool\n');
    expect(result.stderr).toContain('[running] mode=remote gen=1');
    expect(result.stderr).toContain('permission fake-perm-1-1: approved');
    expect(result.stderr).toContain('— turn completed (10 in / 20 out tokens, $0.0001)');
    expect(result.stderr).toContain('[stopped] mode=remote gen=1');
  });

  it('an agent that crashes mid-turn ends the run with exit 1 (the message is not re-sent)', async () => {
    const script = await writeScript({ turns: [[{ text: 'partial' }, { crash: { code: 137 } }]] });
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    const events = ndjson(result.stdout);
    expect(events.filter((e) => e.type === 'exited')[0]).toMatchObject({ gen: 1, code: 137 });
    expect(events.some((e) => e.type === 'turn_complete')).toBe(false);
  });

  it('a turn that fails exits 1', async () => {
    const script = await writeScript({ turns: [[{ complete: { status: 'failed' } }]] });
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    expect(ndjson(result.stdout).find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'failed' });
  });

  it('Ctrl-C aborts the running turn, then the session stops cleanly (exit 1)', async () => {
    const script = await writeScript({ turns: [[{ stall: true }]] });
    const subprocess = spawnAse(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    await printed(subprocess, '"type":"ready"');
    subprocess.kill('SIGINT');
    const result = await finished(subprocess, 'run after SIGINT');
    expect(result.exitCode).toBe(1);
    const events = ndjson(result.stdout);
    expect(events.map((e) => e.type)).toEqual(['session_identified', 'ready', 'turn_complete', 'exited']);
    expect(events[2]).toMatchObject({ status: 'cancelled' });
  });

  it('a second Ctrl-C stops an agent that ignores the interrupt, without waiting out the grace period', async () => {
    const script = await writeScript({ ignoreAbort: true, turns: [[{ stall: true }]] });
    const subprocess = spawnAse(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    await printed(subprocess, '"type":"ready"');
    const started = Date.now();
    subprocess.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(subprocess.pid!)).toBe(true); // still interrupting
    subprocess.kill('SIGINT');
    const result = await finished(subprocess, 'run after two SIGINTs');
    expect(Date.now() - started).toBeLessThan(5_000); // interruptGraceMs is 10 s
    expect(result.exitCode).toBe(1);
    expect(ndjson(result.stdout).map((e) => e.type)).toEqual(['session_identified', 'ready', 'exited']);
  });

  it('without --agent exits 2 with the usage', async () => {
    const result = await ase(['run', 'hello']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^ase run: --agent is required\n\nUsage:\n {2}ase run --agent <name>/);
  });

  it.each([
    [['run', '--agent', 'fake'], 'ase run: a prompt is required'],
    [['run', '--agent', 'fake', '--yes', '--deny', 'x'], 'ase run: --yes and --deny exclude each other'],
    [['run', '--agent', 'fake', '--mode', 'phone', 'x'], 'ase run: --mode must be remote or local'],
    [['run', '--agent', 'fake', '--env', 'NOEQUALS', 'x'], 'ase run: --env NOEQUALS: expected KEY=VALUE'],
    [['run', '--agent', 'fake', '--option', 'preset', 'x'], 'ase run: --option preset: expected KEY=VALUE'],
    [['run', '--agent', 'fake', '--option', 'env={"A":"1"}', 'x'], 'ase run: --option env=...: use --env KEY=VALUE'],
  ])('ase %j exits 2: %s', async (args, message) => {
    const result = await ase(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.startsWith(`${message}\n\nUsage:`)).toBe(true);
  });

  it('an unknown agent exits 1 with UNKNOWN_ENGINE and writes nothing', async () => {
    const result = await ase(['run', '--agent', 'nope', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('ase: UNKNOWN_ENGINE: Unknown engine "nope"; known engines: fake, claude, codex, codex-mcp, acp, codex-exec, claude-print\n');
    await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an unknown option is a usage error (exit 2), not a crash', async () => {
    const result = await ase(['run', '--agent', 'fake', '--frob', 'x']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^ase run: Unknown option '--frob'\..*\n\nUsage:\n/);
    expect(result.stderr).not.toContain('    at ');
  });

  it.each([
    ['a missing --script file', null, /^ase: INVALID_OPTIONS: --script \S+missing\.json: ENOENT: no such file or directory/],
    ['a --script that is not JSON', '{turns:', /^ase: INVALID_OPTIONS: --script \S+script\.json: .*JSON/],
  ])('%s exits 1 with one readable line', async (_what, content, message) => {
    const file = content === null ? path.join(tmp, 'missing.json') : await writeScript(content);
    if (content !== null) await fs.writeFile(file, content);
    const result = await ase(['run', '--agent', 'fake', '--script', file, '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('an invalid --script exits 1 with INVALID_OPTIONS', async () => {
    const script = await writeScript({ turns: [[{ text: 'a', crash: {} }]] });
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^ase: INVALID_OPTIONS: --script .*script\.json: /);
  });
});

/** The id `ase run` printed on stderr. */
function sessionIdOf(run: Run): string {
  const id = /^session (\S+)$/m.exec(run.stderr)?.[1];
  expect(id, `no session id in stderr: ${run.stderr}`).toBeDefined();
  return id!;
}

const costScript = (costUsd: number, text: string) => writeScriptAs(`cost-${costUsd}.json`, { turns: [[{ text }, { complete: { usage: { inputTokens: 10, outputTokens: 20, costUsd } } }]] });

async function writeScriptAs(name: string, script: unknown): Promise<string> {
  const file = path.join(tmp, name);
  await fs.writeFile(file, JSON.stringify(script));
  return file;
}

describe('sessions: continued, listed, shown, removed', () => {
  it('run prints the id; --session-id continues it (stored agent and directory); sessions, show and rm see it; costs rounded only for reading', async () => {
    const first = await ase(['run', '--agent', 'fake', '--script', await costScript(0.0001, 'one'), '--data-dir', dataDir, 'hello']);
    expect(first.exitCode).toBe(0);
    const id = sessionIdOf(first);
    // No --agent, no --cwd: the stored session says fake in ROOT.
    const second = await ase(['run', '--session-id', id, '--script', await costScript(0.0002, 'two'), '--json', '--data-dir', dataDir, 'again']);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toBe(`session ${id}\n`);
    expect(ndjson(second.stdout).find((e) => e.type === 'message')).toMatchObject({ blocks: [{ type: 'text', text: 'two' }] });

    const stored = PersistedSessionSchema.parse((JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state: unknown }).state);
    expect(stored).toMatchObject({ sessionId: id, agent: 'fake', workDir: ROOT, phase: 'stopped', gen: 2 });
    expect(stored.usage.turns).toBe(2);
    expect(stored.usage.costUsd).toBe(0.0001 + 0.0002); // exact in data: 0.00030000000000000003

    const list = await ase(['sessions', '--data-dir', dataDir]);
    expect(list.exitCode).toBe(0);
    const [head, row, ...rest] = list.stdout.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(head).toMatch(/^ID\s+AGENT\s+PHASE\s+LAST ACTIVITY\s+TURNS\s+COST\s+WORKDIR$/);
    expect(row!.split(/\s{2,}/)).toEqual([id, 'fake', 'stopped', expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/), '2', '$0.0003', ROOT]);

    const json = await ase(['sessions', '--json', '--data-dir', dataDir]);
    expect(json.stdout).toContain('"costUsd":0.00030000000000000003');
    expect(JSON.parse(json.stdout)).toMatchObject({ sessionId: id, agent: 'fake', workDir: ROOT, phase: 'stopped', turns: 2, costUsd: 0.0001 + 0.0002, queued: 0, openRequests: 0 });

    const show = await ase(['show', id, '--data-dir', dataDir]);
    expect(show.exitCode).toBe(0);
    expect(show.stdout).toContain(`session  ${id}\nagent    fake in ${ROOT}\nphase    stopped (mode remote, generation 2)`);
    expect(show.stdout).toContain('usage    2 turns, 20 in / 40 out tokens, $0.0003\n');
    const lines = show.stdout.split('\n').filter((l) => /^\d{4}-/.test(l)).map((l) => l.slice(21).replace(/\s+$/, ''));
    expect(lines).toEqual([
      expect.stringMatching(/^agent\s+session \S+$/),
      'you         hello',
      'assistant   one',
      'turn        completed (10 in / 20 out tokens, $0.0001)',
      'exited      code 0 (stopped)',
      expect.stringMatching(/^agent\s+session \S+$/),
      'you         again',
      'assistant   two',
      'turn        completed (10 in / 20 out tokens, $0.0002)',
      'exited      code 0 (stopped)',
    ]);
    const shown = JSON.parse((await ase(['show', id, '--json', '--data-dir', dataDir])).stdout) as { state: { usage: { costUsd: number } }; transcript: { type: string }[] };
    expect(shown.state.usage.costUsd).toBe(0.0001 + 0.0002);
    expect(shown.transcript.filter((e) => e.type === 'user_message')).toHaveLength(2);

    const rm = await ase(['rm', id, '--data-dir', dataDir]);
    expect(rm).toMatchObject({ exitCode: 0, stdout: '', stderr: `removed ${id}\n` });
    // Only the released lease stays (the session's fence never starts over) and the empty lock folder.
    expect((await fs.readdir(path.join(dataDir, 'sessions'))).sort()).toEqual(['.locks', `${id}.lease`]);
    expect(await fs.readdir(path.join(dataDir, 'transcripts'))).toEqual([]);
    expect(await ase(['sessions', '--data-dir', dataDir])).toMatchObject({ exitCode: 0, stdout: '', stderr: `no sessions under ${dataDir}\n` });
    expect(await ase(['show', id, '--data-dir', dataDir])).toMatchObject({ exitCode: 1, stderr: `ase: INVALID_INPUT: no session "${id}" under ${dataDir} (\`ase sessions\` lists them)\n` });
  });

  it('a run killed mid-turn leaves its session "running": rm refuses it without --force, and --session-id continues it', async () => {
    const stall = await writeScriptAs('stall.json', { turns: [[{ text: 'working' }, { stall: true }]] });
    const subprocess = spawnAse(['run', '--agent', 'fake', '--script', stall, '--json', '--data-dir', dataDir, 'x']);
    await printed(subprocess, '"type":"message"');
    // Killed once the running turn is on disk (making accepted input durable before it is acknowledged is issue 12's).
    const stateDir = path.join(dataDir, 'sessions');
    let liveId = '';
    for (let i = 0; ; i++) {
      const state = (await fs.readdir(stateDir).catch(() => [] as string[])).find((f) => f.endsWith('.json'));
      const text = state ? await fs.readFile(path.join(stateDir, state), 'utf8').catch(() => '') : '';
      if (text.includes('"phase":"running"')) {
        liveId = state!.replace(/\.json$/, '');
        break;
      }
      if (i > 200) throw new Error('the running session was never written');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // While its host lives, not even --force removes it: the host owns it.
    const owned = await spawnAse(['rm', '--force', liveId, '--data-dir', dataDir]); // (not ase(): the run is meant to be alive)
    expect(owned.exitCode).toBe(1);
    expect(String(owned.stderr)).toMatch(/^ase rm: SESSION_OWNED: /);
    expect(await fs.readdir(stateDir)).toContain(`${liveId}.json`);
    subprocess.kill('SIGKILL');
    const killed = await finished(subprocess, 'the killed run');
    expect(killed.signal).toBe('SIGKILL');
    const id = sessionIdOf(killed);

    const list = JSON.parse((await ase(['sessions', '--json', '--data-dir', dataDir])).stdout) as { phase: string };
    expect(list.phase).toBe('running');
    const refused = await ase(['rm', id, '--data-dir', dataDir]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^ase rm: INVALID_INPUT: session "${id}" is running \\(last written .*\\): it did not stop cleanly, and opening it again would recover it; stop it first, or pass --force\n$`));
    expect(await fs.readdir(path.join(dataDir, 'sessions'))).toContain(`${id}.json`); // (and maybe the lock the killed writer held)

    // The host died; the session goes on: the lost turn is not re-sent, the new message runs.
    const next = await ase(['run', '--session-id', id, '--script', await costScript(0.0001, 'back'), '--json', '--data-dir', dataDir, 'next']);
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toBe(`session ${id}\n`); // no PERSIST_FAILED: a lock left by the killed writer is broken at once
    expect(ndjson(next.stdout).filter((e) => e.type === 'message')).toEqual([expect.objectContaining({ blocks: [{ type: 'text', text: 'back' }] })]);

    const again = PersistedSessionSchema.parse((JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state: unknown }).state);
    expect(again).toMatchObject({ phase: 'stopped', gen: 2, queue: [] });
    expect(await ase(['rm', '--force', id, '--data-dir', dataDir])).toMatchObject({ exitCode: 0, stderr: `removed ${id}\n` });
  });

  it.each([
    [['run', '--session-id', 'nope', 'x'], /^ase: INVALID_OPTIONS: --session-id nope: no such session under \S+ \(`ase sessions` lists them\)\n$/],
    [['run', '--agent', 'fake', '--cwd', '/nonexistent/ase-dir', 'x'], /^ase: INVALID_OPTIONS: --cwd \/nonexistent\/ase-dir: no such directory\n$/],
    [['run', '--agent', 'fake', '--cwd', 'package.json', 'x'], /^ase: INVALID_OPTIONS: --cwd \S+package\.json: not a directory\n$/],
    [['run', '--session-id', '../x', 'x'], /^ase: INVALID_INPUT: .*session id/],
  ])('ase %j exits 1 with one clear line and writes nothing', async (args, message) => {
    const result = await ase([...args.slice(0, -1), '--data-dir', dataDir, args.at(-1)!]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('--session-id with another agent than the stored one is refused by the session (INVALID_OPTIONS)', async () => {
    const id = sessionIdOf(await ase(['run', '--agent', 'fake', '--data-dir', dataDir, 'hello']));
    const result = await ase(['run', '--session-id', id, '--agent', 'claude', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(`ase: INVALID_OPTIONS: createSession: session "${id}" belongs to agent "fake" in ${ROOT}, not "claude" in ${ROOT}\n`);
  });

  it('sessions lists what it can read and reports a corrupt state file (exit 1)', async () => {
    const id = sessionIdOf(await ase(['run', '--agent', 'fake', '--data-dir', dataDir, 'hello']));
    await fs.writeFile(path.join(dataDir, 'sessions', 'broken.json'), '{not json');
    const result = await ase(['sessions', '--data-dir', dataDir]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(id);
    expect(result.stderr).toMatch(/^ase sessions: broken: STORE_CORRUPT: /);
    expect(await ase(['rm', 'broken', '--data-dir', dataDir])).toMatchObject({ exitCode: 1 });
    expect(await ase(['rm', '--force', 'broken', '--data-dir', dataDir])).toMatchObject({ exitCode: 0, stderr: 'removed broken\n' });
  });

  it.each([
    [['show'], 'ase show: expected one session id'],
    [['show', 'a', 'b'], 'ase show: expected one session id'],
    [['rm'], 'ase rm: expected at least one session id'],
    [['sessions', 'x'], 'ase sessions: unexpected argument x'],
    [['sessions', '--force'], 'ase sessions: --force is for rm'],
  ])('ase %j is a usage error (exit 2)', async (args, message) => {
    const result = await ase(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.startsWith(`${message}\n\nUsage:`)).toBe(true);
  });
});

describe('ase run --record and ase replay (fake engine: nothing to record)', () => {
  it('--record with the fake engine is refused (INVALID_OPTIONS), a non-recording is RECORDING_INVALID, a recording made by a program has no run to rerun', async () => {
    const file = path.join(tmp, 'r.jsonl');
    const refused = await ase(['run', '--agent', 'fake', '--data-dir', dataDir, '--record', file, 'x']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('INVALID_OPTIONS: record: the fake engine has no traffic to record (recordable: claude, codex, codex-mcp, acp)');
    await expect(fs.stat(file)).rejects.toMatchObject({ code: 'ENOENT' }); // refused before anything was written

    await fs.writeFile(file, '{"type":"user"}\n');
    const invalid = await ase(['replay', file]);
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toBe(`RECORDING_INVALID: ${file}:1: not an ase-recording header\n`);

    const header = { format: 'ase-recording', version: 1, agent: 'claude', engineOptions: {}, workDir: tmp, aseVersion: VERSION, argv: [], startedAt: new Date().toISOString() };
    await fs.writeFile(file, `${JSON.stringify(header)}\n`);
    const fromApi = await ase(['replay', file]);
    expect(fromApi.exitCode).toBe(2);
    expect(fromApi.stderr).toContain('was recorded by a program (createSession), not by `ase run`');

    const usage = await ase(['replay']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toMatch(/^ase replay: expected one recording file\n\nUsage:\n/);
  });
});

describe('ase diagram', () => {
  it('prints a Mermaid stateDiagram-v2 with every top-level state of the machine', async () => {
    const result = await ase(['diagram']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.startsWith('stateDiagram-v2\n')).toBe(true);
    const topLevel = ['init', 'local', 'remote', 'handoff', 'switching', 'hibernated', 'recovering', 'failed', 'stopping', 'stopped'];
    expect(Object.keys(sessionMachine.root.states)).toEqual(topLevel);
    for (const state of topLevel) expect(result.stdout).toMatch(new RegExp(`^ {2}state "${state}" as session_${state}( \\{)?$`, 'm'));
    expect(result.stdout).toContain('  [*] --> session_init\n');
    expect(result.stdout).toContain('  session_stopped --> [*]\n');
    expect(result.stdout).toContain('  session_any --> session_stopping : stop\n');
  });
});

describe('ase demo', () => {
  it('runs the scripted tour and prints its summary', async () => {
    const result = await ase(['demo']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toContain('permission perm-1: approved');
    expect(out).toContain('[recovering] mode=remote gen=3');
    expect(out).toContain('[starting] mode=remote gen=4');
    expect(out).toContain('[stopped] mode=remote gen=4');
    expect(out).toContain('\nSummary\n');
    expect(out).toContain('  generations started: 4   resume token: demo-agent-session-1');
    expect(out).toContain('  permissions: perm-1=approved');
    expect(out).toContain('  usage: 2 turns, 2100 in / 120 out tokens, $0.0072');
    // The demo's temporary data dir is gone again.
    const where = /written under (\S+) \(removed now\)/.exec(out)?.[1];
    expect(where).toBeDefined();
    await expect(fs.stat(where!)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('ase --version and help', () => {
  it('the built bin is executable, as npx runs it by path (README: npx ase demo)', async () => {
    expect((await fs.stat(BIN)).mode & 0o111).toBe(0o111);
    const direct = await execa(BIN, ['--version'], { reject: false, env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env['PATH']}` } });
    expect(direct.exitCode).toBe(0);
    expect(direct.stdout).toBe(VERSION);
  });

  it('--version prints the package version', async () => {
    const result = await ase(['--version']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
  });

  it('no command prints the usage and exits 2; an unknown one too', async () => {
    const none = await ase([]);
    expect(none.exitCode).toBe(2);
    expect(none.stdout.startsWith('Usage:\n')).toBe(true);
    const unknown = await ase(['frobnicate']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr.startsWith('ase: unknown command "frobnicate"\n\nUsage:')).toBe(true);
  });
});
