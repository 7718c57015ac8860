/**
 * The one conformance suite every SessionStore passes (MemoryStore and FileStore run it in
 * test/unit/store.test.ts; a database-backed store would run it too): compare-and-set, copies,
 * listing and deleting, and ownership: leases with fencing tokens, SESSION_OWNED, expiry, release,
 * forced takeover, and fenced writes checked atomically with the write itself.
 *
 * `make(now)` builds a fresh, empty store whose lease clock is `now()`; the suite moves that clock.
 * `anotherHost(store, now)` opens the same data as another process (or host) would, on the same
 * clock: what that process does to a lease, the first store may only learn from the data.
 *
 * What `renew` promises (session-store.ts): `LEASE_LOST` at once for a lease that expired and was
 * taken, or that was taken, released or deleted through the same store; for a live lease another
 * process forced away or deleted, a store may keep renewing for up to one ttl after it last checked
 * the lease (the FileStore reads no file on most idle renewals), and must refuse every fenced
 * `save` at once.
 */
import { describe, expect, it } from 'vitest';
import { isAseError, type AseError } from '../../src/errors.js';
import type { PersistedSession } from '../../src/events/session-state.js';
import type { Lease, SessionStore } from '../../src/effects/store/session-store.js';
import { rejection } from './async.js';

export function session(overrides: Partial<PersistedSession> = {}): PersistedSession {
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
    requests: { r1: { toolName: 'Bash', input: { command: 'ls' }, gen: 1, createdAt: 5 } },
    completed: { r0: { status: 'approved', decidedAt: 4, gen: 1 } },
    usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, costUsd: 0.5, turns: 1 },
    deliveredIds: ['m1'],
    updatedAt: 100,
    ...overrides,
  };
}

const T0 = 1_700_000_000_000;
const TTL = 1_000;

async function refusal(promise: Promise<unknown>, code: AseError['code']): Promise<AseError> {
  const error = await rejection(promise);
  expect(isAseError(error, code), `${code} expected, got ${String((error as AseError).code)}: ${String(error)}`).toBe(true);
  return error as AseError;
}

