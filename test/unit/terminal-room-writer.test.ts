/**
 * The terminal room's one writer: a desk that reconnects as its old connection closes (a hand-over,
 * a sub-agent's focus moving back) gets the place, not 4409; a genuine second desk is still refused.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TerminalRoom, TERMINAL_CLOSE, type TerminalSocket } from '../../src/server/terminal-room.js';

class FakeSocket implements TerminalSocket {
  bufferedAmount = 0;
  readyState = 1;
  closed: { code: number; reason: string } | undefined;
  frames: string[] = [];
  send(data: string | Uint8Array): void {
    if (typeof data === 'string') this.frames.push(data);
  }
  close(code: number, reason: string): void {
    this.closed ??= { code, reason };
  }
  terminate(): void {}
  /** The status frames it was sent. */
  statuses(): { role: string; writerAttached: boolean }[] {
    return this.frames.map((f) => JSON.parse(f) as { type: string; role: string; writerAttached: boolean }).filter((f) => f.type === 'status');
  }
}

const room = () => new TerminalRoom({ sessionId: 's', maxBufferedBytes: 1 << 20, writerWaitMs: 1000, onClosed: () => {} });

describe('terminal room: the writer place', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('a writer that comes while the writer it replaces is closing gets the place at once', () => {
    const r = room();
    const old = new FakeSocket();
    r.join(old, 'writer');
    old.readyState = 2; // its close frame came; the server has not run its close handler yet
    const desk = new FakeSocket();
    r.join(desk, 'writer');
    expect(desk.closed).toBeUndefined();
    expect(desk.statuses().at(-1)).toMatchObject({ role: 'writer', writerAttached: true });
    r.input(old, new TextEncoder().encode('x')); // the old one writes no more
    r.leave(old); // its close handler, late: changes nothing
    expect(r.writerAttached).toBe(true);
    r.close();
  });

  it('a writer that comes while the place is taken waits, and gets it when the other leaves within the wait', () => {
    const r = room();
    const viewer = new FakeSocket();
    r.join(viewer, 'viewer');
    const old = new FakeSocket();
    r.join(old, 'writer');
    const desk = new FakeSocket();
    r.join(desk, 'writer');
    expect(desk.frames).toEqual([]); // waiting: nothing yet, not refused
    vi.advanceTimersByTime(600);
    r.leave(old);
    expect(desk.closed).toBeUndefined();
    expect(desk.statuses().at(-1)).toMatchObject({ role: 'writer', writerAttached: true });
    expect(viewer.statuses().at(-1)).toMatchObject({ writerAttached: true });
    vi.advanceTimersByTime(5_000); // its refusal timer was cleared
    expect(desk.closed).toBeUndefined();
    r.close();
  });

  it('a second desk whose wait runs out is closed with 4409; the first keeps the place', () => {
    const r = room();
    const first = new FakeSocket();
    r.join(first, 'writer');
    const second = new FakeSocket();
    r.join(second, 'writer');
    vi.advanceTimersByTime(999);
    expect(second.closed).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(second.closed).toEqual({ code: TERMINAL_CLOSE.writerTaken, reason: 'a desk is already attached' });
    r.leave(second); // its close handler
    r.leave(first);
    expect(r.writerAttached).toBe(false);
    r.close();
  });

  it('waiting writers get the place in the order they came; one that gives up waiting is forgotten', () => {
    const r = room();
    const holder = new FakeSocket();
    r.join(holder, 'writer');
    const quitter = new FakeSocket();
    const a = new FakeSocket();
    const b = new FakeSocket();
    r.join(quitter, 'writer');
    r.join(a, 'writer');
    r.join(b, 'writer');
    r.leave(quitter); // it disconnected while waiting
    r.leave(holder);
    expect(a.statuses().at(-1)).toMatchObject({ role: 'writer' });
    expect(b.frames).toEqual([]);
    expect(quitter.frames).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(b.closed).toMatchObject({ code: TERMINAL_CLOSE.writerTaken });
    expect(quitter.closed).toBeUndefined();
    expect(a.closed).toBeUndefined();
    r.close();
  });

  it('closing the room closes the writers still waiting, and leaves no timer', () => {
    const r = room();
    r.join(new FakeSocket(), 'writer');
    const waiting = new FakeSocket();
    r.join(waiting, 'writer');
    r.close(TERMINAL_CLOSE.sessionEnded, 'the session ended');
    expect(waiting.closed).toEqual({ code: TERMINAL_CLOSE.sessionEnded, reason: 'the session ended' });
    vi.advanceTimersByTime(5_000);
    expect(waiting.closed).toEqual({ code: TERMINAL_CLOSE.sessionEnded, reason: 'the session ended' });
  });
});
