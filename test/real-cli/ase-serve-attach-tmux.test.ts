/**
 * The desk and the phone on one session (issue 20), driven as a person would: `ase serve` runs on a
 * data dir, `ase run --mode local --agent claude` in a real terminal (tmux on a private socket)
 * finds it through serve.json and goes through it, so Claude Code's own terminal UI (the real
 * pinned CLI, its mock Messages API, loopback only) runs inside the server and this terminal is its
 * desk. We type a turn at the desk; the session is on the server's API; a viewer is repainted the
 * screen; a permission dialog raised in the desk's UI is answered from the phone; the phone takes control
 * (`POST …/mode`) and sends a turn; the desk shows the one-line banner; a key there takes control
 * back and the terminal UI redraws the whole conversation, the phone's turn included; Ctrl-] hands
 * over again and leaves a clean screen. Nothing is left behind: no agent process, no hook
 * directory, no serve.json.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { HeadlessScreen, seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses, waitUntil } from '../support/processes.js';
import { openTerminal } from '../support/terminal-client.js';
import { openSse } from '../support/sse-client.js';

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
    await mock?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('desk turn, a dialog answered on the phone, the phone takes control and sends a turn, a key takes it back and the UI shows both, a second desk refused, ase attach to a remote session, Ctrl-] leaves a clean screen', async () => {
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
    const screen = (target = pane) => tmux('capture-pane', '-p', '-t', target);
    async function waitScreen(pattern: RegExp, timeoutMs = 45_000, target = pane): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen(target);
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
    // A viewer (the page's panel) connecting now is repainted the screen at once, and told who types.
    const ticket = (await api('POST', '/api/tickets', { sessionId: id })).body.ticket as string;
    const viewer = await openTerminal(`${entry.url}/api/sessions/${id}/terminal`, { ticket, headers: { origin: entry.url } });
    if ('refused' in viewer) throw new Error(`viewer refused: ${viewer.refused}`);
    expect(await viewer.waitFor(() => viewer.statuses[0], 'status')).toMatchObject({ role: 'viewer', mode: 'local', running: true, writerAttached: true, cols: 100, rows: 30 });
    // Drawn by a terminal emulator at the status's size, as the page draws it.
    const panel = new HeadlessScreen(100, 30);
    let fed = 0;
    const feed = () => {
      const all = viewer.output();
      panel.term.write(all.slice(fed));
      fed = all.length;
    };
    await viewer.waitFor(() => viewer.bytes() > 0, 'the repaint');
    feed();
    expect(await panel.waitFor(/Echo: hello from the desk/)).toMatch(/hello from the desk/);

    // A permission dialog raised in the desk's terminal UI is on the phone's event stream and answered there.
    const phone = await openSse(`${entry.url}/api/sessions/${id}/events`, { authorization: `Bearer ${token}` });
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo from-the-phone > phone.txt', description: 'write' } }, { kind: 'text', text: 'written' });
    tmux('send-keys', '-t', pane, '-l', 'write the file please');
    await waitScreen(/write the file please/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    tmux('send-keys', '-t', pane, 'Enter');
    const ask = JSON.parse((await phone.waitFor((f) => f.event === 'permission_prompt', 60_000)).data) as { requestId: string; toolName: string };
    expect(ask.toolName).toBe('Bash');
    await waitScreen(/Do you want to proceed\?/);
    expect((await api('POST', `/api/sessions/${id}/permissions/${encodeURIComponent(ask.requestId)}`, { decision: 'allow' })).status).toBe(200);
    await waitScreen(/written/, 60_000);
    expect(readFileSync(join(work, 'phone.txt'), 'utf8')).toBe('from-the-phone\n');
    phone.cut();

    // The phone takes control: the desk shows the one-line banner instead of a dead screen.
    expect((await api('POST', `/api/sessions/${id}/mode`, { to: 'remote' })).status).toBe(200);
    const bannered = await waitScreen(/controlled remotely — press any key to take it back/);
    await viewer.waitFor(() => viewer.statuses.find((s) => s.mode === 'remote' && !s.running), 'the viewer told of remote control');
    viewer.close();
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

    // A second desk is refused; `ase run --session-id` is pointed at the server instead of fighting it for the session.
    const attachCommand = [process.execPath, ASE_BIN, 'attach', id, '--data-dir', data].map(quote).join(' ');
    tmux('new-window', '-d', '-t', `${pane}:`, '-n', 'second', `sh -c ${quote(`${attachCommand}; echo "attach exited $?"; exec sh`)}`);
    const second = await waitScreen(/attach exited 1/, 30_000, `${pane}:second`);
    expect(second).toMatch(/a desk is already attached/);
    const run = spawnSync(process.execPath, [ASE_BIN, 'run', '--session-id', id, '--data-dir', data, 'hello'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/SESSION_OWNED[\s\S]*belongs to the ase serve[\s\S]*ase attach/);

    // Ctrl-] hands over again: the screen is cleared before the hand-over line, the shell is back.
    tmux('send-keys', '-t', pane, 'C-]');
    const after = await waitScreen(/ase exited 0[\s\S]*icanon/);
    expect(after).toMatch(/handed to remote control; take it back with: ase attach/);
    const beforeLine = after.slice(0, after.indexOf('session '));
    expect(beforeLine).not.toMatch(/❯|Echo:/);
    expect(after).not.toMatch(/-icanon/);

    // `ase attach` to the session, remote now: the banner at once; a key takes it back, Ctrl-] hands it over.
    tmux('new-window', '-d', '-t', `${pane}:`, '-n', 'third', `sh -c ${quote(`${attachCommand}; echo "attach exited $?"; exec sh`)}`);
    const third = `${pane}:third`;
    await waitScreen(/controlled remotely — press any key to take it back/, 30_000, third);
    tmux('send-keys', '-t', third, '-l', 'y');
    const again = await waitScreen(/Echo: hello from the phone[\s\S]*❯/, 60_000, third);
    expect(again).toMatch(/hello from the desk/);
    tmux('send-keys', '-t', third, 'C-]');
    const left = await waitScreen(/attach exited 0/, 30_000, third);
    expect(left).toMatch(/handed to remote control; take it back with: ase attach/);
    expect(left.slice(0, left.indexOf('handed to remote'))).not.toMatch(/❯|Echo:/);

    // The server stops cleanly: its serve.json and token are gone, no agent, no hook directory.
    server.kill('SIGTERM');
    expect(await waitUntil(() => server!.exitCode !== null, 30_000), serverOut).toBe(true);
    expect(existsSync(serveFile)).toBe(false);
    expect(existsSync(entry.tokenFile)).toBe(false);
    expect(findProcesses((p) => p.cmdline().includes(claudeBinary()) && p.environ().includes(root))).toEqual([]);
    expect(readdirSync(hookTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  }, 420_000);
});
