/**
 * The session stores: the shared conformance suite (test/support/store-conformance.ts) for
 * MemoryStore and FileStore, then what only the FileStore does: its files, corrupt data, and the
 * locks and leases a dead process leaves (taken at once on this host; a reused pid is told apart).
 * Real processes SIGKILLed inside a lock or while owning a session: test/integration/ownership.test.ts.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import type { PersistedSession } from '../../src/events/session-state.js';
import { FileStore, MemoryStore } from '../../src/effects/store/index.js';
import { lockHolderPrefix } from '../../src/effects/store/file-store.js';
import { processStartTime } from '../../src/engines/transport/proc.js';
import { currentProcess } from '../../src/effects/store/process-identity.js';
import { rejection } from '../support/async.js';
import { describeStoreConformance, session } from '../support/store-conformance.js';

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-store-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

// Every holder of a MemoryStore lives in its process: "another host" is the same store.
describeStoreConformance('MemoryStore', (now) => new MemoryStore({ now }), (store) => store);
// Another host id on the same dir is a separate owner (heartbeat and held leases), as another process is.
describeStoreConformance(
  'FileStore',
  (now) => new FileStore({ dir: path.join(tmp, 'sessions'), now }),
  (_store, now) => new FileStore({ dir: path.join(tmp, 'sessions'), hostId: 'another-host', now }),
);

/** A pid that just died (its process exited and was reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('FileStore', () => {
  const dir = (): string => path.join(tmp, 'sessions');
  const file = (id: string): string => path.join(dir(), `${id}.json`);
  const lockDir = (id: string): string => path.join(dir(), '.locks', id);
  const me = currentProcess();

  /** Plants a lock file as the named holder would have left it. */
  async function plantLock(id: string, holder: { host?: string; bootId?: string; pid: number; startTime: string }): Promise<string> {
    await fs.mkdir(lockDir(id), { recursive: true });
    const name = `${lockHolderPrefix({ host: holder.host ?? me.host, bootId: holder.bootId ?? me.bootId, pid: holder.pid, startTime: holder.startTime })}planted`;
    await fs.writeFile(path.join(lockDir(id), name), '');
    return path.join(lockDir(id), name);
  }

  /** Plants a lease as the named owner would have left it: valid for another minute. */
  async function plantLease(id: string, owner: Record<string, unknown>, fence = 4): Promise<void> {
    await fs.mkdir(dir(), { recursive: true });
    await fs.writeFile(path.join(dir(), `${id}.lease`), JSON.stringify({ fence, owner, expiresAt: Date.now() + 60_000, ttlMs: 60_000 }));
  }

  it('rejects session ids that could escape the directory', async () => {
    const store = new FileStore({ dir: dir() });
    for (const id of ['../x', 'a/b', '', '..', '.', 'a\\b', 'x'.repeat(129), 'a b', 'nul\0', '.hidden', '....', '.s1.json']) {
      expect(isAseError(await rejection(store.save(id, session({ sessionId: id }), 0)), 'INVALID_INPUT'), `save ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(store.load(id)), 'INVALID_INPUT'), `load ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(store.delete(id)), 'INVALID_INPUT'), `delete ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(store.acquire(id, { ttlMs: 1000 })), 'INVALID_INPUT'), `acquire ${JSON.stringify(id)}`).toBe(true);
    }
    // Nothing was created, in the store dir or next to it.
    expect(await fs.readdir(tmp)).toEqual([]);
    expect(await store.save('x'.repeat(128), session({ sessionId: 'x'.repeat(128) }), 0)).toEqual({ ok: true, version: 1 });
    expect(await store.save('a.b_c-D9', session({ sessionId: 'a.b_c-D9' }), 0)).toEqual({ ok: true, version: 1 });
  });

  it('removes the temp files a host killed mid-write left, when the session is next opened, and only that session\'s', async () => {
    const store = new FileStore({ dir: dir() });
    expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
    // What a host killed between writing its temp file and renaming it leaves (the name #writeAtomic gives).
    const pid = await deadPid();
    const leftovers = [`.s1.json.${pid}.0123456789ab.tmp`, `.s1.lease.${pid}.ba9876543210.tmp`];
    const others = [`.s1.json.json.${pid}.0123456789ab.tmp`, `.s2.json.${pid}.0123456789ab.tmp`, 'notes.tmp'];
    for (const name of [...leftovers, ...others]) await fs.writeFile(path.join(dir(), name), '{"version": 9, "sta');
    await store.acquire('s1', { ttlMs: 5_000 });
    const names = await fs.readdir(dir());
    for (const name of leftovers) expect(names).not.toContain(name);
    for (const name of others) expect(names).toContain(name);
    expect((await store.load('s1'))?.version).toBe(1);
  });

  it('writes a JSON file holding version and state, and the lease next to it', async () => {
    const store = new FileStore({ dir: dir() });
    const state = session();
    await store.save('s1', state, 0);
    await store.save('s1', state, 1);
    expect(JSON.parse(await fs.readFile(file('s1'), 'utf8'))).toEqual({ version: 2, state });
    const lease = await store.acquire('s1', { ttlMs: 5_000 });
    expect(JSON.parse(await fs.readFile(path.join(dir(), 's1.lease'), 'utf8'))).toEqual({
      fence: 1,
      owner: lease.owner,
      expiresAt: lease.expiresAt,
      ttlMs: 5_000,
    });
    expect(lease.owner).toEqual({ host: os.hostname(), pid: process.pid, startTime: me.startTime, bootId: me.bootId });
  });

  it('leaves no temp or lock files behind', async () => {
    const store = new FileStore({ dir: dir() });
    await store.save('s1', session(), 0);
    await Promise.all(Array.from({ length: 10 }, () => store.save('s1', session(), 1)));
    const lease = await store.acquire('s1', { ttlMs: 1_000 });
    await store.renew(lease);
    await store.save('s2', session({ sessionId: 's2' }), 0);
    await store.delete('s2');
    expect((await fs.readdir(dir())).sort()).toEqual(['.locks', '.owners', 's1.json', 's1.lease']);
    expect(await fs.readdir(path.join(dir(), '.owners'))).toEqual([`${lockHolderPrefix(me)}json`]); // the heartbeat, no temp file
    expect(await fs.readdir(lockDir('s1'))).toEqual([]);
    expect(await fs.readdir(path.join(dir(), '.locks'))).toEqual(['s1']); // s2's went with it
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

    await fs.writeFile(file('s2'), JSON.stringify({ state: session({ sessionId: 's2' }) }));
    expect(isAseError(await rejection(store.load('s2')), 'STORE_CORRUPT')).toBe(true);
  });

  it('a state file copied under another session id is STORE_CORRUPT, never adopted', async () => {
    const store = new FileStore({ dir: dir() });
    await store.save('s1', session({ resumeToken: 'tok-of-s1' }), 0);
    await fs.copyFile(file('s1'), file('s2'));
    const error = await rejection(store.load('s2'));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toBe(`${file('s2')}: holds session "s1", not "s2"`);
  });

  it('throws STORE_CORRUPT for a lease file that is not a lease', async () => {
    const store = new FileStore({ dir: dir() });
    await fs.mkdir(dir(), { recursive: true });
    await fs.writeFile(path.join(dir(), 's1.lease'), JSON.stringify({ fence: 'x' }));
    expect(isAseError(await rejection(store.acquire('s1', { ttlMs: 1_000 })), 'STORE_CORRUPT')).toBe(true);
  });

  it('a fenced save reads the lease and the state at once, and judges the lease first', async () => {
    const store = new FileStore({ dir: dir() });
    const lease = await store.acquire('s1', { ttlMs: 60_000 });
    expect(await store.save('s1', session(), 0, lease.fence)).toEqual({ ok: true, version: 1 });
    // Another host took the session and the state file is unreadable: LEASE_LOST, as when the reads were one after the other.
    const taken = await new FileStore({ dir: dir(), hostId: 'another-host' }).acquire('s1', { ttlMs: 60_000, force: true });
    await fs.writeFile(file('s1'), '{"version": 1, "state": {');
    expect(isAseError(await rejection(store.save('s1', session(), 1, lease.fence)), 'LEASE_LOST')).toBe(true);
    // Both files broken: the lease's error.
    await fs.writeFile(path.join(dir(), 's1.lease'), JSON.stringify({ fence: 'x' }));
    const error = await rejection(store.save('s1', session(), 1, taken.fence));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain('s1.lease');
    // Nothing was written, and no lock or temp file is left behind.
    expect(await fs.readFile(file('s1'), 'utf8')).toBe('{"version": 1, "state": {');
    expect(await fs.readdir(lockDir('s1'))).toEqual([]);
    expect((await fs.readdir(dir())).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses to save a state that fails the schema', async () => {
    const store = new FileStore({ dir: dir() });
    const bad = { ...session(), gen: -1 } as PersistedSession;
    expect(isAseError(await rejection(store.save('s1', bad, 0)), 'INVALID_INPUT')).toBe(true);
    expect(await store.load('s1')).toBeUndefined();
  });

  it('ignores temp, lock, lease and foreign files when listing', async () => {
    const store = new FileStore({ dir: dir() });
    await store.save('s1', session(), 0);
    await store.acquire('s1', { ttlMs: 1_000 });
    await fs.writeFile(path.join(dir(), '.s1.123.abc.tmp'), '');
    await fs.writeFile(path.join(dir(), 's9.lock'), '');
    await fs.writeFile(path.join(dir(), 'notes.txt'), '');
    expect(await store.list()).toEqual(['s1']);
  });

  describe('locks', () => {
    it("a dead process's lock on this host is removed at once (no waiting for its age)", async () => {
      const store = new FileStore({ dir: dir(), lockTimeoutMs: 5_000 });
      const lock = await plantLock('s1', { pid: await deadPid(), startTime: '12345' });
      const started = Date.now();
      expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('a lock naming a live pid with another start time (the pid was reused) is removed at once', async () => {
      const store = new FileStore({ dir: dir(), lockTimeoutMs: 5_000 });
      const lock = await plantLock('s1', { pid: process.ppid, startTime: `${processStartTime(process.ppid)}9` });
      expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
      await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('a lock from before a reboot is removed at once', async () => {
      const store = new FileStore({ dir: dir(), lockTimeoutMs: 5_000 });
      const lock = await plantLock('s1', { pid: process.ppid, startTime: processStartTime(process.ppid)!, bootId: 'an-earlier-boot' });
      expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
      await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it("a live process's lock is waited for, fails with STORE_IO after lockTimeoutMs, and is left alone", async () => {
      const store = new FileStore({ dir: dir(), lockTimeoutMs: 150 });
      const lock = await plantLock('s1', { pid: process.ppid, startTime: processStartTime(process.ppid)! });
      const started = Date.now();
      const error = await rejection(store.save('s1', session(), 0));
      expect(isAseError(error, 'STORE_IO')).toBe(true);
      expect((error as Error).message).toContain('timed out after 150 ms waiting for the lock on session "s1"');
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(await store.load('s1')).toBeUndefined();
      await fs.stat(lock); // still there

      // Released while waiting: the save goes through.
      const patient = new FileStore({ dir: dir(), lockTimeoutMs: 2_000 });
      const pending = patient.save('s1', session(), 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await fs.rm(lock);
      expect(await pending).toEqual({ ok: true, version: 1 });
    });

    it("another host's lock counts until it is staleLockMs old", async () => {
      const fresh = await plantLock('s1', { host: 'another-host', pid: 4242, startTime: '1' });
      const store = new FileStore({ dir: dir(), lockTimeoutMs: 100, staleLockMs: 30_000 });
      expect(isAseError(await rejection(store.save('s1', session(), 0)), 'STORE_IO')).toBe(true);
      const old = new Date(Date.now() - 60_000);
      await fs.utimes(fresh, old, old);
      expect(await store.save('s1', session(), 0)).toEqual({ ok: true, version: 1 });
      await expect(fs.stat(fresh)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('keeps compare-and-set across two instances on one directory, and across hosts sharing it', async () => {
      const a = new FileStore({ dir: dir() });
      const b = new FileStore({ dir: dir(), hostId: 'another-host' });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).save('s1', session({ updatedAt: i }), 0)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(await fs.readdir(lockDir('s1'))).toEqual([]);
    });
  });

  describe('leases left by a dead process', () => {
    const owner = (pid: number, startTime: string | undefined, extra: Record<string, unknown> = {}) => ({
      host: os.hostname(),
      pid,
      ...(startTime !== undefined && { startTime }),
      bootId: me.bootId,
      ...extra,
    });

    it('a lease of a dead process on this host is taken at once, with the next fence', async () => {
      await plantLease('s1', owner(await deadPid(), '777'));
      const lease = await new FileStore({ dir: dir() }).acquire('s1', { ttlMs: 1_000 });
      expect(lease).toMatchObject({ fence: 5, owner: { pid: process.pid } });
    });

    it('a reused pid (same pid, another start time) and a pid from another boot are dead too', async () => {
      await plantLease('s1', owner(process.ppid, `${processStartTime(process.ppid)}1`));
      expect((await new FileStore({ dir: dir() }).acquire('s1', { ttlMs: 1_000 })).fence).toBe(5);
      await plantLease('s2', owner(process.ppid, processStartTime(process.ppid), { bootId: 'an-earlier-boot' }));
      expect((await new FileStore({ dir: dir() }).acquire('s2', { ttlMs: 1_000 })).fence).toBe(5);
    });

    it('a live process (pid and start time match) keeps its lease; so does another host until expiry', async () => {
      await plantLease('s1', owner(process.ppid, processStartTime(process.ppid)));
      const error = await rejection(new FileStore({ dir: dir() }).acquire('s1', { ttlMs: 1_000 }));
      expect(isAseError(error, 'SESSION_OWNED')).toBe(true);
      expect((error as Error).message).toContain(`pid ${process.ppid} on ${os.hostname()}`);
      await plantLease('s2', { host: 'another-host', pid: 1 });
      expect(isAseError(await rejection(new FileStore({ dir: dir() }).acquire('s2', { ttlMs: 1_000 })), 'SESSION_OWNED')).toBe(true);
      // Another host's process cannot be checked from here: only its lease's expiry frees the session.
      const later = new FileStore({ dir: dir(), now: () => Date.now() + 61_000 });
      expect((await later.acquire('s2', { ttlMs: 1_000 })).fence).toBe(5);
    });
  });

  describe('the owner heartbeat (renewals of a live lease write one file per process, not per session)', () => {
    const heartbeatFile = (): string => path.join(dir(), '.owners', `${lockHolderPrefix(me)}json`);

    it('a renewal leaves the lease file alone, and another host judges expiry by the heartbeat', async () => {
      let time = 1_700_000_000_000;
      const now = (): number => time;
      const a = new FileStore({ dir: dir(), now });
      const b = new FileStore({ dir: dir(), hostId: 'host-b', now });
      const lease = await a.acquire('s1', { ttlMs: 1_000 });
      await a.acquire('s2', { ttlMs: 1_000 });
      const leaseFile = path.join(dir(), 's1.lease');
      const before = { text: await fs.readFile(leaseFile, 'utf8'), mtime: (await fs.stat(leaseFile)).mtimeMs };
      time += 900;
      const renewed = await a.renew(lease);
      expect(renewed).toMatchObject({ fence: lease.fence, expiresAt: time + 1_000 });
      expect({ text: await fs.readFile(leaseFile, 'utf8'), mtime: (await fs.stat(leaseFile)).mtimeMs }).toEqual(before);
      expect(JSON.parse(await fs.readFile(heartbeatFile(), 'utf8'))).toEqual({ leases: { s1: { fence: lease.fence, expiresAt: renewed.expiresAt } } });

      // Past the lease file's own expiry: the heartbeat still holds s1; s2 (never renewed) is free.
      time += 900;
      const owned = await rejection(b.acquire('s1', { ttlMs: 1_000 }));
      expect(isAseError(owned, 'SESSION_OWNED')).toBe(true);
      expect((owned as { details?: unknown }).details).toMatchObject({ owner: { pid: process.pid }, expiresAt: renewed.expiresAt });
      expect((await b.acquire('s2', { ttlMs: 1_000 })).fence).toBe(2);

      // Past the heartbeat's expiry too: taken with the next fence; the old holder's renewal is refused.
      time += 200;
      expect((await b.acquire('s1', { ttlMs: 1_000 })).fence).toBe(lease.fence + 1);
      expect(isAseError(await rejection(a.renew(renewed)), 'LEASE_LOST')).toBe(true);
      // Its last lease gone, the process's heartbeat file goes too (and the folder, empty now).
      await expect.poll(() => fs.stat(path.dirname(heartbeatFile())).then(() => true, () => false), { timeout: 10_000 }).toBe(false);
    });

    it('a lease that expired before its renewal is renewed in its own file, under the lock', async () => {
      let time = 1_700_000_000_000;
      const store = new FileStore({ dir: dir(), now: () => time });
      const lease = await store.acquire('s1', { ttlMs: 1_000 });
      time += 5_000;
      expect(await store.renew(lease)).toMatchObject({ fence: lease.fence, expiresAt: time + 1_000 });
      expect(JSON.parse(await fs.readFile(path.join(dir(), 's1.lease'), 'utf8'))).toMatchObject({ fence: lease.fence, expiresAt: time + 1_000 });
    });

    it('a heartbeat that cannot be written: the renewal goes to the lease file instead, and succeeds', async () => {
      let time = 1_700_000_000_000;
      const now = (): number => time;
      const a = new FileStore({ dir: dir(), now });
      const lease = await a.acquire('s1', { ttlMs: 1_000 });
      // A file where the heartbeat folder should be: no heartbeat can be written.
      await fs.writeFile(path.dirname(heartbeatFile()), 'in the way');
      time += 500;
      const renewed = await a.renew(lease);
      expect(renewed).toMatchObject({ fence: lease.fence, expiresAt: time + 1_000 });
      expect(JSON.parse(await fs.readFile(path.join(dir(), 's1.lease'), 'utf8'))).toMatchObject({ fence: lease.fence, expiresAt: time + 1_000 });
      await fs.rm(path.dirname(heartbeatFile()));
    });

    it('a heartbeat torn by a crash, or naming another fence, extends nothing', async () => {
      let time = 1_700_000_000_000;
      const now = (): number => time;
      const lease = await new FileStore({ dir: dir(), now }).acquire('s1', { ttlMs: 1_000 });
      await fs.mkdir(path.dirname(heartbeatFile()), { recursive: true });
      const b = new FileStore({ dir: dir(), hostId: 'host-b', now });
      time += 1_500;
      await fs.writeFile(heartbeatFile(), JSON.stringify({ leases: { s1: { fence: lease.fence + 7, expiresAt: time + 60_000 } } }));
      expect((await b.acquire('s1', { ttlMs: 1_000 })).fence).toBe(lease.fence + 1);
      await fs.writeFile(path.join(dir(), 's1.lease'), JSON.stringify({ fence: 9, owner: lease.owner, expiresAt: time - 1, ttlMs: 1_000 }));
      await fs.writeFile(heartbeatFile(), '{"leases": {"s1": {"fen');
      expect((await b.acquire('s1', { ttlMs: 1_000 })).fence).toBe(10);
    });
  });

  it('reports STORE_IO when the directory cannot be created', async () => {
    const blocker = path.join(tmp, 'blocker');
    await fs.writeFile(blocker, '');
    const store = new FileStore({ dir: path.join(blocker, 'sessions') });
    const error = await rejection(store.save('s1', session(), 0));
    expect(isAseError(error, 'STORE_IO')).toBe(true);
    expect((error as Error).cause).toBeDefined();
  });

  it('refuses an empty hostId', () => {
    expect(() => new FileStore({ dir: dir(), hostId: '' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
