/**
 * The desk and the phone on one Codex session (issue 20), as a person lives it: `ase serve` runs on
 * a data dir; `ase run --mode local --agent codex` in a real terminal (tmux on a private socket)
 * finds it through serve.json, so Codex's own terminal UI (the real pinned CLI, our mock Responses
 * API, loopback only) runs inside the server and this terminal is its desk. The phone is the
 * server's page in a real browser (Debian's Chromium through playwright-core).
 *
 * desk types a turn → the page shows it live (transcript and terminal panel) → an approval Codex
 * asks for in the desk's UI is allowed on the page → the page takes remote control (the desk shows
 * the banner) and sends a message → the approval Codex asks for is allowed on the page → a key at
 * the desk takes it back: Codex's terminal UI resumes the same thread (one thread, one rollout, no
 * fork) and shows the phone's turn → the server is SIGKILLed mid-turn: the desk gets its shell
 * back, a restarted server reopens the session by itself and `ase attach` takes it back at the
 * desk, on the same thread → Ctrl-] hands over, the server stops: each message reached the model
 * once, no agent process, no hook directory, no serve.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execCommandCall, isTitleRequest, lastUserText, startOpenAIResponsesMock, toolOutputsSinceLastUser, type MockReply, type OpenAIResponsesMock, type RecordedRequest } from '../mocks/openai-responses-mock.js';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { launchChromium } from '../support/chromium.js';
import { findRollouts, hermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML } from '../support/headless-screen.js';
import { findProcesses, waitUntil, waitUntilNone } from '../support/processes.js';
import { deskInTmux, hasTmux, pageTerminalText, pageUserMessages } from '../support/desk-and-phone.js';

/** Screens of the desk and the page at each step, for a person to look at. */
const OUT = join(REPO_ROOT, 'test-output');

