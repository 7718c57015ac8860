/**
 * The terminal room's one writer: a desk that reconnects as its old connection closes (a hand-over,
 * a sub-agent's focus moving back) gets the place, not 4409; a genuine second desk is still refused.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Session } from '../../src/index.js';
import { TerminalRoom, TERMINAL_CLOSE } from '../../src/server/terminal-room.js';
import { FakeTerminalSocket as FakeSocket } from '../support/fake-terminal-socket.js';

const room = (maxBufferedBytes = 1 << 20) => new TerminalRoom({ sessionId: 's', maxBufferedBytes, writerWaitMs: 1000, onClosed: () => {} });

/** Just what the room reads of a session: its terminal (keys written, sizes asked, output to emit), its mode, its end. */
function fakeSession() {
  const written: string[] = [];
  const sizes: string[] = [];
  let emit: (data: string) => void = () => {};
  const session = {
    snapshot: () => ({ mode: 'local' }),
    on: () => () => {},
    done: new Promise(() => {}),
    terminal: {
      attached: false,
      onData: (listener: (data: string) => void) => ((emit = listener), () => {}),
      onChange: () => () => {},
      write: (text: string) => void written.push(text),
      resize: (cols: number, rows: number) => void sizes.push(`${cols}x${rows}`),
      dimensions: () => undefined,
    },
  };
  return { session: session as unknown as Session, written, sizes, output: (data: string) => emit(data) };
}

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

  it('what a waiting writer sends (its size, keys, a mode change) is applied in order once it has the place', () => {
    const r = room();
    const fake = fakeSession();
    r.bind(fake.session);
    const old = new FakeSocket();
    r.join(old, 'writer');
    const desk = new FakeSocket();
    r.join(desk, 'writer');
    r.control(desk, JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    r.input(desk, new TextEncoder().encode('typed while waiting'));
    expect(fake.sizes).toEqual([]);
    expect(fake.written).toEqual([]);
    r.leave(old);
    expect(fake.sizes).toEqual(['100x30']);
    expect(fake.written).toEqual(['typed while waiting']);
    r.close();
  });

  it('a waiting writer that sends more than it may keep is closed; one refused with 4409 has nothing applied', () => {
    const r = room();
    const fake = fakeSession();
    r.bind(fake.session);
    r.join(new FakeSocket(), 'writer');
    const flood = new FakeSocket();
    r.join(flood, 'writer');
    r.input(flood, new Uint8Array(65 * 1024).fill(0x61));
    expect(flood.closed).toEqual({ code: TERMINAL_CLOSE.tooSlow, reason: 'too much input while waiting for the writer place' });
    const refused = new FakeSocket();
    r.join(refused, 'writer');
    r.input(refused, new TextEncoder().encode('never'));
    vi.advanceTimersByTime(1000);
    expect(refused.closed).toMatchObject({ code: TERMINAL_CLOSE.writerTaken });
    expect(fake.written).toEqual([]);
    r.close();
  });

  it('a writer cut for not reading hands the place to the waiting one at once', () => {
    const r = room(1024);
    const fake = fakeSession();
    r.bind(fake.session);
    const slow = new FakeSocket();
    r.join(slow, 'writer');
    const desk = new FakeSocket();
    r.join(desk, 'writer');
    slow.bufferedAmount = 2048; // over the bound: the next output cuts it
    fake.output('some output');
    expect(slow.closed).toMatchObject({ code: TERMINAL_CLOSE.tooSlow });
    expect(desk.closed).toBeUndefined();
    expect(desk.statuses().at(-1)).toMatchObject({ role: 'writer', writerAttached: true });
    r.close();
  });

  it('a writer whose close began while another waited: the waiting one gets the place when its wait ends, not 4409', () => {
    const r = room();
    const old = new FakeSocket();
    r.join(old, 'writer');
    const desk = new FakeSocket();
    r.join(desk, 'writer');
    old.readyState = 2; // its close frame came after the desk joined; its close event is late
    vi.advanceTimersByTime(1000);
    expect(desk.closed).toBeUndefined();
    expect(desk.statuses().at(-1)).toMatchObject({ role: 'writer', writerAttached: true });
    r.close();
  });
});
