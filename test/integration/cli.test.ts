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
    expect(result.stderr).toBe('');
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
    expect(result.stderr).toBe(''); // an explicit --deny needs no explanation
  });

  it('without --yes/--deny and without a terminal it denies and says so on stderr', async () => {
    const script = await writeScript(ASK_SCRIPT);
    const result = await ase(['run', '--agent', 'fake', '--script', script, '--json', '--data-dir', dataDir, 'x']);
    expect(result.exitCode).toBe(0);
    const events = ndjson(result.stdout);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'denied', isError: true });
    expect(result.stderr).toBe('permission fake-perm-1-1 (Bash) denied: not interactive; pass --yes to allow\n');
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
    expect(result.stderr).toBe('ase: UNKNOWN_ENGINE: Unknown engine "nope"; known engines: fake, claude, codex, codex-mcp, acp\n');
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

describe('ase diagram', () => {
  it('prints a Mermaid stateDiagram-v2 with every top-level state of the machine', async () => {
    const result = await ase(['diagram']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.startsWith('stateDiagram-v2\n')).toBe(true);
    const topLevel = ['init', 'local', 'remote', 'switching', 'recovering', 'failed', 'stopping', 'stopped'];
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
