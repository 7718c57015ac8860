/**
 * `ase serve` stops cleanly on SIGTERM from the moment it says where it is: a supervisor (systemd, a
 * test, a script) that sends SIGTERM as soon as the page URL is printed gets exit 0 and a data dir
 * with no serve.json left, never a process killed with its sessions running. Its signal handlers
 * used to come only after the token and serve.json files were written, a few milliseconds later.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

let tmp: string;
beforeAll(async () => {
  await ensureBuiltCli();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-serve-signal-'));
}, 180_000);
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** Starts `ase serve` and sends SIGTERM in the very callback that sees its "open" line. */
async function termAtOpen(dataDir: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  const child = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: REPO_ROOT,
    env: { ...process.env, HOME: tmp, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const seen = out.includes('ase serve: open ');
    out += chunk.toString();
    if (!seen && out.includes('ase serve: open ')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { ...exit, err };
}

it('SIGTERM as soon as the page URL is printed: exit 0, sessions stopped, no serve.json left (5 times)', { timeout: 120_000 }, async () => {
  for (let i = 0; i < 5; i++) {
    const dataDir = path.join(tmp, `data-${i}`);
    const result = await termAtOpen(dataDir);
    expect(result, `run ${i}: ${result.err}`).toMatchObject({ code: 0, signal: null });
    expect(result.err).toContain('ase serve: stopping sessions...');
    await expect(fs.stat(path.join(dataDir, 'serve.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  }
});
