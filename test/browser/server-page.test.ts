/**
 * The web page of `ase serve` in a real browser (Debian's Chromium via playwright-core): it loads
 * from the printed URL, a fake-engine session is created from the form, a message's streamed
 * answer appears, a permission prompt is allowed by a click, and the inspector's highlighted state
 * follows the session (idle → running → idle). Screenshots go to test-output/ (gitignored).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { REPO_ROOT } from '../support/built-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const OUT = path.join(REPO_ROOT, 'test-output');
const SCRIPT = {
  turns: [
    [
      { afterMs: 150, text: 'Here is the streamed answer from the fake agent.' },
      { afterMs: 300, ask: { toolName: 'Bash', input: { command: 'ls -la' } } },
      { afterMs: 50, text: 'Listed the files after you allowed it.' },
      { complete: { usage: { inputTokens: 120, outputTokens: 30, costUsd: 0.0123 } } },
    ],
  ],
};

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer(SCRIPT, { presenceGraceMs: 200 });
  browser = await launchChromium();
  await fs.mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

// Page-side code is passed as strings: this project type-checks without the DOM library.
const activeLeaf = (page: Page) =>
  page.evaluate<string | undefined>(`[...document.querySelectorAll('#chart g.state.active')].map((g) => g.getAttribute('data-state')).sort((a, b) => b.length - a.length)[0]`);

describe('the page in Chromium', () => {
  it('creates a session, streams an answer, allows a permission by a click, and the inspector follows', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url)) problems.push(`request outside the server: ${request.url()}`);
    });

    // The printed URL: the token is traded for a cookie and the address bar no longer shows it.
    await page.goto(server.pageUrl);
    expect(page.url()).toBe(`${server.url}/`);
    await page.waitForSelector('#chart svg g.state[data-state="session.remote.idle"]');
    await page.waitForSelector('#agent option[value="fake"], #agent option:text("fake")', { state: 'attached' });

    await page.selectOption('#agent', 'fake');
    await page.fill('#workdir', server.tmp);
    await page.click('#create');
    await page.waitForSelector('#session-list li.current');
    const sessionId = (await page.textContent('#session-title'))!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => activeLeaf(page), { timeout: 10_000 }).toBe('session.remote.idle');

    // Record the streamed text as it arrives (before the durable message replaces it).
    await page.evaluate(`
      window.streamed = [];
      new MutationObserver(() => {
        const live = document.querySelector('.live-text');
        if (live && live.textContent) window.streamed.push(live.textContent);
      }).observe(document.getElementById('transcript'), { childList: true, subtree: true, characterData: true });
    `);
    await page.fill('#message', 'please list the files');
    await page.click('#send');
    await page.waitForSelector('.entry.user:has-text("please list the files")');
    await expect.poll(() => activeLeaf(page), { timeout: 10_000 }).toBe('session.remote.running');
    await page.waitForSelector('.entry.assistant:has-text("Here is the streamed answer from the fake agent.")');
    const streamed = await page.evaluate<string[]>('window.streamed');
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.some((s) => 'Here is the streamed answer from the fake agent.'.startsWith(s))).toBe(true);

    // The prompt, allowed by a click.
    const allow = await page.waitForSelector('.prompt button.allow');
    expect(await page.textContent('.prompt')).toContain('ls -la');
    await page.screenshot({ path: path.join(OUT, 'server-page-prompt.png'), fullPage: true });
    await allow.click();
    await page.waitForSelector('.entry[data-type="permission_resolved"]:has-text("approved")');
    await page.waitForSelector('.entry.assistant:has-text("Listed the files after you allowed it.")');
    await page.waitForSelector('.entry[data-type="turn_complete"]');
    expect(await page.$('.prompt')).toBeNull();
    await expect.poll(() => activeLeaf(page), { timeout: 10_000 }).toBe('session.remote.idle');
    await expect.poll(() => page.textContent('#usage')).toContain('$0.0123');

    // User messages journaled as `message` entries (what a local session journals for a line typed
    // at its terminal UI): their text blocks joined are shown once; one repeating a message sent
    // from the page (already shown as its user_message) is not shown again.
    const typed = (n: number, blocks: unknown[]) =>
      server.journal.append({ ts: Date.now(), sessionId, agent: 'fake', gen: 1, eventId: `desk-${n}`, type: 'message', payload: { id: `desk-${n}`, role: 'user', blocks } });
    await typed(1, [{ type: 'text', text: 'typed at ' }, { type: 'image', data: '' }, { type: 'text', text: 'the desk' }]);
    const repeatSeq = await typed(2, [{ type: 'text', text: 'please list the files' }]);
    await page.waitForSelector('.entry.user:has-text("typed at the desk")');
    // The page has taken the repeat (its scrubber follows every entry's seq) before it is counted.
    await expect.poll(() => page.textContent('#scrub-label')).toBe(`live (seq ${String(repeatSeq)})`);
    await expect.poll(() => page.locator('.entry.user:has-text("please list the files")').count()).toBe(1);

    // The inspector's logs and the scrubber: back to the seq of the first message, the chart shows running.
    expect(await page.locator('#events-log li').count()).toBeGreaterThan(0);
    expect(await page.locator('#effects-log li').count()).toBeGreaterThan(0);
    const userSeq = Number(await page.getAttribute('.entry.user', 'data-seq'));
    await page.evaluate(`(() => { const input = document.getElementById('scrub'); input.value = '${userSeq}'; input.dispatchEvent(new Event('input')); })()`);
    await expect.poll(() => activeLeaf(page), { timeout: 10_000 }).toBe('session.remote.running');
    await page.click('#scrub-live');
    await expect.poll(() => activeLeaf(page), { timeout: 10_000 }).toBe('session.remote.idle');

    await page.screenshot({ path: path.join(OUT, 'server-page.png'), fullPage: true });
    expect(problems).toEqual([]);

    // The same session on a phone-sized screen: everything still reachable, nothing wider than the screen.
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(server.pageUrl);
    await phone.click(`#session-list li[data-id="${sessionId}"]`);
    await phone.waitForSelector('.entry.assistant:has-text("Listed the files")');
    const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: path.join(OUT, 'server-page-phone.png'), fullPage: true });
    await phone.close();
    await page.close();
  });
});
