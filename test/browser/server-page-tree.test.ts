/**
 * The page's session-tree controls in a real browser (Debian's Chromium via playwright-core): a
 * sub-agent session is listed indented under its parent, an orphan at the top level; the root's
 * view shows the tree with its focus, spawns a sub-agent ("New sub-agent"), enters a child (the
 * page follows its own move) and exits back; a focus moved by another client is a "focus moved"
 * notice with a link to follow, not a jump; a refused spawn is shown like the page's other errors;
 * and nothing breaks the page's CSP. Screenshots go to test-output/ (gitignored).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { REPO_ROOT } from '../support/built-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const OUT = path.join(REPO_ROOT, 'test-output');

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer({}, { presenceGraceMs: 200 });
  browser = await launchChromium();
  await fs.mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function spawn(parentId: string): Promise<string> {
  const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp, parentId });
  expect(created.status).toBe(201);
  return created.body.sessionId as string;
}
const focusOf = async (id: string) => (await server.api('GET', `/api/sessions/${id}/tree`)).body.focus as string;
const title = (page: Page) => page.textContent('#session-title');
const listed = (page: Page) =>
  page.evaluate<{ id: string; depth: string; parent: string | null; left: number }[]>(
    `[...document.querySelectorAll('#session-list li')].map((li) => ({ id: li.dataset.id, depth: li.dataset.depth, parent: li.dataset.parent || null, left: li.getBoundingClientRect().left }))`,
  );

describe('the session tree on the page', () => {
  it('lists children under their parent, moves the focus in and out, and tells of a focus moved elsewhere', async () => {
    const root = await server.newSession();
    const child = await spawn(root);
    const orphan = await spawn('nobody-here');

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // The refused spawn below is a 409 the page shows; Chromium also logs the failed request.
      if (message.type() === 'error' && !message.text().includes('status of 409')) problems.push(`console: ${message.text()}`);
    });
    await page.goto(server.pageUrl);

    // The list: the child right under its parent, indented; the orphan (its parent unknown) at the top level.
    await page.waitForSelector(`#session-list li[data-id="${child}"]`);
    const rows = await listed(page);
    const at = (id: string) => rows.findIndex((r) => r.id === id);
    expect(at(child)).toBe(at(root) + 1);
    expect(rows[at(child)]).toMatchObject({ depth: '1', parent: root });
    expect(rows[at(child)]!.left).toBeGreaterThan(rows[at(root)]!.left);
    expect(rows[at(orphan)]).toMatchObject({ depth: '0', parent: null, left: rows[at(root)]!.left });
    expect(await page.getAttribute(`#session-list li[data-id="${child}"]`, 'class')).toContain('sub');

    // The root's view: the tree line with the root as the focus and Enter on the child; no Exit (a root has no parent).
    await page.click(`#session-list li[data-id="${root}"]`);
    await page.waitForSelector(`#tree .node.focus.viewed[data-id="${root}"]`);
    expect(await page.textContent(`#tree .node[data-id="${root}"]`)).toContain('(focus)');
    await page.waitForSelector(`#tree .node[data-id="${child}"][data-state="active"] button.enter`);
    expect(await page.isHidden('#tree-exit')).toBe(true);
    expect(await page.isHidden('#focus-moved')).toBe(true);

    // "New sub-agent": a second child of the root, in the tree (tree frame) and in the list under the root.
    await page.click('#sub-agent');
    await expect.poll(() => page.locator('#tree .node').count(), { timeout: 10_000 }).toBe(3);
    const spawned = (await page.evaluate<string[]>(`[...document.querySelectorAll('#tree .node')].map((n) => n.dataset.id)`)).find((id) => id !== root && id !== child)!;
    expect((await server.api('GET', `/api/sessions/${spawned}/tree`)).body.nodes[spawned]).toMatchObject({ parentId: root, state: 'active' });
    await page.waitForSelector(`#session-list li[data-id="${spawned}"][data-parent="${root}"]`);
    await page.waitForSelector(`#tree .node[data-id="${spawned}"] button.enter`);

    // Enter on the child: the focus moves there and the page follows its own move.
    await page.click(`#tree .node[data-id="${child}"] button.enter`);
    await expect.poll(() => title(page), { timeout: 10_000 }).toBe(child);
    await page.waitForSelector(`#tree .node.focus.viewed[data-id="${child}"]`);
    await page.waitForSelector(`#tree .node[data-id="${root}"][data-state="suspended"]`);
    expect(await focusOf(root)).toBe(child);
    expect(await page.isHidden('#focus-moved')).toBe(true);
    await page.screenshot({ path: path.join(OUT, 'server-page-tree-entered.png'), fullPage: true });

    // Exit to parent: the focus is back at the root, and so is the page.
    await page.click('#tree-exit');
    await expect.poll(() => title(page), { timeout: 10_000 }).toBe(root);
    await page.waitForSelector(`#tree .node.focus.viewed[data-id="${root}"]`);
    expect(await focusOf(root)).toBe(root);

    // Another client enters the child: the page stays on the root and offers to follow.
    const moved = await server.api('POST', `/api/sessions/${child}/tree/enter`, {});
    expect(moved).toMatchObject({ status: 200, body: { focus: child } });
    await page.waitForSelector('#focus-moved:not([hidden])', { timeout: 10_000 });
    expect(await page.textContent('#focus-follow')).toBe(`focus moved to ${child.slice(0, 8)} \u2014 follow`);
    await page.waitForSelector(`#tree .node.focus[data-id="${child}"]`);
    expect(await title(page)).toBe(root);
    await page.screenshot({ path: path.join(OUT, 'server-page-tree-focus-moved.png'), fullPage: true });
    await page.click('#focus-follow');
    await expect.poll(() => title(page), { timeout: 10_000 }).toBe(child);
    await page.waitForSelector(`#tree .node.focus.viewed[data-id="${child}"]`);
    expect(await page.isHidden('#focus-moved')).toBe(true);
    expect(await page.isVisible('#tree-exit')).toBe(true);

    // The focus moved back by another client while the child is viewed: the notice again, and Exit is gone.
    expect((await server.api('POST', `/api/sessions/${child}/tree/exit`, {})).status).toBe(200);
    await page.waitForSelector('#focus-moved:not([hidden])', { timeout: 10_000 });
    expect(await page.textContent('#focus-follow')).toBe(`focus moved to ${root.slice(0, 8)} \u2014 follow`);
    expect(await page.isHidden('#tree-exit')).toBe(true);

    // A refused spawn (a sub-agent no tree holds cannot start one): shown like the page's other errors, nothing created.
    await page.click(`#session-list li[data-id="${orphan}"]`);
    await expect.poll(() => title(page)).toBe(orphan);
    await expect.poll(() => page.textContent('#status'), { timeout: 10_000 }).not.toBe('');
    expect(await page.isHidden('#tree')).toBe(true);
    const before = (await server.api('GET', '/api/sessions')).body.sessions.length;
    await page.click('#sub-agent');
    await expect.poll(() => page.textContent('#status'), { timeout: 10_000 }).toMatch(/^error: .*tree/i);
    expect((await server.api('GET', '/api/sessions')).body.sessions.length).toBe(before);

    expect(problems).toEqual([]);
    await page.close();
  });
});
