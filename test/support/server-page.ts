/**
 * The phone's side of the desk-and-phone tests (issue 20): `ase serve`'s page in Chromium, read and
 * driven as a person would (the session list, the transcript, the terminal panel, the composer,
 * permission cards). Shared by the claude and codex stories; the page's own tests
 * (test/browser/server-page*.test.ts) check its layout and safety.
 */
import type { Page } from 'playwright-core';

/** Collects page errors, console errors and requests that leave `origin` (the CSP and "no CDN"). */
export function watchPageProblems(page: Page, origin: string): string[] {
  const problems: string[] = [];
  const ws = origin.replace(/^http/, 'ws');
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith(ws) && !url.startsWith('data:')) problems.push(`request outside the server: ${url}`);
  });
  return problems;
}

/** Loads the page (logged in) and opens a session from the list. */
export async function openSessionOnPage(page: Page, pageUrl: string, sessionId: string): Promise<void> {
  await page.goto(pageUrl);
  await page.click(`#session-list li[data-id="${sessionId}"]`);
}

/** The rows of the terminal panel as text (xterm.js's DOM renderer). Polled with expect.poll: the page's CSP refuses waitForFunction's eval. */
export const terminalPanelText = (page: Page): Promise<string> =>
  page.evaluate<string>(`[...document.querySelectorAll('#terminal-host .xterm-rows > div')].map((r) => r.textContent).join('\\n')`);

/** The transcript's text. */
export const transcriptText = (page: Page): Promise<string> => page.evaluate<string>(`document.getElementById('transcript').innerText`);

/** The terminal panel's last status frame (`window.ase.terminalPanel.status()`), or undefined. */
export const terminalPanelStatus = (page: Page): Promise<{ mode: string; running: boolean; writerAttached: boolean; cols: number; rows: number } | undefined> =>
  page.evaluate(`window.ase.terminalPanel.status()`);

/** Types a message in the composer and sends it. */
export async function sendFromPage(page: Page, text: string): Promise<void> {
  await page.fill('#message', text);
  await page.click('#send');
}
