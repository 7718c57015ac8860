/**
 * Issue 20: `ase run --session-id ID "text"` (remote mode) while an `ase serve` runs on the data dir
 * goes through that server instead of refusing SESSION_OWNED: the message is sent there, the reply
 * is streamed from the session's event stream and printed, the turn's permission prompt is answered
 * (`--yes`; denied when not interactive), `--json` prints the AgentEvents, and the exit code is the
 * turn's. The server is the built CLI with the fake engine (`--script`), the run the built CLI too.
 * Also: a session the server only has stored is opened there; an unknown id is refused with nothing
 * sent; the message is in the transcript once per run, and another client of the server (the phone)
 * sees the same turns.
 */
import { execa } from 'execa';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnPty, type PtyProcess } from '../../src/engines/transport/pty-process.js';
import { startAseServe, type AseServeProcess } from '../support/ase-serve-process.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';

let tmp: string;
let dataDir: string;
let server: AseServeProcess;

const SCRIPT = {
  turns: [
    [{ text: 'first answer' }, { complete: {} }],
    [{ ask: { toolName: 'Bash', input: { command: 'touch allowed.txt' } } }, { text: 'after the prompt' }, { complete: {} }],
    [{ ask: { toolName: 'Bash', input: { command: 'touch denied.txt' } } }, { text: 'after the refusal' }, { complete: {} }],
    [{ text: 'as json' }, { complete: {} }],
  ],
};

beforeAll(async () => {
  await ensureBuiltCli();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-run-through-serve-'));
  dataDir = path.join(tmp, 'data');
  const scriptFile = path.join(tmp, 'script.json');
  await fs.writeFile(scriptFile, JSON.stringify(SCRIPT));
  server = await startAseServe({ dataDir, args: ['--script', scriptFile], env: { HOME: tmp, NO_COLOR: '1' } });
}, 180_000);

afterAll(async () => {
  await server?.stop('SIGTERM').catch(() => server.stop('SIGKILL'));
  await fs.rm(tmp, { recursive: true, force: true });
});

const run = (...args: string[]) =>
  execa(process.execPath, [ASE_BIN, 'run', '--data-dir', dataDir, ...args], { env: { ...process.env, NO_COLOR: '1' }, stdin: 'ignore', reject: false, timeout: 60_000 });

describe('ase run --session-id with a live ase serve on the data dir', () => {
  it('sends through the server, prints the reply, answers prompts, exits with the turn', async () => {
    const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;

    const first = await run('--session-id', id, 'hello through the server');
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('first answer');
    expect(first.stderr).toContain(`session ${id} (hosted by ase serve at ${server.url}, pid ${server.child.pid})`);
    expect(first.stderr).not.toMatch(/SESSION_OWNED/);

    const allowed = await run('--session-id', id, '--yes', 'run the command');
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('after the prompt');
    const denied = await run('--session-id', id, 'run the other command');
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(denied.stderr).toMatch(/denied: not interactive/);

    const json = await run('--session-id', id, '--json', 'as json please');
    expect(json.exitCode, json.stderr).toBe(0);
    const events = json.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; status?: string });
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed' });

    // The server's transcript: each message once, each prompt answered as the run said.
    const { body } = await server.api('GET', `/api/sessions/${id}/transcript?limit=500`);
    const entries = body.entries as { type: string; payload: any }[];
    const said = entries.filter((e) => e.type === 'user_message').map((e) => e.payload.text);
    expect(said).toEqual(['hello through the server', 'run the command', 'run the other command', 'as json please']);
    const resolved = entries.filter((e) => e.type === 'permission_resolved').map((e) => e.payload.status);
    expect(resolved).toEqual(['approved', 'denied']);
    expect((await server.api('GET', '/api/sessions')).body.sessions).toHaveLength(1);
  }, 180_000);

  it('opens a session the server only has stored; refuses an unknown id and sends nothing', async () => {
    const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: tmp });
    const id = created.body.sessionId as string;
    expect((await server.api('POST', `/api/sessions/${id}/stop`, {})).status).toBe(200);
    expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false });
    const reopened = await run('--session-id', id, 'are you there');
    expect(reopened.exitCode, reopened.stderr).toBe(0);
    expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'remote' });

    const unknown = await run('--session-id', '00000000-0000-4000-8000-000000000000', 'hello');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/INVALID_OPTIONS: --session-id 00000000-0000-4000-8000-000000000000: no such session/);
  }, 120_000);
});

/** `ase run --mode local ...args` on this data dir in a terminal (local mode needs one), and what it has shown so far. */
async function runInTerminal(...args: string[]): Promise<{ pty: PtyProcess; screen(): string }> {
  const pty = await spawnPty({
    file: process.execPath,
    args: [ASE_BIN, 'run', '--mode', 'local', ...args, '--data-dir', dataDir, '--cwd', tmp],
    cwd: tmp,
    env: { ...process.env, NO_COLOR: '1' } as Record<string, string>,
    cols: 200,
    rows: 20,
  });
  let screen = '';
  pty.onData((data) => (screen += data));
  return { pty, screen: () => screen };
}

describe('ase run --mode local --sub-agents with a live ase serve on the data dir', () => {
  it('refuses when the server does not offer sub-agents (the session would be out of the phone`s reach), naming the ways on; nothing is created', async () => {
    // In a terminal (local mode needs one); refused before any agent starts.
    const term = await runInTerminal('--sub-agents', '--agent', 'claude');
    const exit = await term.pty.exited;
    const screen = term.screen();
    expect(exit.code, screen).not.toBe(0);
    expect(screen.replace(/\s+/g, ' ')).toMatch(/--sub-agents: the ase serve on .* does not offer sub-agents: restart it with --sub-agents, or run this with --no-server/);
    const sessions = (await server.api('GET', '/api/sessions')).body.sessions as { agent: string }[];
    expect(sessions.filter((s) => s.agent === 'claude')).toEqual([]);
  });
});

describe('ase run --mode local --no-server with a live ase serve on the data dir', () => {
  it('hosts the session in this process, not through the server', async () => {
    const term = await runInTerminal('--no-server', '--agent', 'fake');
    const end = Date.now() + 45_000;
    while (!/session (\S+) \(local: Ctrl-\] hands it to remote control\)/.test(term.screen())) {
      if (Date.now() > end) throw new Error(`no session line: ${term.screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const id = /session (\S+) \(local: /.exec(term.screen())![1]!;
    expect(term.screen()).not.toMatch(/hosted by ase serve/);
    // Not the server's: it runs here, so the server has it at most stored, never live.
    expect((await server.api('GET', `/api/sessions/${id}`)).body?.live ?? false).toBe(false);
    await term.pty.stop();
  }, 120_000);
});
