/**
 * Issue 23, Deliver 5: the page people enjoy on a phone, in a real browser (Debian's Chromium via
 * playwright-core). A fake-engine turn answers in Markdown, calls tools (a command, an edit, a
 * Codex patch, a read) and asks to run a long command. At 390×844 and 1280×800 (screenshots in
 * test-output/): no card is wider than itself (scrollWidth <= clientWidth), the long command wraps
 * inside the permission card and can be read whole, tool inputs are a command, a diff and a path,
 * the Markdown is rendered, the session id is shown as it is, the inspector is folded on the phone
 * behind a toggle and highlights the current state even when its chart arrives after the stream's
 * first frames. Then XSS: payloads in the Markdown (javascript: links, images, raw HTML), in tool
 * inputs, paths and names, with the page's CSP switched off (bypassCSP), so the escaping itself is
 * what is tested: nothing runs and no element or handler is created.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeTurn } from '../../src/index.js';
import { launchChromium } from '../support/chromium.js';
import { REPO_ROOT } from '../support/built-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const OUT = path.join(REPO_ROOT, 'test-output');

const LONG_COMMAND =
  'find /srv/builds/very-long-project-directory-name/packages -name "*.tmp" -mtime +30 -print0 | xargs -0 rm -f && ' +
  'curl --fail --silent --show-error https://artifacts.example.internal/releases/2026/11/agent-session-engine-0.1.0-linux-x64.tar.gz?token=' +
  'A'.repeat(180) +
  ' -o /tmp/release.tar.gz && tar -xzf /tmp/release.tar.gz -C /opt/agent-session-engine --strip-components=1 && echo THE-END-OF-THE-COMMAND';
const LONG_PATH = '/home/someone/projects/agent-session-engine/src/engines/codex/app-server/protocol/generated/v2/ThreadStartParamsWithAVeryLongName.ts';

const MARKDOWN = [
  '## Plan',
  '',
  'I will **clean the build** and then run `npm test`:',
  '',
  '1. remove the stale files',
  '2. fetch the release',
  '',
  '```sh',
  'npm run build && npm test -- --reporter=verbose --no-color --some-very-long-flag-name-that-does-not-wrap=1',
  '```',
  '',
  'See [the docs](https://example.org/docs) for more.',
].join('\n');

const RICH_TURN: FakeTurn = [
  { text: MARKDOWN },
  // An assistant message of only a tool call (as Claude sends one): no empty card for it.
  { emit: { type: 'message', role: 'assistant', id: 'm-tool-only', blocks: [{ type: 'tool_use', callId: 'c-bash', name: 'Bash', input: { command: 'ls -la src/server' } }] } },
  { emit: { type: 'tool_call', callId: 'c-bash', toolName: 'Bash', input: { command: 'ls -la src/server', description: 'List the server files' } } },
  { emit: { type: 'tool_call', callId: 'c-edit', toolName: 'Edit', input: { file_path: LONG_PATH, old_string: 'const a = 1;\nconst b = 2;\nreturn a + b;', new_string: 'const a = 1;\nconst b = 3;\nreturn a + b;' } } },
  { emit: { type: 'tool_call', callId: 'c-patch', toolName: 'apply_patch', input: { changes: [{ path: '/work/patched.txt', kind: { type: 'update' }, diff: '@@ -1,2 +1,2 @@\n-old line\n+new line\n unchanged' }] } } },
  { emit: { type: 'tool_call', callId: 'c-read', toolName: 'Read', input: { file_path: LONG_PATH, offset: 10, limit: 40 } } },
  { ask: { toolName: 'Bash', input: { command: LONG_COMMAND, description: 'Clean and fetch the release' } } },
  { text: 'Done.' },
  { complete: {} },
];

/** Each payload sets window.__xss if it ever runs. */
const XSS_MARKDOWN = [
  '[plain js](javascript:window.__xss=1)',
  '[mixed case](JaVaScRiPt:window.__xss=2)',
  '[entity](&#106;avascript:window.__xss=3)',
  '<javascript:window.__xss=4>',
  '![an image](https://example.org/x.png)',
  '![js image](javascript:window.__xss=6)',
  '<img src=x onerror="window.__xss=7">',
  '<script>window.__xss=8</script>',
  '<a href="javascript:window.__xss=9">raw anchor</a>',
  '[data url](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9MTA8L3NjcmlwdD4=)',
  '<svg onload="window.__xss=11"></svg>',
  '<iframe src="javascript:window.__xss=12"></iframe>',
  '*<img src=x onerror=window.__xss=13>*',
  '[vb](vbscript:window.__xss=14)',
  '<details open ontoggle="window.__xss=15">x</details>',
  '[ok link](https://example.org/safe)',
].join('\n\n');
const XSS_TURN: FakeTurn = [
  { text: XSS_MARKDOWN },
  { emit: { type: 'tool_call', callId: 'x-1', toolName: '<img src=x onerror=window.__xss=20>', input: { command: '<img src=x onerror=window.__xss=21>', cwd: '"><svg onload=window.__xss=22>' } } },
  { emit: { type: 'tool_call', callId: 'x-2', toolName: 'Edit', input: { file_path: '<img src=x onerror=window.__xss=23>', old_string: '<script>window.__xss=24</script>', new_string: '<img src=x onerror=window.__xss=25>' } } },
  { emit: { type: 'tool_call', callId: 'x-3', toolName: 'apply_patch', input: { changes: { '<svg onload=window.__xss=26>': { type: 'add', content: '<script>window.__xss=27</script>' } } } } },
  { emit: { type: 'tool_result', callId: 'x-1', status: 'completed', output: '<img src=x onerror=window.__xss=28>', isError: false } },
  { ask: { toolName: '<img src=x onerror=window.__xss=29>', input: { command: '<script>window.__xss=30</script>', file_path: '<img src=x onerror=window.__xss=31>' } } },
  { complete: {} },
];

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer({ turns: [RICH_TURN] }, { presenceGraceMs: 200 });
  browser = await launchChromium();
  await fs.mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

