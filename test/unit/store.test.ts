import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import type { PersistedSession } from '../../src/events/session-state.js';
import { FileStore, MemoryStore, type SessionStore } from '../../src/runtime/store/index.js';
import { rejection } from '../support/async.js';

function session(overrides: Partial<PersistedSession> = {}): PersistedSession {
  return {
    schemaVersion: 1,
    sessionId: 's1',
    agent: 'fake',
    workDir: '/tmp/work',
    mode: 'remote',
    phase: 'idle',
    gen: 1,
    resumeToken: 'resume-1',
    queue: [{ localId: 'q1', text: 'queued', queuedAt: 10 }],
    requests: { r1: { tool: 'Bash', input: { command: 'ls' }, gen: 1, createdAt: 5 } },
    completed: { r0: { status: 'approved', decidedAt: 4, gen: 1 } },
    usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, costUsd: 0.5, turns: 1 },
    deliveredIds: ['m1'],
    updatedAt: 100,
    ...overrides,
  };
}

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-store-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe.each([
  ['MemoryStore', (): SessionStore => new MemoryStore()],
  ['FileStore', (): SessionStore => new FileStore({ dir: path.join(tmp, 'sessions') })],
])('%s', (_name, makeStore) => {
  it('round-trips a saved session', async () => {
    const store = makeStore();
    expect(await store.load('s1')).toBeUndefined();
    const state = session();
    expect(await store.save('s1', state, 0)).toEqual({ ok: true, version: 1 });
    expect(await store.load('s1')).toEqual({ version: 1, state });
    const next = session({ phase: 'running', updatedAt: 200 });
    expect(await store.save('s1', next, 1)).toEqual({ ok: true, version: 2 });
    expect(await store.load('s1')).toEqual({ version: 2, state: next });
  });

  it('keeps its own copy of the state', async () => {
    const store = makeStore();
    const state = session();
    await store.save('s1', state, 0);
    state.queue.push({ localId: 'q2', text: 'later', queuedAt: 11 });
    const loaded = await store.load('s1');
    expect(loaded?.state.queue).toHaveLength(1);
    loaded!.state.deliveredIds.push('mutated');
    expect((await store.load('s1'))?.state.deliveredIds).toEqual(['m1']);
  });

  it('reports a conflict when a second writer expects the session not to exist', async () => {
    const store = makeStore();
    const first = session({ updatedAt: 1 });
    expect(await store.save('s1', first, 0)).toEqual({ ok: true, version: 1 });
    const result = await store.save('s1', session({ updatedAt: 2 }), 0);
    expect(result).toEqual({ ok: false, version: 1, stored: first });
    expect(await store.load('s1')).toEqual({ version: 1, state: first });
  });

  it('writes nothing on a wrong expected version', async () => {
    const store = makeStore();
    const first = session({ updatedAt: 1 });
    await store.save('s1', first, 0);
    expect(await store.save('s1', session({ updatedAt: 2 }), 5)).toEqual({ ok: false, version: 1, stored: first });
    expect(await store.save('s1', session({ updatedAt: 3 }), 2)).toMatchObject({ ok: false, version: 1 });
    // Nonexistent session, non-zero expectation: still a conflict, and still nothing written.
    expect(await store.save('other', session({ sessionId: 'other' }), 1)).toEqual({ ok: false, version: 0 });
    expect(await store.load('s1')).toEqual({ version: 1, state: first });
    expect(await store.load('other')).toBeUndefined();
  });

  it('lets exactly one of 20 concurrent saves with the same expected version win', async () => {
    const store = makeStore();
    await store.save('s1', session({ updatedAt: 0 }), 0);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.save('s1', session({ updatedAt: i + 1 }), 1)));
    const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(results[winners[0]!]).toEqual({ ok: true, version: 2 });
    for (const r of results) if (!r.ok) expect(r.version).toBe(2);
    expect(await store.load('s1')).toEqual({ version: 2, state: session({ updatedAt: winners[0]! + 1 }) });
  });

  it('lets exactly one of 20 concurrent first saves win', async () => {
    const store = makeStore();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.save('s1', session({ updatedAt: i }), 0)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect((await store.load('s1'))?.version).toBe(1);
  });

  it('lists and deletes sessions', async () => {
    const store = makeStore();
    expect(await store.list()).toEqual([]);
    await store.save('a', session({ sessionId: 'a' }), 0);
    await store.save('b', session({ sessionId: 'b' }), 0);
    expect((await store.list()).sort()).toEqual(['a', 'b']);
    await store.delete('a');
    expect(await store.list()).toEqual(['b']);
    expect(await store.load('a')).toBeUndefined();
    await store.delete('a'); // Deleting what is gone is fine.
    await store.delete('never-saved');
    // After a delete the id starts over at version 0.
    expect(await store.save('a', session({ sessionId: 'a' }), 0)).toEqual({ ok: true, version: 1 });
  });

  it('rejects a negative or fractional expected version', async () => {
    const store = makeStore();
    for (const v of [-1, 0.5, Number.NaN]) {
      expect(isAseError(await rejection(store.save('s1', session(), v)), 'INVALID_INPUT')).toBe(true);
    }
    expect(await store.load('s1')).toBeUndefined();
  });
});

