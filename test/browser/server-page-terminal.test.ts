/**
 * Issue 20, Deliver 3: the page's live terminal panel, in a real browser (Debian's Chromium via
 * playwright-core) against a real `ase serve` terminal WebSocket. A local session's terminal is a
 * real PTY running a small shell program, attached to the session's terminal host exactly as a
 * local-mode engine attaches its terminal UI (as test/integration/server-terminal.test.ts does; the
 * real CLIs go through the same room in test/real-cli/ase-serve-attach-tmux.test.ts). The desk is
 * a writer client of the same WebSocket. The page must: show the panel beside the transcript for
 * the local session, with the screen as it was before the page came (repaint) and what the desk
 * types after (live), drawn at the PTY's cols/rows and scaled to fit (no overflow, at a desk and on
 * a phone), read-only (its keys reach nothing), within the page's CSP (no console errors, nothing
 * fetched elsewhere), and at 1:1 on request ("Actual size"); "Take remote control" next to it
 * switches the session to remote; the panel comes back when the session is local again, and a
 * stopped session's panel closes without reopening (which would start the session again).
 */
import fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnPty, type PtyProcess } from '../../src/engines/transport/pty-process.js';
import { launchChromium } from '../support/chromium.js';
import { REPO_ROOT } from '../support/built-cli.js';
import { openTerminal, type TerminalTestClient } from '../support/terminal-client.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const OUT = path.join(REPO_ROOT, 'test-output');
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', LANG: 'C.UTF-8' };

let server: TestServer;
let browser: Browser;
const ptys: PtyProcess[] = [];
const clients: TerminalTestClient[] = [];
beforeAll(async () => {
  server = await startTestServer({}, { presenceGraceMs: 200 });
  browser = await launchChromium();
  await fs.mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  for (const pty of ptys.splice(0)) await pty.stop();
  await browser?.close();
  await server?.stop();
});

function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url) && !request.url().startsWith(server.url.replace(/^http/, 'ws')) && !request.url().startsWith('data:')) problems.push(`request outside the server: ${request.url()}`);
  });
  return problems;
}

/** The text of the panel's terminal rows (xterm.js's DOM renderer). */
const screenText = (page: Page) => page.evaluate<string>(`[...document.querySelectorAll('#terminal-host .xterm-rows > div')].map((r) => r.textContent).join('\\n')`);

