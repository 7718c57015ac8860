/**
 * `watchSessionTrees()`: a tree file written under `<dataDir>/trees/` (also when the directory did
 * not exist when the watch began) wakes `onChange`, a burst of writes once (debounced); after
 * `close()` nothing is called and no fs watcher is left open.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchSessionTrees } from '../../src/index.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-tree-watch-'));
});
afterEach(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await settle(10);
  }
}

describe('watchSessionTrees', () => {
  it('sees a tree directory that appears later, debounces a burst, and leaves nothing open after close', async () => {
    const before = watchers();
    let calls = 0;
    const watch = watchSessionTrees({ dataDir, onChange: () => calls++, debounceMs: 40, pollIntervalMs: 50 });
    await settle(100);
    expect(calls).toBe(0);
    await fs.mkdir(path.join(dataDir, 'trees'));
    await fs.writeFile(path.join(dataDir, 'trees', 'root.json'), '{}');
    await until(() => calls === 1);
    await until(() => watchers() > before); // the poll found the directory and watches it now

    const settled = calls;
    for (let i = 0; i < 5; i++) await fs.writeFile(path.join(dataDir, 'trees', 'root.json'), `{"n":${i}}`);
    await until(() => calls > settled);
    await settle(150);
    expect(calls - settled).toBeLessThanOrEqual(2); // one for the burst (a poll may add one more)

    watch.close();
    const closedAt = calls;
    await fs.writeFile(path.join(dataDir, 'trees', 'other.json'), '{}');
    await settle(200);
    expect(calls).toBe(closedAt);
    expect(watchers()).toBe(before);
  });

  it('a rename into the directory (how trees are written durably) is a change', async () => {
    await fs.mkdir(path.join(dataDir, 'trees'));
    let calls = 0;
    const watch = watchSessionTrees({ dataDir, onChange: () => calls++, debounceMs: 20, pollIntervalMs: 10_000 });
    await settle(50);
    await fs.writeFile(path.join(dataDir, 'trees', '.tmp'), '{"a":1}');
    await fs.rename(path.join(dataDir, 'trees', '.tmp'), path.join(dataDir, 'trees', 'root.json'));
    await until(() => calls > 0); // by fs.watch alone: the poll would take 10 s
    watch.close();
  });
});
