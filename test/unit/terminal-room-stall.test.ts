/**
 * The terminal room's write timeout: a client that has unsent bytes and takes none of them for
 * `writeTimeoutMs` is cut (close 1008), even under the byte bound (it would otherwise hold its
 * connection and those bytes forever); a client that keeps taking, however slowly, or has nothing
 * waiting, stays.
 */
import { describe, expect, it, vi } from 'vitest';
import { TerminalRoom } from '../../src/server/terminal-room.js';
import { FakeTerminalSocket as FakeSocket } from '../support/fake-terminal-socket.js';

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('terminal room: the write timeout', () => {
  it('cuts a client whose unsent bytes stay untaken for writeTimeoutMs; keeps one that drains slowly and one with nothing waiting', async () => {
    const room = new TerminalRoom({ sessionId: 's', maxBufferedBytes: 1 << 20, writeTimeoutMs: 100, onClosed: () => {} });
    const stalled = new FakeSocket();
    const slow = new FakeSocket();
    const idle = new FakeSocket();
    room.join(stalled, 'viewer');
    room.join(slow, 'viewer');
    room.join(idle, 'viewer');
    expect(stalled.sent).toBe(1); // its status
    stalled.bufferedAmount = 5_000; // under the byte bound, never taken
    slow.bufferedAmount = 5_000;
    const draining = setInterval(() => {
      slow.bufferedAmount = Math.max(1, slow.bufferedAmount - 50); // takes a little at every check
    }, 40);
    try {
      const end = Date.now() + 5_000;
      while (!stalled.closed && Date.now() < end) await settle(20);
      await settle(300);
    } finally {
      clearInterval(draining);
    }
    expect(stalled.closed).toEqual({ code: 1008, reason: 'too slow: terminal output not read' });
    expect(slow.closed).toBeUndefined();
    expect(idle.closed).toBeUndefined();
    room.close();
    expect(slow.closed).toMatchObject({ code: 1001 });
  });

  it('no timer is left once the clients are gone (the room does not tick for nothing)', () => {
    vi.useFakeTimers();
    try {
      const room = new TerminalRoom({ sessionId: 's', maxBufferedBytes: 1 << 20, writeTimeoutMs: 100, onClosed: () => {} });
      const a = new FakeSocket();
      const b = new FakeSocket();
      room.join(a, 'viewer');
      room.join(b, 'viewer');
      expect(vi.getTimerCount()).toBe(1);
      room.leave(a);
      expect(vi.getTimerCount()).toBe(1);
      room.leave(b);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
