/**
 * serve.json (src/cli/serve-file.ts): how `ase run --mode local` and `ase attach` find the live
 * `ase serve` of a data dir, and ignore a stale one: a dead pid, or a pid reused by another process
 * (its start time differs), or a token file that is gone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findLiveServer, processStartTime, readServeFile, removeServeFile, serveFilePath, writeServeFile } from '../../src/cli/serve-file.js';

describe('serve.json', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ase-serve-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const tokenFile = () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'a-token-of-enough-length\n', { mode: 0o600 });
    return file;
  };

  it('is written 0600 with this process, found while it lives, and removed only by its writer', async () => {
    await writeServeFile(dir, { url: 'http://127.0.0.1:9', tokenFile: tokenFile() });
    expect(statSync(serveFilePath(dir)).mode & 0o777).toBe(0o600);
    const entry = await readServeFile(dir);
    expect(entry).toMatchObject({ url: 'http://127.0.0.1:9', pid: process.pid, startTime: processStartTime(process.pid) });
    expect(await findLiveServer(dir)).toEqual({ url: 'http://127.0.0.1:9', token: 'a-token-of-enough-length', pid: process.pid, subAgents: false });
    // `ase serve --sub-agents` says so: `ase run --mode local --sub-agents` goes through it only then.
    await writeServeFile(dir, { url: 'http://127.0.0.1:9', tokenFile: tokenFile(), subAgents: true });
    expect(await findLiveServer(dir)).toMatchObject({ subAgents: true });
    await writeServeFile(dir, { url: 'http://127.0.0.1:9', tokenFile: tokenFile() });

    // Another process's file is not ours to remove.
    writeFileSync(serveFilePath(dir), JSON.stringify({ ...entry, pid: 1 }));
    await removeServeFile(dir);
    expect(await readServeFile(dir)).toMatchObject({ pid: 1 });
    writeFileSync(serveFilePath(dir), JSON.stringify(entry));
    await removeServeFile(dir);
    expect(await readServeFile(dir)).toBeUndefined();
  });

  it('ignores a dead pid, a reused pid (another start time), a missing token file and garbage', async () => {
    const dead = spawnSync('true').pid!;
    const file = tokenFile();
    writeFileSync(serveFilePath(dir), JSON.stringify({ url: 'http://127.0.0.1:9', pid: dead, startTime: null, tokenFile: file }));
    expect(await findLiveServer(dir)).toBeUndefined();
    // A live pid whose start time is not the recorded one: the pid was reused by another process.
    writeFileSync(serveFilePath(dir), JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid, startTime: '1', tokenFile: file }));
    expect(await findLiveServer(dir)).toBeUndefined();
    writeFileSync(serveFilePath(dir), JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid, startTime: processStartTime(process.pid), tokenFile: join(dir, 'gone') }));
    expect(await findLiveServer(dir)).toBeUndefined();
    writeFileSync(serveFilePath(dir), '{"url": 3');
    expect(await findLiveServer(dir)).toBeUndefined();
    writeFileSync(serveFilePath(dir), JSON.stringify({ url: 'not a url', pid: process.pid, startTime: null, tokenFile: file }));
    expect(await findLiveServer(dir)).toBeUndefined();
  });
});