function watchProblems(page: Page, origin = server.url): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) problems.push(`request outside the server: ${request.url()}`);
  });
  return problems;
}

/** Every card (panel, transcript entry, permission card) that is wider inside than it shows. */
const overflowingCards = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('section, .entry, .prompt, .tool-view')]
    .filter((e) => e.getClientRects().length > 0 && e.scrollWidth > e.clientWidth)
    .map((e) => (e.id || e.className) + ': scrollWidth ' + e.scrollWidth + ' > clientWidth ' + e.clientWidth)`);
const pageOverflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
const activeStates = (page: Page) => page.evaluate<string[]>(`[...document.querySelectorAll('#chart g.state.active')].map((g) => g.getAttribute('data-state'))`);

async function openSession(page: Page, sessionId: string, on: TestServer = server): Promise<void> {
  await page.goto(on.pageUrl);
  await page.click(`#session-list li[data-id="${sessionId}"]`);
}

describe('the page on a phone and at a desk', () => {
  let sessionId: string;

  it('renders Markdown, tool inputs as commands, diffs and paths, and a long command readable inside its card, at 390x844 and 1280x800', async () => {
    sessionId = await server.newSession();
    const sent = await server.api('POST', `/api/sessions/${sessionId}/messages`, { text: 'clean the build and fetch the release', localId: 'rich-1' });
    expect(sent.status).toBe(200);

    for (const [name, viewport, mobile] of [
      ['phone', { width: 390, height: 844 }, true],
      ['desk', { width: 1280, height: 800 }, false],
    ] as const) {
      const page = await browser.newPage({ viewport, isMobile: mobile, hasTouch: mobile });
      const problems = watchProblems(page);
      await openSession(page, sessionId);
      await page.waitForSelector('.prompt button.allow');
      await page.waitForSelector('.entry.tool .tool-view .diff');

      // The session id as it is: no CSS upper-casing (innerText applies text-transform).
      expect(await page.evaluate<string>(`document.getElementById('session-title').innerText`)).toBe(sessionId);

      // Markdown rendered: a heading, a list, a code block, a link that opens elsewhere without a referrer.
      const md = page.locator('.entry.assistant .md').first();
      expect(await md.locator('h2').textContent()).toBe('Plan');
      expect(await md.locator('ol li').count()).toBe(2);
      expect(await md.locator('pre code').textContent()).toContain('npm run build && npm test');
      expect(await md.locator('a').getAttribute('href')).toBe('https://example.org/docs');
      expect(await md.locator('a').getAttribute('rel')).toBe('noopener noreferrer nofollow');

      // No empty assistant card (a message of only a tool call draws nothing of its own).
      expect(await page.evaluate<number>(`[...document.querySelectorAll('.entry.assistant')].filter((e) => (e.querySelector('.md')?.textContent ?? '').trim() === '').length`)).toBe(0);

      // Tool inputs as what they are.
      const bash = page.locator('.entry.tool', { hasText: 'ls -la src/server' });
      expect(await bash.locator('pre.cmd').textContent()).toBe('ls -la src/server');
      const edit = page.locator('.entry.tool', { hasText: 'ThreadStartParams' }).first();
      expect(await edit.locator('.path').first().textContent()).toBe(LONG_PATH);
      expect(await edit.locator('.diff .del').allTextContents()).toEqual(['- const b = 2;']);
      expect(await edit.locator('.diff .add').allTextContents()).toEqual(['+ const b = 3;']);
      const patch = page.locator('.entry.tool', { hasText: '/work/patched.txt' });
      expect(await patch.locator('.diff .add').allTextContents()).toEqual(['+ new line']);
      expect(await patch.locator('.diff .del').allTextContents()).toEqual(['- old line']);
      expect(await patch.locator('.diff .hunk').count()).toBe(1);
      const read = page.locator('.entry.tool').nth(3);
      expect(await read.locator('.path').textContent()).toBe(LONG_PATH);
      expect(await read.locator('dl').textContent()).toBe('offset10limit40');

      // The long command in the permission card: all of it, as a command, wrapped inside the card.
      const card = page.locator('.prompt');
      expect(await card.locator('pre.cmd').textContent()).toBe(LONG_COMMAND);
      const fits = await page.evaluate<{ card: number[]; pre: number[] }>(`(() => { const card = document.querySelector('.prompt'), pre = card.querySelector('pre.cmd'); return { card: [card.scrollWidth, card.clientWidth], pre: [pre.scrollWidth, pre.clientWidth] }; })()`);
      expect(fits.card[0], `card ${JSON.stringify(fits)}`).toBeLessThanOrEqual(fits.card[1]!);
      expect(fits.pre[0], `command ${JSON.stringify(fits)}`).toBeLessThanOrEqual(fits.pre[1]!);
      // Its last word can be scrolled to and seen inside the card.
      await page.evaluate(`(() => { const pre = document.querySelector('.prompt pre.cmd'); pre.scrollTop = pre.scrollHeight; })()`);
      expect(await card.locator('pre.cmd').isVisible()).toBe(true);

      expect(await overflowingCards(page)).toEqual([]);
      expect(await pageOverflow(page)).toBeLessThanOrEqual(0);

      // The inspector: folded behind a toggle on the phone, open at the desk.
      if (mobile) {
        expect(await page.isVisible('#chart')).toBe(false);
        expect(await page.isVisible('#inspector-toggle')).toBe(true);
        await page.screenshot({ path: path.join(OUT, `server-page-${name}-390x844.png`) });
        await page.locator('.prompt').scrollIntoViewIfNeeded();
        await page.screenshot({ path: path.join(OUT, `server-page-${name}-prompt-390x844.png`) });
        await page.click('#inspector-toggle');
        await page.waitForSelector('#chart svg', { state: 'visible' });
        expect(await page.getAttribute('#inspector-toggle', 'aria-expanded')).toBe('true');
        expect(await activeStates(page)).toContain('session.remote.running');
        expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: path.join(OUT, `server-page-${name}-full-390x844.png`), fullPage: true });
      } else {
        expect(await page.isVisible('#chart')).toBe(true);
        expect(await page.isVisible('#inspector-toggle')).toBe(false);
        await page.screenshot({ path: path.join(OUT, `server-page-${name}-1280x800.png`) });
      }
      expect(problems).toEqual([]);
      await page.close();
    }

    // Allowed from the card; the turn finishes.
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await openSession(page, sessionId);
    await (await page.waitForSelector('.prompt button.allow')).click();
    await page.waitForSelector('.entry[data-type="turn_complete"]');
    await page.close();
  }, 240_000);

  it('highlights the current state from the first frame when the chart arrives after the stream greeted', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    // Hold the chart until the stream has said where the session stands.
    let releaseChart!: () => void;
    const chartHeld = new Promise<void>((resolve) => (releaseChart = resolve));
    await page.route('**/api/diagram.svg', async (route) => {
      await chartHeld;
      await route.continue();
    });
    await page.goto(server.pageUrl);
    await page.click(`#session-list li[data-id="${sessionId}"]`);
    await page.waitForSelector('.entry[data-type="turn_complete"]');
    // (Polled from here: the page's CSP refuses the eval that waitForFunction's polling needs.)
    await expect.poll(() => page.textContent('#chart-state'), { timeout: 20_000 }).toContain('idle');
    expect(await page.$('#chart svg')).toBeNull();
    releaseChart();
    // No new event happens in the session: the state known already is highlighted as the chart lands.
    await page.waitForSelector('#chart svg');
    expect(await activeStates(page)).toEqual(expect.arrayContaining(['session.remote', 'session.remote.idle']));
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('runs nothing from payloads in Markdown, tool inputs, paths and names, even with the CSP off', async () => {
    // A server of its own: its agent plays the payload turn.
    const xssServer = await startTestServer({ turns: [XSS_TURN] }, { presenceGraceMs: 200 });
    try {
      await xssPage(xssServer);
    } finally {
      await xssServer.stop();
    }
  }, 180_000);
});

