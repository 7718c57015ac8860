/**
 * The desk and the phone on one session (issue 20), driven as a person would: `ase serve` runs on a
 * data dir, `ase run --mode local --agent claude` in a real terminal (tmux on a private socket)
 * finds it through serve.json and goes through it, so Claude Code's own terminal UI (the real
 * pinned CLI, its mock Messages API, loopback only) runs inside the server and this terminal is its
 * desk. We type a turn at the desk; the session is on the server's API; the phone takes control
 * (`POST …/mode`) and sends a turn; the desk shows the one-line banner; a key there takes control
 * back and the terminal UI redraws the whole conversation, the phone's turn included; Ctrl-] hands
 * over again and leaves a clean screen. Nothing is left behind: no agent process, no hook
 * directory, no serve.json.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses, waitUntil } from '../support/processes.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(hasTmux)('ase run --mode local through ase serve, in tmux', () => {
  let root: string;
  let mock: AnthropicMock;
  let socket: string;
  let server: ChildProcess | undefined;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-serve-'));
    socket = join(root, 'tmux.sock');
    mock = await startAnthropicMock();
  });

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    server?.kill('SIGKILL');
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('desk turn, the phone takes control and sends a turn, a key takes it back and the UI shows both, Ctrl-] leaves a clean screen', async () => {
    const work = join(root, 'work');
    const data = join(root, 'data');
    const hookTmp = join(root, 'tmp');
    mkdirSync(work, { recursive: true });
    mkdirSync(hookTmp, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root: join(root, 'claude') });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);

    // The server: its hook directories go under our temp dir, so we can see none is left.
    server = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', data], { env: { ...process.env, TMPDIR: hookTmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let serverOut = '';
    server.stdout!.on('data', (c: Buffer) => (serverOut += c.toString()));
    server.stderr!.on('data', (c: Buffer) => (serverOut += c.toString()));
    const serveFile = join(data, 'serve.json');
    expect(await waitUntil(() => existsSync(serveFile), 30_000), serverOut).toBe(true);
    const entry = JSON.parse(readFileSync(serveFile, 'utf8')) as { url: string; pid: number; tokenFile: string };
    expect(entry.pid).toBe(server.pid);
    const token = readFileSync(entry.tokenFile, 'utf8').trim();
    const api = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${entry.url}${route}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
      return { status: response.status, body: (await response.json()) as any };
    };

    // The desk: a shell in tmux running `ase run --mode local`, then reporting what it got back.
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const command = [process.execPath, ASE_BIN, 'run', '--mode', 'local', '--agent', 'claude', '--bin', claudeBinary(), '--option', 'permissionMode=default', '--data-dir', data, '--cwd', work, ...envArgs]
      .map(quote)
      .join(' ');
    const script = join(root, 'run.sh');
    writeFileSync(script, `cd ${quote(work)}\n${command}\necho "ase exited $?"\nstty -a | grep -o -- '-\\?icanon' | head -1\nexec sh\n`);
    const pane = 'desk';
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', pane, '-x', '100', '-y', '30', '-e', `HOME=${env.HOME}`, `sh ${quote(script)}`);
    const screen = () => tmux('capture-pane', '-p', '-t', pane);
    async function waitScreen(pattern: RegExp, timeoutMs = 45_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`tmux screen never showed ${pattern}:\n${text}\n--- server:\n${serverOut}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    await waitScreen(/❯/);
    // The session is the server's: the page and the phone see it.
    const listed = (await api('GET', '/api/sessions')).body.sessions as { sessionId: string; agent: string; status: string }[];
    expect(listed).toHaveLength(1);
    const id = listed[0]!.sessionId;
    expect(listed[0]).toMatchObject({ agent: 'claude', status: 'running' });
    expect((await api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });

    // A turn typed at the desk.
    tmux('send-keys', '-t', pane, '-l', 'hello from the desk');
    await waitScreen(/hello from the desk/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    tmux('send-keys', '-t', pane, 'Enter');
    await waitScreen(/Echo: hello from the desk/);

    // The phone takes control: the desk shows the one-line banner instead of a dead screen.
    expect((await api('POST', `/api/sessions/${id}/mode`, { to: 'remote' })).status).toBe(200);
    const bannered = await waitScreen(/controlled remotely — press any key to take it back/);
    expect(bannered).not.toMatch(/❯/);
    // The phone's turn, answered in remote mode.
    expect((await api('POST', `/api/sessions/${id}/messages`, { text: 'hello from the phone', localId: 'phone-1' })).status).toBe(200);
    const answered = async () => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
        const { body } = await api('GET', `/api/sessions/${id}/transcript?limit=500`);
        if (JSON.stringify(body).includes('Echo: hello from the phone')) return true;
      }
      return false;
    };
    expect(await answered()).toBe(true);

    // A key at the desk takes it back: the terminal UI resumes the same session with both turns on screen.
    tmux('send-keys', '-t', pane, '-l', 'x');
    const back = await waitScreen(/Echo: hello from the phone[\s\S]*❯/, 60_000);
    expect(back).toMatch(/hello from the desk/);
    expect(back).not.toMatch(/controlled remotely/);
    expect((await api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });
    expect((await api('GET', '/api/sessions')).body.sessions).toHaveLength(1);

    // Ctrl-] hands over again: the screen is cleared before the hand-over line, the shell is back.
    tmux('send-keys', '-t', pane, 'C-]');
    const after = await waitScreen(/ase exited 0[\s\S]*icanon/);
    expect(after).toMatch(/handed to remote control; take it back with: ase attach/);
    const beforeLine = after.slice(0, after.indexOf('session '));
    expect(beforeLine).not.toMatch(/❯|Echo:/);
    expect(after).not.toMatch(/-icanon/);

    // The server stops cleanly: its serve.json and token are gone, no agent, no hook directory.
    server.kill('SIGTERM');
    expect(await waitUntil(() => server!.exitCode !== null, 30_000), serverOut).toBe(true);
    expect(existsSync(serveFile)).toBe(false);
    expect(existsSync(entry.tokenFile)).toBe(false);
    expect(findProcesses((p) => p.cmdline().includes(claudeBinary()) && p.environ().includes(root))).toEqual([]);
    expect(readdirSync(hookTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  }, 240_000);
});