describe.runIf(hasTmux())('ase run --mode local --agent codex through ase serve: the desk in tmux, the phone in Chromium', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  let closeDesk: (() => void) | undefined;

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-codex-serve-'));
    mkdirSync(OUT, { recursive: true });
    mock = await startOpenAIResponsesMock();
  });

  afterAll(async () => {
    closeDesk?.();
    server?.kill('SIGKILL');
    await browser?.close();
    await mock?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('desk turn seen live on the page, a desk approval allowed there; the page takes control, sends, allows the approval; a key at the desk takes it back on the same thread; the server SIGKILLed mid-turn, restarted, the desk re-attaches', async () => {
    // The mock's key under a CODEX_* name: what the codex engines pass on from the server's own env
    // (an allow-list), the only env a session the server reopens by itself gets.
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML, envKey: 'CODEX_MOCK_API_KEY' });
    // This test's Codex processes: the binary is shared with any other Codex test running beside this one.
    const ourCodex = () => findProcesses((p) => p.cmdline().includes(h.bin) && (p.environ().includes(root) || p.cmdline().includes(root)));
    // The model: answers by what it is asked (the desk's and the phone's turns interleave; Codex's
    // title requests the mock answers itself).
    const model = (request: RecordedRequest): MockReply => {
      const text = lastUserText(request.body);
      if (text === 'hang on') return { kind: 'stall' }; // the turn the server dies in
      const who = text === 'write the desk file' ? 'desk' : text === 'hello from the phone' ? 'phone' : undefined;
      if (who === undefined) return { kind: 'text', text: `Echo: ${text}` };
      if (toolOutputsSinceLastUser(request.body).length > 0) return { kind: 'text', text: `written for the ${who}` };
      return execCommandCall(`echo from-the-${who} > ${join(h.workDir, `${who}.txt`)}`, { sandbox_permissions: 'require_escalated', justification: `the ${who} asked` });
    };
    mock.enqueue(...Array.from({ length: 100 }, () => model));
    const data = join(root, 'data');
    const hookTmp = join(root, 'server-tmp');
    mkdirSync(hookTmp, { recursive: true });

    // The server: its hook directories and temp config go under our temp dir, so we can see none is left.
    // Started again on the same data dir after a SIGKILL, so `serve` is whichever runs now.
    const serveFile = join(data, 'serve.json');
    let serverOut = '';
    let serve = { url: '', token: '', pageUrl: '', pid: 0 };
    const startServe = async () => {
      // Codex's hermetic env is the server's own too, as a person's env is their server's: a session
      // the server reopens by itself after a crash gets no env from a client (env is never stored).
      const child = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', data], { env: { ...process.env, ...h.env, TMPDIR: hookTmp }, stdio: ['ignore', 'pipe', 'pipe'] });
      server = child;
      let out = '';
      child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), (serverOut += c.toString())));
      child.stderr!.on('data', (c: Buffer) => ((out += c.toString()), (serverOut += c.toString())));
      const ours = () => existsSync(serveFile) && (JSON.parse(readFileSync(serveFile, 'utf8')) as { pid: number }).pid === child.pid && /open (http\S+)/.test(out);
      expect(await waitUntil(ours, 30_000), serverOut).toBe(true);
      const entry = JSON.parse(readFileSync(serveFile, 'utf8')) as { url: string; pid: number; tokenFile: string };
      serve = { url: entry.url, token: readFileSync(entry.tokenFile, 'utf8').trim(), pageUrl: /open (http\S+)/.exec(out)![1]!, pid: entry.pid };
      return { child, tokenFile: entry.tokenFile };
    };
    const first = await startServe();
    const api = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${serve.url}${route}`, { method, headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
      return { status: response.status, body: (await response.json()) as any };
    };

    // The desk: `ase run --mode local --agent codex` in tmux; it finds the server by itself.
    const desk = deskInTmux({
      root,
      cwd: h.workDir,
      home: h.home,
      command: [process.execPath, ASE_BIN, 'run', '--mode', 'local', '--agent', 'codex', '--bin', h.bin, '--option', 'approvalPolicy=on-request', '--option', 'model=gpt-5.5', '--data-dir', data, '--cwd', h.workDir, ...Object.entries(h.env).flatMap(([k, v]) => ['--env', `${k}=${v}`])],
      describe: () => `--- server:\n${serverOut}`,
    });
    closeDesk = desk.close;
    await desk.waitScreen(/Ask Codex|›/, 60_000);
    const listed = (await api('GET', '/api/sessions')).body.sessions as { sessionId: string; agent: string }[];
    expect(listed).toHaveLength(1);
    const id = listed[0]!.sessionId;
    expect(listed[0]!.agent).toBe('codex');
    expect((await api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });

    // The phone opens the page on the session before the desk types: it must see the turn live.
    browser = await launchChromium();
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await page.goto(serve.pageUrl);
    await page.click(`#session-list li[data-id="${id}"]`);
    await page.waitForSelector('#terminal-panel', { state: 'visible' });
    await expect.poll(() => pageTerminalText(page), { timeout: 30_000 }).toMatch(/Ask Codex|›/);

    // 1. A turn typed at the desk, in Codex's own UI: on the page at once, transcript and terminal panel.
    await desk.typeLine('hello from the desk');
    await desk.waitScreen(/Echo: hello from the desk/, 60_000);
    await expect.poll(() => page.textContent('#transcript'), { timeout: 30_000 }).toContain('Echo: hello from the desk');
    // What the desk typed is on the phone too, not only the answer.
    await expect.poll(() => pageUserMessages(page), { timeout: 30_000 }).toEqual(['hello from the desk']);
    await expect.poll(() => pageTerminalText(page), { timeout: 30_000 }).toContain('Echo: hello from the desk');
    await page.screenshot({ path: join(OUT, 'ase-serve-codex-page-desk-turn.png') });
    writeFileSync(join(OUT, 'ase-serve-codex-desk-turn.txt'), desk.screen());
    const thread = findRollouts(h.codexHome);
    expect(thread).toHaveLength(1);

    // An approval Codex asks for in the desk's terminal UI is on the page, and allowed there.
    const deskFile = join(h.workDir, 'desk.txt');
    await desk.typeLine('write the desk file');
    const allowLocal = page.locator('#prompts .prompt button.allow');
    await allowLocal.waitFor({ state: 'visible', timeout: 60_000 });
    // (Codex's own hook names a command `Bash`; every codex engine reports it as `shell`, here too.)
    expect(await page.textContent('#prompts')).toMatch(/Allow shell\?[\s\S]*echo from-the-desk/);
    await desk.waitScreen(/Running hook/, 30_000);
    await allowLocal.click();
    await desk.waitScreen(/written for the desk/, 60_000);
    expect(readFileSync(deskFile, 'utf8')).toBe('from-the-desk\n');
    await expect.poll(() => page.locator('#prompts .prompt').count(), { timeout: 30_000 }).toBe(0);

    // 2. The phone takes remote control: the desk shows the one-line banner, the panel folds away.
    const tapAt = performance.now();
    await page.click('#terminal-take');
    const bannered = await desk.waitScreen(/controlled remotely — press any key to take it back/, 60_000);
    await page.screenshot({ path: join(OUT, 'ase-serve-codex-page-remote.png') });
    expect(bannered).not.toMatch(/Echo: hello from the desk/);
    writeFileSync(join(OUT, 'ase-serve-codex-desk-banner.txt'), bannered);
    await page.waitForSelector('#terminal-panel', { state: 'hidden', timeout: 30_000 });
    await expect.poll(async () => (await api('GET', `/api/sessions/${id}`)).body.phase, { timeout: 60_000, interval: 50 }).toBe('idle');
    const remoteMs = performance.now() - tapAt;
    expect((await api('GET', `/api/sessions/${id}`)).body.mode).toBe('remote');

    // 3. The phone sends a turn; Codex asks to run a command outside its sandbox; the page allows it.
    const target = join(h.workDir, 'phone.txt');
    await page.fill('#message', 'hello from the phone');
    await page.click('#send');
    const allow = page.locator('#prompts .prompt button.allow');
    await allow.waitFor({ state: 'visible', timeout: 60_000 });
    // The app-server engine names a command approval `shell`, as every remote codex engine does.
    expect(await page.textContent('#prompts')).toMatch(/Allow shell\?[\s\S]*echo from-the-phone/);
    await allow.click();
    await expect.poll(() => page.textContent('#transcript'), { timeout: 60_000 }).toContain('written for the phone');
    expect(readFileSync(target, 'utf8')).toBe('from-the-phone\n');
    expect(await page.locator('#prompts .prompt').count()).toBe(0);

    // 4. A key at the desk takes it back: Codex's UI resumes the thread and shows the phone's turn.
    const keyAt = performance.now();
    desk.keys('x');
    const back = await desk.waitScreen(/written for the phone/, 90_000);
    const drawnMs = performance.now() - keyAt;
    expect(back).not.toMatch(/controlled remotely/);
    expect(back).toMatch(/hello from the phone/);
    writeFileSync(join(OUT, 'ase-serve-codex-desk-back.txt'), back);
    expect((await api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true, mode: 'local' });
    await page.waitForSelector('#terminal-panel', { state: 'visible', timeout: 30_000 });
    await expect.poll(() => pageTerminalText(page), { timeout: 30_000 }).toContain('written for the phone');
    await page.screenshot({ path: join(OUT, 'ase-serve-codex-page-local-again.png') });
    // One thread, no fork: still the one rollout, and the terminal UI answers on it.
    await desk.typeLine('back at the desk');
    await desk.waitScreen(/Echo: back at the desk/, 60_000);
    // The page shows each message once, wherever it was typed.
    await expect.poll(() => pageUserMessages(page), { timeout: 30_000 }).toEqual(['hello from the desk', 'write the desk file', 'hello from the phone', 'back at the desk']);
    expect(findRollouts(h.codexHome)).toEqual(thread);
    const entries = (await api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries as { type: string; payload: any }[];
    const threads = entries.filter((e) => e.type === 'session_identified').map((e) => e.payload.resumeToken as string);
    expect(threads.length).toBeGreaterThanOrEqual(3); // local, remote, local again: each names its thread
    expect(new Set(threads).size).toBe(1);
    expect(thread[0]).toContain(threads[0]);
    expect(entries.some((e) => e.type === 'error')).toBe(false);

    expect(problems).toEqual([]);
    await page.close();

    // 5. The server is SIGKILLed mid-turn while the desk is attached: the desk is told and gets its
    // shell back, Codex's terminal UI goes with the server. A restarted server recovers the session
    // (the turn in flight ends interrupted) and the desk re-attaches to the same thread.
    await desk.typeLine('hang on');
    expect(await waitUntil(() => mock.requests.some((r) => lastUserText(r.body) === 'hang on'), 60_000)).toBe(true);
    // Killed once the desk's prompt is journaled: the rollout tailer reads it from Codex's own file a
    // moment after the model has it (a kill before that leaves the journal no trace of the turn; the
    // Claude story waits the same way). Failed once in a fresh run without this wait.
    const journaledPrompt = async () => {
      const { body } = await api('GET', `/api/sessions/${id}/transcript?limit=500`);
      return (body.entries as { type: string; payload: any }[]).some(
        (e) => e.type === 'message' && e.payload?.role === 'user' && JSON.stringify(e.payload.blocks).includes('hang on'),
      );
    };
    await expect.poll(journaledPrompt, { timeout: 60_000, interval: 100 }).toBe(true);
    first.child.kill('SIGKILL');
    expect(await waitUntil(() => first.child.exitCode !== null || first.child.signalCode !== null, 30_000)).toBe(true);
    const lost = await desk.waitScreen(/ase exited 1/, 30_000);
    expect(lost).toMatch(/the connection to http\S+ closed/);
    expect(await waitUntilNone(ourCodex, 30_000, 100)).toEqual([]);
    await startServe();
    // Reopened by the server alone, under remote control (no desk is attached yet), on the same thread.
    await expect.poll(async () => (await api('GET', `/api/sessions/${id}`)).body, { timeout: 90_000, interval: 200 }).toMatchObject({ live: true, mode: 'remote', phase: 'idle' });
    const attach = [process.execPath, ASE_BIN, 'attach', id, '--data-dir', data].map((w) => `'${w}'`).join(' ');
    desk.keys(`clear; ${attach}; echo "attach exited $?"\r`);
    await desk.waitScreen(/controlled remotely — press any key to take it back/, 30_000);
    desk.keys('y');
    const reattached = await desk.waitScreen(/Echo: back at the desk[\s\S]*›/, 90_000);
    expect(reattached).toMatch(/hang on[\s\S]*Conversation interrupted/);
    writeFileSync(join(OUT, 'ase-serve-codex-desk-reattached.txt'), reattached);
    await desk.typeLine('after the crash');
    await desk.waitScreen(/Echo: after the crash/, 60_000);
    expect(findRollouts(h.codexHome)).toEqual(thread);

    // 6. Ctrl-] hands over and gives the shell back; the server stops cleanly.
    desk.keys('\x1d');
    await desk.waitScreen(/attach exited 0/, 30_000);
    const after = (await api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries as { type: string; payload: any }[];
    // Known gap: the local turn the server died in ('hang on') gets no end entry in the journal (the
    // statechart sees no turn in local mode, so the restore has none to end); Codex's own thread
    // marks it interrupted (on the desk's screen above). A fix adds its `interrupted` end here.
    expect(after.filter((e) => e.type === 'turn_complete').map((e) => e.payload.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    expect(new Set(after.filter((e) => e.type === 'session_identified').map((e) => e.payload.resumeToken)).size).toBe(1);
    expect(after.some((e) => e.type === 'error')).toBe(false);
    server!.kill('SIGTERM');
    expect(await waitUntil(() => server!.exitCode !== null, 30_000), serverOut).toBe(true);

    // Each message reached the model once (the request that opened its turn), and the session holds each once.
    // (Codex's terminal UI also asks the model for a title of its first prompt: its own request, not a turn.)
    const opened = mock.requests
      .filter((r) => r.pathname.endsWith('/responses') && !isTitleRequest(r) && toolOutputsSinceLastUser(r.body).length === 0)
      .map((r) => lastUserText(r.body));
    expect(opened).toEqual(['hello from the desk', 'write the desk file', 'hello from the phone', 'back at the desk', 'hang on', 'after the crash']);
    const users = after.filter((e) => e.type === 'message' && e.payload.role === 'user').map((e) => e.payload.blocks.map((b: { text?: string }) => b.text ?? '').join(''));
    expect(users).toEqual(['hello from the desk', 'write the desk file', 'hello from the phone', 'back at the desk', 'hang on', 'after the crash']);
    // Nothing left: no serve.json, no agent process, no hook directory, no temp config.
    expect(existsSync(serveFile)).toBe(false);
    expect(ourCodex()).toEqual([]);
    desk.close(); // the desk's shell (its HOME is under root); then nothing of ours may be left
    expect(await waitUntilNone(() => findProcesses((p) => p.environ().includes(root)), 10_000, 100)).toEqual([]);
    expect(readdirSync(hookTmp).filter((name) => name.startsWith('ase-'))).toEqual([]); // ours; Node's compile cache (node-compile-cache) may sit there too
    // Once each, as the person lived it (the bench measures them over rounds).
    console.log(`[codex desk and phone] tap "take control" → remote idle: ${remoteMs.toFixed(0)} ms; key at the desk → the phone's turn drawn in tmux: ${drawnMs.toFixed(0)} ms`);
  }, 480_000);
});