export function describeStoreConformance(
  name: string,
  make: (now: () => number) => SessionStore,
  anotherHost: (store: SessionStore, now: () => number) => SessionStore,
): void {
  describe(`${name} (SessionStore conformance)`, () => {
    /** A fresh store and the clock its leases run on. */
    const fixture = () => {
      let time = T0;
      const store = make(() => time);
      return { store, advance: (ms: number) => void (time += ms), now: () => time };
    };

    describe('state and compare-and-set', () => {
      it('round-trips a saved session', async () => {
        const { store } = fixture();
        expect(await store.load('s1')).toBeUndefined();
        const state = session();
        expect(await store.save('s1', state, 0)).toEqual({ ok: true, version: 1 });
        expect(await store.load('s1')).toEqual({ version: 1, state });
        const next = session({ phase: 'running', updatedAt: 200, turn: { localId: 'm2', text: 'hi', gen: 1, startedAt: 150, eventId: 'x.1-3' } });
        expect(await store.save('s1', next, 1)).toEqual({ ok: true, version: 2 });
        expect(await store.load('s1')).toEqual({ version: 2, state: next });
      });

      it('keeps its own copy of the state', async () => {
        const { store } = fixture();
        const state = session();
        await store.save('s1', state, 0);
        state.queue.push({ localId: 'q2', text: 'later', queuedAt: 11 });
        const loaded = await store.load('s1');
        expect(loaded?.state.queue).toHaveLength(1);
        loaded!.state.deliveredIds.push('mutated');
        expect((await store.load('s1'))?.state.deliveredIds).toEqual(['m1']);
      });

      it('reports a conflict when a second writer expects the session not to exist', async () => {
        const { store } = fixture();
        const first = session({ updatedAt: 1 });
        expect(await store.save('s1', first, 0)).toEqual({ ok: true, version: 1 });
        const result = await store.save('s1', session({ updatedAt: 2 }), 0);
        expect(result).toEqual({ ok: false, version: 1, stored: first });
        expect(await store.load('s1')).toEqual({ version: 1, state: first });
      });

      it('writes nothing on a wrong expected version', async () => {
        const { store } = fixture();
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
        const { store } = fixture();
        await store.save('s1', session({ updatedAt: 0 }), 0);
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.save('s1', session({ updatedAt: i + 1 }), 1)));
        const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(results[winners[0]!]).toEqual({ ok: true, version: 2 });
        for (const r of results) if (!r.ok) expect(r.version).toBe(2);
        expect(await store.load('s1')).toEqual({ version: 2, state: session({ updatedAt: winners[0]! + 1 }) });
      });

      it('lets exactly one of 20 concurrent first saves win', async () => {
        const { store } = fixture();
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.save('s1', session({ updatedAt: i }), 0)));
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        expect((await store.load('s1'))?.version).toBe(1);
      });

      it('lists and deletes sessions', async () => {
        const { store } = fixture();
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
        const { store } = fixture();
        for (const v of [-1, 0.5, Number.NaN]) await refusal(store.save('s1', session(), v), 'INVALID_INPUT');
        expect(await store.load('s1')).toBeUndefined();
      });

      it('never files a state under another session id', async () => {
        const { store } = fixture();
        await refusal(store.save('s2', session({ sessionId: 's1' }), 0), 'INVALID_INPUT');
        expect(await store.load('s2')).toBeUndefined();
        expect(await store.list()).toEqual([]);
      });
    });

    describe('ownership leases', () => {
      it('acquire hands out fence 1 with the owner and an expiry; a second owner is refused with SESSION_OWNED naming the first', async () => {
        const { store, now } = fixture();
        const lease = await store.acquire('s1', { ttlMs: TTL, label: 'host-a' });
        expect(lease).toMatchObject({ sessionId: 's1', fence: 1, expiresAt: now() + TTL, ttlMs: TTL, owner: { label: 'host-a' } });
        expect(typeof lease.owner.host).toBe('string');
        expect(Number.isSafeInteger(lease.owner.pid)).toBe(true);
        const owned = await refusal(store.acquire('s1', { ttlMs: TTL }), 'SESSION_OWNED');
        expect(owned.details).toMatchObject({ sessionId: 's1', owner: lease.owner, expiresAt: lease.expiresAt });
        expect(owned.message).toContain(`pid ${lease.owner.pid} on ${lease.owner.host}`);
        expect(owned.message).toContain('host-a');
        // Leases are per session.
        expect(await store.acquire('s2', { ttlMs: TTL })).toMatchObject({ sessionId: 's2', fence: 1 });
      });

      it('exactly one of 20 concurrent acquires wins', async () => {
        const { store } = fixture();
        const results = await Promise.allSettled(Array.from({ length: 20 }, () => store.acquire('s1', { ttlMs: TTL })));
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(isAseError(r.reason, 'SESSION_OWNED')).toBe(true);
      });

      it('a fenced save needs the current lease; the check and the write are one step', async () => {
        const { store } = fixture();
        await refusal(store.save('s1', session(), 0, 1), 'LEASE_LOST'); // No lease taken yet.
        const lease = await store.acquire('s1', { ttlMs: TTL });
        expect(await store.save('s1', session(), 0, lease.fence)).toEqual({ ok: true, version: 1 });
        const stale = await refusal(store.save('s1', session({ updatedAt: 2 }), 1, lease.fence + 1), 'LEASE_LOST');
        expect(stale.details).toMatchObject({ sessionId: 's1', fence: lease.fence + 1, currentFence: lease.fence });
        expect((await store.load('s1'))?.version).toBe(1);
        // A fenced save still compares versions.
        expect(await store.save('s1', session(), 0, lease.fence)).toMatchObject({ ok: false, version: 1 });
        // An unfenced save is compare-and-set only.
        expect(await store.save('s1', session({ updatedAt: 3 }), 1)).toEqual({ ok: true, version: 2 });
      });

      it('an expired lease is taken with the next fence; the old holder can neither renew nor write', async () => {
        const { store, advance, now } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.save('s1', session(), 0, a.fence);
        advance(TTL - 1);
        await refusal(store.acquire('s1', { ttlMs: TTL }), 'SESSION_OWNED');
        advance(2);
        const b = await store.acquire('s1', { ttlMs: TTL * 2 });
        expect(b).toMatchObject({ fence: a.fence + 1, expiresAt: now() + TTL * 2 });
        await refusal(store.renew(a), 'LEASE_LOST');
        await refusal(store.save('s1', session({ updatedAt: 9 }), 1, a.fence), 'LEASE_LOST');
        expect((await store.load('s1'))?.state.updatedAt).toBe(100);
        expect(await store.save('s1', session({ updatedAt: 10 }), 1, b.fence)).toEqual({ ok: true, version: 2 });
      });

      it('renew extends the lease from now; a renewed lease is not taken', async () => {
        const { store, advance, now } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        advance(TTL - 10);
        const renewed = await store.renew(a);
        expect(renewed).toMatchObject({ fence: a.fence, expiresAt: now() + TTL });
        advance(TTL - 10);
        await refusal(store.acquire('s1', { ttlMs: TTL }), 'SESSION_OWNED');
        // An expired lease nobody took is still its holder's: renewing and writing work.
        advance(TTL * 5);
        expect(await store.renew(renewed)).toMatchObject({ fence: a.fence, expiresAt: now() + TTL });
        expect(await store.save('s1', session(), 0, a.fence)).toEqual({ ok: true, version: 1 });
      });

      it('release lets the next host in at once, and the fence is never reused', async () => {
        const { store } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.release(a);
        await store.release(a); // Idempotent.
        await refusal(store.renew(a), 'LEASE_LOST');
        await refusal(store.save('s1', session(), 0, a.fence), 'LEASE_LOST');
        const b = await store.acquire('s1', { ttlMs: TTL });
        expect(b.fence).toBe(a.fence + 1);
        await store.release(a); // A stale release does not end the current lease.
        await refusal(store.acquire('s1', { ttlMs: TTL }), 'SESSION_OWNED');
        await store.release(b);
        expect((await store.acquire('s1', { ttlMs: TTL })).fence).toBe(b.fence + 1);
      });

      it('force takes a live lease; the previous holder is fenced', async () => {
        const { store } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        const b = await store.acquire('s1', { ttlMs: TTL, force: true });
        expect(b.fence).toBe(a.fence + 1);
        await refusal(store.save('s1', session(), 0, a.fence), 'LEASE_LOST');
        await refusal(store.renew(a), 'LEASE_LOST');
        expect(await store.save('s1', session(), 0, b.fence)).toEqual({ ok: true, version: 1 });
      });

      it('delete ends the lease (its holder is fenced) and keeps the fence counter', async () => {
        const { store } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.save('s1', session(), 0, a.fence);
        await store.delete('s1');
        await refusal(store.save('s1', session(), 0, a.fence), 'LEASE_LOST');
        expect(await store.load('s1')).toBeUndefined();
        expect((await store.acquire('s1', { ttlMs: TTL })).fence).toBe(a.fence + 1);
      });

      it('of old and new holders writing at once, only the current one lands', async () => {
        const { store, advance } = fixture();
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.save('s1', session({ updatedAt: 0 }), 0, a.fence);
        advance(TTL + 1);
        const b = await store.acquire('s1', { ttlMs: TTL });
        const writes = Array.from({ length: 20 }, (_, i) => store.save('s1', session({ updatedAt: i + 1 }), 1, i % 2 ? a.fence : b.fence));
        const results = await Promise.allSettled(writes);
        results.forEach((r, i) => {
          if (i % 2) expect(r.status === 'rejected' && isAseError(r.reason, 'LEASE_LOST'), `write ${i} by the old holder`).toBe(true);
        });
        const ok = results.flatMap((r, i) => (r.status === 'fulfilled' && r.value.ok ? [i] : []));
        expect(ok).toHaveLength(1);
        expect(ok[0]! % 2).toBe(0);
      });

      /** Renews `lease` every quarter ttl: allowed to pass within one ttl of `checkedAt`, refused with LEASE_LOST from then on. */
      async function renewUntilRefused(store: SessionStore, lease: Lease, advance: (ms: number) => void, now: () => number, checkedAt: number): Promise<void> {
        for (;;) {
          advance(TTL / 4);
          const renewal = await store.renew(lease).then(
            (renewed) => ({ renewed }),
            (error: unknown) => ({ error }),
          );
          if ('error' in renewal) {
            expect(isAseError(renewal.error, 'LEASE_LOST'), String(renewal.error)).toBe(true);
            return;
          }
          expect(now() - checkedAt, 'a renewal one ttl after the last check must see the lease was lost').toBeLessThan(TTL);
          lease = renewal.renewed;
        }
      }

      it('a live lease another host forced away: the old holder writes nothing, and its renewals stop within one ttl', async () => {
        const { store, advance, now } = fixture();
        const other = anotherHost(store, now);
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.save('s1', session(), 0, a.fence);
        const checkedAt = now(); // The fenced write checked the lease last.
        const b = await other.acquire('s1', { ttlMs: TTL, force: true });
        expect(b.fence).toBe(a.fence + 1);
        await renewUntilRefused(store, a, advance, now, checkedAt);
        await refusal(store.save('s1', session({ updatedAt: 9 }), 1, a.fence), 'LEASE_LOST');
        expect(await other.save('s1', session({ updatedAt: 10 }), 1, b.fence)).toEqual({ ok: true, version: 2 });
        // The old holder's renewals extended nothing of the new lease: once its own ttl is over, it is free.
        advance(Math.max(0, b.expiresAt - now()) + 1);
        expect((await store.acquire('s1', { ttlMs: TTL })).fence).toBe(b.fence + 1);
      });

      it('a live lease another host deleted: the old holder\'s next fenced write is refused at once', async () => {
        const { store, advance, now } = fixture();
        const other = anotherHost(store, now);
        const a = await store.acquire('s1', { ttlMs: TTL });
        await store.save('s1', session(), 0, a.fence);
        const checkedAt = now();
        await other.delete('s1');
        await refusal(store.save('s1', session(), 0, a.fence), 'LEASE_LOST');
        expect(await store.load('s1')).toBeUndefined();
        await renewUntilRefused(store, a, advance, now, checkedAt);
      });

      it('refuses a ttl that is not a positive integer, and a lease it never issued', async () => {
        const { store } = fixture();
        for (const ttlMs of [0, -5, 1.5, Number.NaN]) await refusal(store.acquire('s1', { ttlMs }), 'INVALID_INPUT');
        await refusal(store.renew({ sessionId: 's1', fence: 0 } as Lease), 'INVALID_INPUT');
        await refusal(store.renew({ sessionId: 's1', fence: 3, owner: { host: 'h', pid: 1 }, expiresAt: 0, ttlMs: 1 }), 'LEASE_LOST');
      });
    });
  });
}