describe('FileStore', () => {
  const dir = (): string => path.join(tmp, 'sessions');
  const file = (id: string): string => path.join(dir(), `${id}.json`);

  it('rejects session ids that could escape the directory', async () => {
    const store = new FileStore({ dir: dir() });
    for (const id of ['../x', 'a/b', '', '..', '.', 'a\\b', 'x'.repeat(129), 'a b', 'nul\0']) {
      expect(isAseError(await rejection(store.save(id, session(), 0)), 'INVALID_INPUT'), `save ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(store.load(id)), 'INVALID_INPUT'), `load ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(store.delete(id)), 'INVALID_INPUT'), `delete ${JSON.stringify(id)}`).toBe(true);
    }
    // Nothing was created, in the store dir or next to it.
    expect(await fs.readdir(tmp)).toEqual([]);
    expect(await store.save('x'.repeat(128), session(), 0)).toEqual({ ok: true, version: 1 });
    expect(await store.save('a.b_c-D9', session(), 0)).toEqual({ ok: true, version: 1 });
  });

  it('writes a JSON file holding version and state', async () => {
    const store = new FileStore({ dir: dir() });
    const state = session();
    await store.save('s1', state, 0);
    await store.save('s1', state, 1);
    expect(JSON.parse(await fs.readFile(file('s1'), 'utf8'))).toEqual({ version: 2, state });
  });

  it('leaves no temp or lock files behind', async () => {
    const store = new FileStore({ dir: dir() });
    await store.save('s1', session(), 0);
    await Promise.all(Array.from({ length: 10 }, () => store.save('s1', session(), 1)));
    await store.save('s2', session({ sessionId: 's2' }), 0);
    await store.delete('s2');
    expect((await fs.readdir(dir())).sort()).toEqual(['s1.json']);
  });

  it('throws STORE_CORRUPT for a file that is not JSON', async () => {
    const store = new FileStore({ dir: dir() });
    await fs.mkdir(dir(), { recursive: true });
    await fs.writeFile(file('s1'), '{"version": 1, "state": {');
    const error = await rejection(store.load('s1'));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain(file('s1'));
    // A save cannot compare against an unreadable version either.
    expect(isAseError(await rejection(store.save('s1', session(), 0)), 'STORE_CORRUPT')).toBe(true);
  });

  it('throws STORE_CORRUPT for JSON that fails the schema', async () => {
    const store = new FileStore({ dir: dir() });
    await fs.mkdir(dir(), { recursive: true });
    await fs.writeFile(file('s1'), JSON.stringify({ version: 3, state: { ...session(), phase: 'dancing' } }));
    const error = await rejection(store.load('s1'));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain(file('s1'));
    // The version is readable, so a save reports it (without a stored state) and a writer naming it can repair.
    expect(await store.save('s1', session(), 0)).toEqual({ ok: false, version: 3 });
    expect(await store.save('s1', session(), 3)).toEqual({ ok: true, version: 4 });
    expect(await store.load('s1')).toEqual({ version: 4, state: session() });

    await fs.writeFile(file('s2'), JSON.stringify({ state: session() }));
    expect(isAseError(await rejection(store.load('s2')), 'STORE_CORRUPT')).toBe(true);
  });

  it('refuses to save a state that fails the schema', async () => {
    const store = new FileStore({ dir: dir() });
    const bad = { ...session(), gen: -1 } as PersistedSession;
    expect(isAseError(await rejection(store.save('s1', bad, 0)), 'INVALID_INPUT')).toBe(true);
    expect(await store.load('s1')).toBeUndefined();
  });

  it('ignores temp, lock and foreign files when listing', async () => {
    const store = new FileStore({ dir: dir() });
    await store.save('s1', session(), 0);
    await fs.writeFile(path.join(dir(), '.s1.123.abc.tmp'), '');
    await fs.writeFile(path.join(dir(), 's9.lock'), '');
    await fs.writeFile(path.join(dir(), 'notes.txt'), '');
    expect(await store.list()).toEqual(['s1']);
  });

  it('breaks a stale lock file', async () => {
    const store = new FileStore({ dir: dir(), lockTimeoutMs: 200 });
    await fs.mkdir(dir(), { recursive: true });
    const lock = path.join(dir(), 's1.lock');
    await fs.writeFile(lock, '999999 dead\n');
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(lock, old, old);
    expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
    await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('breaks at once a fresh lock whose holder, a process of this host, is gone (a writer killed mid-save)', async () => {
    const store = new FileStore({ dir: dir(), lockTimeoutMs: 150 });
    await fs.mkdir(dir(), { recursive: true });
    const lock = path.join(dir(), 's1.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid!; // exited: its pid is free
    await fs.writeFile(lock, `${dead} ${os.hostname()} 0123456789abcdef\n`);
    expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
    await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });

    // A live holder of this host, and a dead pid of another host, are waited for (and time out here).
    for (const holder of [`${process.ppid} ${os.hostname()} 0123456789abcdef\n`, `${dead} another-host 0123456789abcdef\n`]) {
      await fs.writeFile(lock, holder);
      expect(isAseError(await rejection(store.save('s1', session(), 1)), 'STORE_IO')).toBe(true);
      expect(await fs.readFile(lock, 'utf8')).toBe(holder);
    }
  });

  it('waits for a live lock and fails with STORE_IO when it is not released', async () => {
    const store = new FileStore({ dir: dir(), lockTimeoutMs: 150 });
    await fs.mkdir(dir(), { recursive: true });
    const lock = path.join(dir(), 's1.lock');
    await fs.writeFile(lock, 'other process\n');
    const started = Date.now();
    expect(isAseError(await rejection(store.save('s1', session(), 0)), 'STORE_IO')).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await store.load('s1')).toBeUndefined();
    // Someone else's lock is left alone.
    expect(await fs.readFile(lock, 'utf8')).toBe('other process\n');

    // Released while waiting: the save goes through.
    const slow = new FileStore({ dir: dir(), lockTimeoutMs: 2000 });
    const pending = slow.save('s1', session(), 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fs.rm(lock);
    expect(await pending).toEqual({ ok: true, version: 1 });
  });

  it('keeps compare-and-set across two instances on one directory', async () => {
    const a = new FileStore({ dir: dir() });
    const b = new FileStore({ dir: dir() });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).save('s1', session({ updatedAt: i }), 0)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('reports STORE_IO when the directory cannot be created', async () => {
    const blocker = path.join(tmp, 'blocker');
    await fs.writeFile(blocker, '');
    const store = new FileStore({ dir: path.join(blocker, 'sessions') });
    const error = await rejection(store.save('s1', session(), 0));
    expect(isAseError(error, 'STORE_IO')).toBe(true);
    expect((error as Error).cause).toBeDefined();
  });
});
