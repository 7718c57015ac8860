/**
 * A TerminalSocket for the terminal room's unit tests: it records what the room sends and how it
 * closes it, and the test sets what a real WebSocket would report (bytes not yet sent, its state).
 */
import type { TerminalSocket } from '../../src/server/terminal-room.js';

export class FakeTerminalSocket implements TerminalSocket {
  bufferedAmount = 0;
  readyState = 1;
  closed: { code: number; reason: string } | undefined;
  terminated = false;
  /** Frames sent, of either kind. */
  sent = 0;
  /** The text frames sent. */
  frames: string[] = [];

  send(data: string | Uint8Array): void {
    this.sent++;
    if (typeof data === 'string') this.frames.push(data);
  }

  close(code: number, reason: string): void {
    this.closed ??= { code, reason };
  }

  terminate(): void {
    this.terminated = true;
  }

  /** The status frames it was sent. */
  statuses(): { role: string; writerAttached: boolean }[] {
    return this.frames.map((f) => JSON.parse(f) as { type: string; role: string; writerAttached: boolean }).filter((f) => f.type === 'status');
  }
}
