/**
 * The desk and the phone on one session (issue 20), Claude Code, driven as a person would. `ase
 * serve` runs on a data dir; `ase run --mode local --agent claude` in a real terminal (tmux on a
 * private socket) finds it through serve.json and goes through it, so Claude Code's own terminal
 * UI (the real pinned CLI, its mock Messages API, loopback only) runs inside the server and this
 * terminal is its desk. The phone is the server's page in Chromium (playwright-core on Debian's
 * chromium), not the HTTP API:
 *
 * 1. a turn typed at the desk is on the page live: the transcript, and the terminal panel (the
 *    desk's typing too); a permission dialog raised in the desk's UI is allowed on the page;
 * 2. the page's "Take remote control": the desk shows the one-line banner; a message sent from the
 *    page runs a tool whose permission card is allowed on the page;
 * 3. a key at the desk takes it back: the terminal UI redraws the conversation, the phone's turn
 *    included (screenshot of the page with its terminal panel: test-output/ and /tmp);
 * 4. a second desk is refused; Ctrl-] hands over and leaves a clean screen in canonical mode;
 * 5. `ase run --session-id ID "text"` (remote) goes through the server and prints the reply;
 * 6. `ase run --mode local --session-id ID` takes the session back at the desk (through the
 *    server: switched to local there, then attached), a turn starts, and the server is SIGKILLed mid-turn: the
 *    desk's terminal is restored (not raw), the terminal UI the server ran is gone; a restarted
 *    `ase serve` recovers the session by itself (the cut desk turn ends interrupted; remote, as
 *    docs/server.md says of a recovered local session: no desk is there to draw it) and the desk
 *    re-attaches with `ase attach --server URL --token-file F` (as from another machine), takes
 *    control back and runs a turn.
 * Then: one session id and one Claude session (every start names it; one session file), each
 * message once in the transcript, no agent process, no hook directory, no serve.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startAseServe, type AseServeProcess } from '../support/ase-serve-process.js';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { launchChromium } from '../support/chromium.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses, waitUntil } from '../support/processes.js';
import { openSessionOnPage, sendFromPage, terminalPanelStatus, terminalPanelText, transcriptText, watchPageProblems } from '../support/server-page.js';
import { hasTmux, openTmuxDesk, writeDeskScript, type TmuxDesk } from '../support/tmux-desk.js';

const SCREENSHOT = join(tmpdir(), 'ase-i20-claude-page-terminal.png');

describe.runIf(hasTmux)('the desk (tmux) and the phone (the page in Chromium) on one claude session through ase serve', () => {
  let root: string;
  let mock: AnthropicMock;
  let desk: TmuxDesk | undefined;
  let browser: Browser | undefined;
  const servers: AseServeProcess[] = [];

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-serve-'));
    mock = await startAnthropicMock();
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    desk?.close();
    await browser?.close();
    for (const server of servers) await server.stop('SIGKILL').catch(() => undefined);
    await mock?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('desk turn on the page, a desk dialog allowed on the page, the page takes control and its turn is allowed there, a key takes it back, ase run through the server, SIGKILL mid-turn and recovery', async () => {
    const work = join(root, 'work');
    const data = join(root, 'data');
    const hookTmp = join(root, 'tmp');
    mkdirSync(work, { recursive: true });
    mkdirSync(hookTmp, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root: join(root, 'claude') });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
    const claudeProcesses = () => findProcesses((p) => !/\) Z /.test(p.stat()) && p.cmdline().includes(claudeBinary()) && p.environ().includes(root));

    // The server: its hook directories go under our temp dir, so we can see none is left.
    let server = await startAseServe({ dataDir: data, env: { TMPDIR: hookTmp } });
    servers.push(server);
    const serverOutput = () => servers.map((s) => s.output()).join('\n--- next server:\n');

    // The desk: `ase run --mode local` in tmux; the shell reports its exit and whether the terminal is canonical again.
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const run = [process.execPath, ASE_BIN, 'run', '--mode', 'local', '--agent', 'claude', '--bin', claudeBinary(), '--option', 'permissionMode=default', '--data-dir', data, '--cwd', work, ...envArgs];
    desk = openTmuxDesk({ root, script: writeDeskScript(join(root, 'run.sh'), { cwd: work, argv: run }), env: { HOME: env.HOME! }, context: serverOutput });
    const attachScript = (name: string) => writeDeskScript(join(root, `${name}.sh`), { cwd: work, argv: [process.execPath, ASE_BIN, 'attach', id, '--data-dir', data], label: 'attach' });
    /** Types a line at the desk, once the UI shows it (Enter sent with the text can be taken as a paste). */
    const typeLine = async (text: string, target = desk!.target) => {
      desk!.type(text, target);
      await desk!.waitScreen(new RegExp(text), { target });
      await new Promise((resolve) => setTimeout(resolve, 200));
      desk!.press('Enter', target);
    };

    await desk.waitScreen(/❯/);
    const listed = (await server.api('GET', '/api/sessions')).body.sessions as { sessionId: string; agent: string; status: string }[];
    expect(listed).toHaveLength(1);
    const id = listed[0]!.sessionId;
    expect(listed[0]).toMatchObject({ agent: 'claude', status: 'running' });

    // 1. A turn typed at the desk, on the page live: transcript and terminal panel.
    await typeLine('hello from the desk');
    await desk.waitScreen(/Echo: hello from the desk/);
    const page: Page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchPageProblems(page, server.url);
    await openSessionOnPage(page, server.pageUrl, id);
    const pageState = async () => `status ${await page.textContent('#status')}; terminal ${await page.textContent('#terminal-state')}; problems ${JSON.stringify(problems)}`;
    await expect.poll(() => page.isVisible('#terminal-panel'), { timeout: 60_000, message: await pageState() }).toBe(true);
    await expect.poll(() => transcriptText(page), { timeout: 30_000 }).toContain('Echo: hello from the desk');
    expect(await transcriptText(page)).toContain('hello from the desk');
    await expect.poll(() => terminalPanelText(page), { timeout: 30_000 }).toContain('Echo: hello from the desk');
    expect(await terminalPanelStatus(page)).toMatchObject({ mode: 'local', running: true, writerAttached: true, cols: 100, rows: 30 });
    expect(await page.textContent('#terminal-state')).toContain('the desk is attached');

    // The desk's typing shows in the panel as it is typed; its dialog is allowed on the page.
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo from-the-desk > desk.txt', description: 'write' } }, { kind: 'text', text: 'desk file written' });
    desk.type('write the desk file please');
    await expect.poll(() => terminalPanelText(page), { timeout: 30_000 }).toContain('write the desk file please');
    await new Promise((resolve) => setTimeout(resolve, 200));
    desk.press('Enter');
    await (await page.waitForSelector('.prompt button.allow', { timeout: 60_000 })).click();
    await desk.waitScreen(/desk file written/, { timeoutMs: 60_000 });
    expect(readFileSync(join(work, 'desk.txt'), 'utf8')).toBe('from-the-desk\n');
    await expect.poll(() => transcriptText(page), { timeout: 30_000 }).toContain('desk file written');

    // 2. The page takes remote control: the desk shows the banner, the panel folds away.
    await page.click('#terminal-take');
    await desk.waitScreen(/controlled remotely — press any key to take it back/);
    await page.waitForSelector('#terminal-panel', { state: 'hidden' });
    expect(desk.screen()).not.toMatch(/❯/);
    // A message from the page; its tool's permission card is allowed on the page.
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo from-the-phone > phone.txt', description: 'write' } }, { kind: 'text', text: 'phone file written' });
    await sendFromPage(page, 'hello from the phone, write the phone file');
    await (await page.waitForSelector('.prompt button.allow', { timeout: 60_000 })).click();
    await expect.poll(() => transcriptText(page), { timeout: 60_000 }).toContain('phone file written');
    expect(readFileSync(join(work, 'phone.txt'), 'utf8')).toBe('from-the-phone\n');
    expect(desk.screen()).toMatch(/controlled remotely/);

    // 3. A key at the desk takes it back: the UI resumes the same session, the phone's turn on screen; the panel is back.
    desk.type('x');
    const back = await desk.waitScreen(/phone file written[\s\S]*❯/, { timeoutMs: 60_000 });
    expect(back).not.toMatch(/controlled remotely/);
    await page.waitForSelector('#terminal-panel', { state: 'visible' });
    await expect.poll(() => terminalPanelText(page), { timeout: 30_000 }).toContain('phone file written');
    await page.screenshot({ path: SCREENSHOT });
    await page.screenshot({ path: join(REPO_ROOT, 'test-output', 'ase-serve-claude-page-terminal.png') }).catch(() => undefined);
    expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });

    // 4. A second desk is refused; Ctrl-] hands over and leaves a clean screen, the terminal canonical.
    const second = desk.window('second', attachScript('second'));
    expect(await desk.waitScreen(/attach exited 1/, { target: second, timeoutMs: 30_000 })).toMatch(/a desk is already attached/);
    desk.press('C-]');
    const after = await desk.waitScreen(/ase exited 0[\s\S]*icanon/);
    expect(after).toMatch(/handed to remote control; take it back with: ase attach/);
    expect(after.slice(0, after.indexOf('session '))).not.toMatch(/❯|Echo:/);
    expect(after).not.toMatch(/-icanon/);

    // 5. `ase run --session-id` goes through the server: the reply is printed, the page sees the turn.
    const viaRun = await runToEnd([ASE_BIN, 'run', '--session-id', id, '--data-dir', data, 'hello from ase run']);
    expect(viaRun.code, viaRun.stderr).toBe(0);
    expect(viaRun.stdout).toContain('Echo: hello from ase run');
    expect(viaRun.stderr).toMatch(/hosted by ase serve/);
    await expect.poll(() => transcriptText(page), { timeout: 30_000 }).toContain('Echo: hello from ase run');
    expect(problems).toEqual([]);
    await page.close();

    // 6. `ase run --mode local --session-id` takes it back at the desk, through the server (it
    // switches the session to local there, then attaches: no banner to dismiss); a turn starts and
    // the server is SIGKILLed mid-turn.
    const third = desk.window('third', writeDeskScript(join(root, 'third.sh'), { cwd: work, argv: [process.execPath, ASE_BIN, 'run', '--mode', 'local', '--session-id', id, '--data-dir', data], label: 'run' }));
    await desk.waitScreen(/Echo: hello from ase run[\s\S]*❯/, { target: third, timeoutMs: 60_000 });
    mock.enqueue({ kind: 'text', text: 'a very slow answer that the crash cuts short', chunks: 200, delayMs: 500 });
    await typeLine('a long answer please', third);
    expect(await waitUntil(() => mock.requests.some((r) => r.pathname === '/v1/messages' && lastUserText(r.body) === 'a long answer please'), 60_000)).toBe(true);
    // Killed once the desk's prompt is journaled (the transcript tail reads it from Claude Code's own
    // file, a moment after the agent has it: a kill before that leaves no trace of the turn to close).
    const journaledPrompt = async () => {
      const { body } = await server.api('GET', `/api/sessions/${id}/transcript?before_seq=999999999999999&limit=20`);
      return JSON.stringify((body.entries as { type: string; payload: any }[]).filter((e) => e.type === 'message' && e.payload?.role === 'user')).includes('a long answer please');
    };
    await expect.poll(journaledPrompt, { timeout: 60_000 }).toBe(true);
    const killedPid = server.child.pid!;
    expect(await server.stop('SIGKILL')).toBe('SIGKILL');
    const cut = await desk.waitScreen(/run exited 1[\s\S]*icanon/, { target: third, timeoutMs: 30_000 });
    expect(cut).toMatch(/the connection to .* closed/);
    expect(cut).not.toMatch(/-icanon/);
    // The terminal UI the server ran loses its PTY with it.
    expect(await waitUntil(() => claudeProcesses().length === 0, 30_000)).toBe(true);

    // A restarted server recovers the session: the turn ended interrupted, the session remote, no client needed.
    // (Its own environment is the hermetic one: `--env` given at the desk is not stored with the
    // session, so the agents the restarted server starts get what the server passes on.)
    server = await startAseServe({ dataDir: data, env: { ...env, TMPDIR: hookTmp } });
    servers.push(server);
    expect(server.child.pid).not.toBe(killedPid);
    const recovered = async () => {
      const { body } = await server.api('GET', `/api/sessions/${id}`);
      return body as { live: boolean; mode: string; phase: string };
    };
    await expect.poll(recovered, { timeout: 60_000 }).toMatchObject({ live: true, mode: 'remote' });
    const entries = async () => {
      const all: { seq: number; type: string; payload: any }[] = [];
      for (let after = 0; ; ) {
        const { body } = await server.api('GET', `/api/sessions/${id}/transcript?after_seq=${after}&limit=500`);
        all.push(...body.entries);
        if (!body.hasMore) return all;
        after = all.at(-1)!.seq;
      }
    };
    // The turn typed at the desk that the crash cut ends interrupted (a local turn: no localId).
    await expect.poll(async () => (await entries()).filter((e) => e.type === 'turn_ended' && e.payload?.status === 'interrupted' && e.payload?.local === true).length, { timeout: 30_000 }).toBe(1);

    // The desk re-attaches: the banner, a key takes it back, a turn runs in the same session.
    // This time the way a desk on another machine would: the server's URL and a token file, no data dir.
    const fourth = desk.window('fourth', writeDeskScript(join(root, 'fourth.sh'), { cwd: work, argv: [process.execPath, ASE_BIN, 'attach', id, '--server', server.url, '--token-file', server.tokenFile], label: 'attach' }));
    await desk.waitScreen(/controlled remotely — press any key to take it back/, { target: fourth, timeoutMs: 30_000 });
    desk.type('z', fourth);
    await desk.waitScreen(/a long answer please[\s\S]*❯/, { target: fourth, timeoutMs: 90_000 });
    await typeLine('back after the crash', fourth);
    await desk.waitScreen(/Echo: back after the crash/, { target: fourth, timeoutMs: 60_000 });
    desk.press('C-]', fourth);
    await desk.waitScreen(/attach exited 0[\s\S]*icanon/, { target: fourth, timeoutMs: 30_000 });

    // One session, each message once.
    expect((await server.api('GET', '/api/sessions')).body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([id]);
    // Sent from the page or `ase run`: `user_message`; typed at the desk: the agent's `message` of role user.
    const saidNow = async () =>
      (await entries()).flatMap((e) =>
        e.type === 'user_message' ? [String(e.payload?.text)] : e.type === 'message' && e.payload?.role === 'user' ? [(e.payload.blocks as { type: string; text?: string }[]).filter((b) => b.type === 'text').map((b) => b.text).join('')] : [],
      );
    // The desk's last prompt reaches the journal through the transcript tail (Claude Code's own file, read a moment later).
    await expect.poll(async () => (await saidNow()).includes('back after the crash'), { timeout: 30_000 }).toBe(true);
    const said = await saidNow();
    for (const text of ['hello from the desk', 'write the desk file please', 'hello from the phone, write the phone file', 'hello from ase run', 'a long answer please', 'back after the crash']) {
      expect(said.filter((t) => t === text), `${text} in ${JSON.stringify(said)}`).toHaveLength(1);
    }
    // One Claude session throughout, no fork: every agent start (desk, phone, ase run, desk again,
    // the recovery) names the same one, and Claude Code keeps one session file for it.
    const claudeSessions = (await entries()).filter((e) => e.type === 'session_identified').map((e) => e.payload.resumeToken as string);
    expect(claudeSessions.length).toBeGreaterThanOrEqual(2);
    expect(new Set(claudeSessions)).toEqual(new Set([claudeSessions[0]]));
    const projects = join(env.CLAUDE_CONFIG_DIR!, 'projects');
    const sessionFiles = readdirSync(projects, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl') && !f.includes('subagents'));
    expect(sessionFiles.map((f) => f.split('/').at(-1))).toEqual([`${claudeSessions[0]}.jsonl`]);

    // The server stops cleanly: no serve.json, no agent, no hook directory (the killed server's too).
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(existsSync(server.serveFile)).toBe(false);
    expect(existsSync(server.tokenFile)).toBe(false);
    expect(await waitUntil(() => claudeProcesses().length === 0, 30_000)).toBe(true);
    expect(readdirSync(hookTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  }, 600_000);
});

/** Runs the built CLI to its end; its output and exit code. */
function runToEnd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