async function xssPage(server: TestServer): Promise<void> {
  {
    const id = await server.newSession();
    const sent = await server.api('POST', `/api/sessions/${id}/messages`, { text: '<img src=x onerror=window.__xss=40> and [x](javascript:window.__xss=41)', localId: 'xss-1' });
    expect(sent.status).toBe(200);
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems = watchProblems(page, server.url);
    await openSession(page, id, server);
    await page.waitForSelector('.prompt button.allow');
    await page.waitForSelector('.entry.tool >> nth=2');
    await page.waitForSelector('.entry[data-type="tool_result"]');
    // Click every link the transcript has (a javascript: one would run now).
    for (const link of await page.locator('#transcript a').all()) await link.click({ modifiers: ['Control'] }).catch(() => undefined);
    await page.waitForTimeout(300); // an image's onerror would have fired by now (no fixed wait gates a pass: the checks below do)

    expect(await page.evaluate('window.__xss')).toBeUndefined();
    const created = await page.evaluate<string[]>(`[...document.querySelectorAll('#transcript *, #prompts *')]
      .filter((e) => /^(SCRIPT|IMG|IFRAME|SVG|DETAILS|OBJECT|EMBED)$/i.test(e.tagName) || [...e.attributes].some((a) => /^on/i.test(a.name)))
      .map((e) => e.outerHTML.slice(0, 120))`);
    expect(created).toEqual([]);
    const hrefs = await page.evaluate<string[]>(`[...document.querySelectorAll('#transcript a[href], #prompts a[href]')].map((a) => a.getAttribute('href'))`);
    // The image is not loaded: its link stays (a web link), like the one safe link.
    expect(hrefs).toEqual(['https://example.org/x.png', 'https://example.org/safe']);
    // The payloads are shown as the text they are.
    const text = (await page.textContent('#transcript'))!;
    expect(text).toContain('<script>window.__xss=8</script>');
    expect(text).toContain('<img src=x onerror="window.__xss=7">');
    expect(text).toContain('<img src=x onerror=window.__xss=40>');
    expect(await page.locator('.prompt pre.cmd').textContent()).toBe('<script>window.__xss=30</script>');
    expect(await page.locator('.prompt dd').textContent()).toBe('<img src=x onerror=window.__xss=31>');
    expect(await page.locator('.prompt strong').textContent()).toBe('Allow <img src=x onerror=window.__xss=29>?');
    expect(await overflowingCards(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'server-page-xss-390x844.png'), fullPage: true });
    expect(problems).toEqual([]);
    await context.close();
  }
}