describe('the terminal panel of a local session', () => {
  it('shows the PTY live and read-only at its own size, fitted to the panel, and takes remote control', async () => {
    const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp, mode: 'local' });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    const session = server.host.get(id)!;
    const size = session.terminal.size() ?? { cols: 120, rows: 40 };

    // The desk: a writer on the terminal WebSocket, and a PTY program that prints, then echoes a line it reads.
    const desk = await openTerminal(`${server.url}/api/sessions/${id}/terminal`, { role: 'writer', headers: { authorization: `Bearer ${server.token}` } });
    if ('refused' in desk) throw new Error(`the desk was refused: ${desk.refused}`);
    clients.push(desk);
    const pty = await spawnPty({
      file: 'sh',
      args: ['-c', `printf '\\033[1;32mhello from the desk terminal\\033[0m\\r\\n'; printf '%0${size.cols}d\\r\\n' 7; read line; printf 'the desk typed: %s\\r\\n' "$line"; read more; printf 'second: %s\\r\\n' "$more"; exec sleep 600`],
      cwd: tmpdir(),
      env,
      cols: size.cols,
      rows: size.rows,
    });
    ptys.push(pty);
    session.terminal.attach(1, pty);
    await desk.waitFor(() => desk.output().includes('hello from the desk terminal'), 'the first screen');

    for (const [name, viewport, mobile] of [
      ['desk', { width: 1280, height: 800 }, false],
      ['phone', { width: 390, height: 844 }, true],
    ] as const) {
      const page = await browser.newPage({ viewport, isMobile: mobile, hasTouch: mobile });
      const problems = watchProblems(page);
      await page.goto(server.pageUrl);
      await page.click(`#session-list li[data-id="${id}"]`);
      await page.waitForSelector('#terminal-panel', { state: 'visible' });
      // What was on the screen before the page came (the repaint).
      // (Polled from here: the page's CSP refuses the eval that waitForFunction's polling needs.)
      await expect.poll(() => screenText(page), { timeout: 20_000 }).toContain('hello from the desk terminal');
      const status = await page.evaluate<{ cols: number; rows: number; mode: string; writerAttached: boolean; running: boolean }>('window.ase.terminalPanel.status()');
      expect(status).toMatchObject({ cols: size.cols, rows: size.rows, mode: 'local', writerAttached: true, running: true });
      expect(await page.locator('#terminal-host .xterm-rows > div').count()).toBe(size.rows);
      // A full-width line of the PTY is one row: drawn at the PTY's cols, not re-wrapped to the panel.
      expect((await screenText(page)).split('\n').some((row) => row.trimEnd() === '0'.repeat(size.cols - 1) + '7')).toBe(true);
      expect(await page.textContent('#terminal-state')).toContain('the desk is attached');
      expect(await page.isVisible('#terminal-take')).toBe(true);

      // Fitted: scaled down to the panel, nothing wider than its card or the page.
      const fit = await page.evaluate<{ scale: number; hostWidth: number; boxWidth: number; section: number[] }>(`(() => {
        const host = document.getElementById('terminal-host'), box = document.getElementById('terminal-screen'), section = document.getElementById('terminal-panel');
        return { scale: Number(host.dataset.scale), hostWidth: host.getBoundingClientRect().width, boxWidth: box.clientWidth, section: [section.scrollWidth, section.clientWidth] };
      })()`);
      expect(fit.scale).toBeGreaterThan(0);
      expect(fit.scale).toBeLessThan(1);
      expect(fit.hostWidth).toBeLessThanOrEqual(fit.boxWidth + 1);
      expect(fit.section[0]).toBeLessThanOrEqual(fit.section[1]!);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
      if (!mobile) {
        // Beside the transcript: the panel's left edge is right of the chat column.
        const [chat, panel] = await Promise.all([page.locator('#chat').boundingBox(), page.locator('#terminal-panel').boundingBox()]);
        expect(panel!.x).toBeGreaterThanOrEqual(chat!.x + chat!.width);
      }

      // Live: what the desk types appears; the page's own keys go nowhere (read-only viewer).
      await page.click('#terminal-screen');
      await page.keyboard.type('PAGE-KEYS');
      await page.keyboard.press('Enter');
      const line = name === 'desk' ? 'first line from the desk' : 'another line';
      desk.type(`${line}\r`);
      await expect.poll(() => screenText(page), { timeout: 20_000 }).toContain(line);
      expect(desk.output()).not.toContain('PAGE-KEYS');
      expect(await screenText(page)).not.toContain('PAGE-KEYS');
      await page.screenshot({ path: path.join(OUT, `server-page-terminal-${name}.png`), fullPage: mobile });
      if (mobile) {
        // "Actual size": 1:1, scrolled inside the panel, still nothing wider than the card.
        await page.click('#terminal-zoom');
        await expect.poll(() => page.getAttribute('#terminal-host', 'data-scale')).toBe('1');
        expect(await page.evaluate<number[]>(`(() => { const s = document.getElementById('terminal-panel'); return [s.scrollWidth, s.clientWidth]; })()`)).toSatisfy((w: number[]) => w[0]! <= w[1]!);
        expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
        await page.locator('#terminal-panel').screenshot({ path: path.join(OUT, 'server-page-terminal-phone-actual-size.png') });
      }
      expect(problems).toEqual([]);
      await page.close();
    }
    expect(desk.output()).toContain('the desk typed: first line from the desk');
    expect(desk.output()).toContain('second: another line');

    // "Take remote control": the session goes remote, the desk is told, the panel folds away.
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    await page.goto(server.pageUrl);
    await page.click(`#session-list li[data-id="${id}"]`);
    await page.waitForSelector('#terminal-take', { state: 'visible' });
    await page.click('#terminal-take');
    await desk.waitFor(() => desk.statuses.at(-1)?.mode === 'remote', 'the desk told of remote control');
    expect(server.host.get(id)!.snapshot().mode).toBe('remote');
    await page.waitForSelector('#terminal-panel', { state: 'hidden' });

    // Back to local (another client's switch): the panel comes back by itself.
    expect((await server.api('POST', `/api/sessions/${id}/mode`, { to: 'local' })).status).toBe(200);
    await page.waitForSelector('#terminal-panel', { state: 'visible' });
    await expect.poll(() => page.evaluate<string | undefined>('window.ase.terminalPanel.status() && window.ase.terminalPanel.status().mode')).toBe('local');
    // Stopped: the room closes its clients (1000); the panel goes and does not reopen the terminal,
    // which would start the stopped session again.
    expect((await server.api('POST', `/api/sessions/${id}/stop`, {})).status).toBe(200);
    await page.waitForSelector('#terminal-panel', { state: 'hidden' });
    await new Promise((resolve) => setTimeout(resolve, 3000)); // longer than the panel's first retry (0.5 s) and the next (1 s)
    expect(server.host.get(id)).toBeUndefined();
    expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, phase: 'stopped' });
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);
});
