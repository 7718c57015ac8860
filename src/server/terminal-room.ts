/**
 * One session's terminal as `ase serve` shares it over `GET /api/sessions/:id/terminal`
 * (docs/server.md "The terminal"): the clients connected to it, at most one writer (the desk that
 * types into the agent's terminal UI) and any number of read-only viewers (the page's panel).
 *
 * Everything the session's terminal writes goes to every client as binary frames and into a
 * mirror of the screen (terminal-mirror.ts), so a client that connects while the terminal UI runs
 * is first shown the current screen, then exactly the output after it. Status frames (JSON text)
 * tell every client the mode, whether a writer is attached, the size and whether a terminal UI runs,
 * on connect and on every change. A client that does not read its output is cut (close 1008) once
 * its unsent bytes pass the bound, or once it has taken none of them for `writeTimeoutMs` (a
 * stalled client under the bound would otherwise hold its connection and bytes forever), instead of
 * the server buffering without limit for it.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ControlMode } from '../events/session-input.js';
import type { Session } from '../session/session.js';
import { TerminalMirror } from './terminal-mirror.js';

/** What the room needs of a WebSocket (the `ws` library's socket has it). */
export interface TerminalSocket {
  send(data: string | Uint8Array): void;
  close(code: number, reason: string): void;
  /** Drops the connection at once (a client that reads nothing would never take the close frame). */
  terminate(): void;
  /** Bytes queued for the client and not yet handed to the network. */
  readonly bufferedAmount: number;
  /** The WebSocket's state where known: 2 (closing) and 3 (closed) say its close is under way. */
  readonly readyState?: number;
}

export type TerminalRole = 'writer' | 'viewer';

/** The text frame a client is sent first and on every change (the contract's `status`). */
export interface TerminalStatus {
  type: 'status';
  sessionId: string;
  mode: ControlMode;
  role: TerminalRole;
  writerAttached: boolean;
  cols: number;
  rows: number;
  running: boolean;
}

/** Close codes the room uses (4xxx: the application's own range). */
export const TERMINAL_CLOSE = {
  /** The session ended (the terminal UI quit in local mode, or it was stopped). */
  sessionEnded: 1000,
  /** Unread output passed the byte bound. */
  tooSlow: 1008,
  serverStopping: 1001,
  /** A second writer. */
  writerTaken: 4409,
} as const;

/** When no terminal ran yet and no client gave a size: the local engines' default. */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
/** The largest window a client may ask for (a bigger one is a mistake or an attack on the mirror). */
const MAX_COLS = 1000;
const MAX_ROWS = 500;
/** How long a cut client's close frame may wait behind its unread output. */
const CUT_GRACE_MS = 1000;
/**
 * How long a writer that comes while another is attached waits for the place before it is closed
 * with 4409: a desk that reconnects as its old connection closes (a hand-over, a sub-agent's
 * focus moving back) is usually ahead of that close on the server.
 */
const WRITER_WAIT_MS = 1000;
/** What a waiting writer may send before it has the place (kept, then applied in order once it has it). */
const WAITING_FRAMES_MAX_BYTES = 64 * 1024;

/** A writer waiting for the place: its 4409 timer, and the frames it sent meanwhile. */
interface WaitingWriter {
  timer: ReturnType<typeof setTimeout>;
  frames: (Uint8Array | string)[];
  bytes: number;
}

interface Client {
  socket: TerminalSocket;
  role: TerminalRole;
  /** Output held while the client's repaint is being prepared (then sent after it). */
  pending: Uint8Array[] | undefined;
  pendingBytes: number;
  decoder: StringDecoder;
  /** Unsent bytes at the last stall check, and since when none of them were taken (undefined: progressing). */
  lastBuffered: number;
  stalledSince: number | undefined;
}

export interface TerminalRoomOptions {
  sessionId: string;
  /** Unsent bytes a client may have before it is cut. */
  maxBufferedBytes: number;
  /** How long a client may have unsent bytes and take none of them before it is cut. Default 30000. */
  writeTimeoutMs?: number;
  /** How long a second writer waits for the place before 4409. Default 1000. */
  writerWaitMs?: number;
  /** The clock (tests). Default `Date.now`. */
  now?: () => number;
  /** Told once the room is closed (the session ended): the server forgets it. */
  onClosed(room: TerminalRoom): void;
}

export class TerminalRoom {
  readonly sessionId: string;
  readonly #opts: TerminalRoomOptions;
  readonly #clients = new Map<TerminalSocket, Client>();
  /** Writers that came while the place was taken, in arrival order. */
  readonly #waitingWriters = new Map<TerminalSocket, WaitingWriter>();
  #session: Session | undefined;
  #mirror: TerminalMirror | undefined;
  #mode: ControlMode = 'remote';
  #unsubscribe: (() => void)[] = [];
  #closed = false;
  /** Checks for stalled clients while any client is connected. */
  #stallCheck: ReturnType<typeof setInterval> | undefined;

  constructor(opts: TerminalRoomOptions) {
    this.sessionId = opts.sessionId;
    this.#opts = opts;
  }

  get session(): Session | undefined {
    return this.#session;
  }

  get writerAttached(): boolean {
    return this.#writer() !== undefined;
  }

  /**
   * Follows this Session object's terminal (from the moment it is created, so the mirror has the
   * whole screen). A room outlives nothing: when the session ends its clients are closed.
   */
  bind(session: Session): void {
    if (this.#session === session || this.#closed) return;
    for (const off of this.#unsubscribe) off();
    this.#session = session;
    this.#mode = session.snapshot().mode;
    this.#mirror?.dispose();
    this.#mirror = undefined;
    // The mirror exists while a terminal UI has run (a remote-only session never costs one).
    if (session.terminal.attached) this.#newMirror(session);
    this.#unsubscribe = [
      session.terminal.onData((data) => this.#output(data)),
      session.terminal.onChange((change) => {
        if (change.attached) this.#newMirror(session);
        this.#broadcastStatus();
      }),
      session.on('status', (notice) => {
        if (notice.mode === this.#mode) return;
        this.#mode = notice.mode;
        this.#broadcastStatus();
      }),
    ];
    void session.done.then(
      () => this.#sessionEnded(session),
      () => this.#sessionEnded(session),
    );
  }

  /**
   * A client connected. A writer that comes while another is attached gets the place once that one
   * leaves (at once when its close is already under way), or is closed with 4409 after
   * `writerWaitMs`; everyone else is sent its status, then (when a terminal UI runs) the current
   * screen and the live output after it.
   */
  join(socket: TerminalSocket, role: TerminalRole): void {
    if (this.#closed) {
      socket.close(TERMINAL_CLOSE.sessionEnded, 'the session ended');
      return;
    }
    if (role === 'writer') {
      const current = this.#writer();
      // Its close frame came, its close event not yet: the place is free.
      if (current && isClosing(current.socket)) this.leave(current.socket);
      if (this.writerAttached || this.#waitingWriters.size > 0) {
        this.#waitForPlace(socket);
        return;
      }
    }
    this.#admit(socket, role);
  }

  #admit(socket: TerminalSocket, role: TerminalRole): void {
    const client: Client = { socket, role, pending: undefined, pendingBytes: 0, decoder: new StringDecoder('utf8'), lastBuffered: 0, stalledSince: undefined };
    this.#clients.set(socket, client);
    this.#watchStalls();
    // Everyone hears that a writer came; the newcomer gets its own status first either way.
    if (role === 'writer') this.#broadcastStatus();
    else this.#sendStatus(client);
    const mirror = this.#mirror;
    if (!mirror || !this.#session?.terminal.attached) return;
    client.pending = [];
    mirror.snapshot((repaint) => {
      if (!this.#clients.has(socket)) return;
      const held = client.pending ?? [];
      client.pending = undefined;
      client.pendingBytes = 0;
      this.#send(client, Buffer.from(repaint, 'utf8'));
      for (const chunk of held) this.#send(client, chunk);
    });
  }

  leave(socket: TerminalSocket): void {
    if (this.#stopWaiting(socket)) return;
    const client = this.#clients.get(socket);
    if (!client) return;
    this.#clients.delete(socket);
    this.#watchStalls();
    if (client.role === 'writer') this.#writerGone();
  }

  /**
   * The writer left or was cut: the place goes to the writer that has waited longest and is still
   * connected (its frames sent meanwhile applied in order; its admission tells everyone), else
   * everyone is told it is free.
   */
  #writerGone(): void {
    for (const [socket, waiting] of this.#waitingWriters) {
      this.#stopWaiting(socket);
      if (isClosing(socket)) continue;
      this.#admit(socket, 'writer');
      for (const frame of waiting.frames) {
        if (typeof frame === 'string') this.control(socket, frame);
        else this.input(socket, frame);
      }
      return;
    }
    this.#broadcastStatus();
  }

  #writer(): Client | undefined {
    for (const client of this.#clients.values()) if (client.role === 'writer') return client;
    return undefined;
  }

  /** A second writer: closed with 4409 unless the place comes free within `writerWaitMs` (see {@link #writerGone}). */
  #waitForPlace(socket: TerminalSocket): void {
    const timer = setTimeout(() => {
      // The writer's close may have begun since (its close event comes only once the connection ends).
      const current = this.#writer();
      if (current && isClosing(current.socket)) this.leave(current.socket);
      if (!this.#waitingWriters.delete(socket)) return; // it got the place
      socket.close(TERMINAL_CLOSE.writerTaken, 'a desk is already attached');
    }, this.#opts.writerWaitMs ?? WRITER_WAIT_MS);
    timer.unref?.();
    this.#waitingWriters.set(socket, { timer, frames: [], bytes: 0 });
  }

  /** Forgets a waiting writer (its 4409 timer too); false when `socket` was not one. */
  #stopWaiting(socket: TerminalSocket): boolean {
    const waiting = this.#waitingWriters.get(socket);
    if (!waiting) return false;
    clearTimeout(waiting.timer);
    return this.#waitingWriters.delete(socket);
  }

  /** A frame from a writer still waiting for the place: kept for when it gets it; too many, and it is closed. */
  #hold(socket: TerminalSocket, waiting: WaitingWriter, frame: Uint8Array | string): void {
    waiting.bytes += typeof frame === 'string' ? frame.length : frame.byteLength;
    if (waiting.bytes > WAITING_FRAMES_MAX_BYTES) {
      this.#stopWaiting(socket);
      socket.close(TERMINAL_CLOSE.tooSlow, 'too much input while waiting for the writer place');
      return;
    }
    waiting.frames.push(typeof frame === 'string' ? frame : Uint8Array.from(frame));
  }

  /** A binary frame from a client: keystrokes for the terminal UI, from the writer only. */
  input(socket: TerminalSocket, bytes: Uint8Array): void {
    const waiting = this.#waitingWriters.get(socket);
    if (waiting) return this.#hold(socket, waiting, bytes);
    const client = this.#clients.get(socket);
    if (client?.role !== 'writer') return;
    const text = client.decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    if (text !== '') this.#session?.terminal.write(text);
  }

  /** A text frame from a client: `resize` or `mode`, from the writer only; anything else is ignored. */
  control(socket: TerminalSocket, text: string): void {
    const waiting = this.#waitingWriters.get(socket);
    if (waiting) return this.#hold(socket, waiting, text);
    const client = this.#clients.get(socket);
    if (client?.role !== 'writer' || text.length > 1024) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const m = message as { type?: unknown; cols?: unknown; rows?: unknown; to?: unknown };
    if (m.type === 'resize') {
      if (!isSize(m.cols, MAX_COLS) || !isSize(m.rows, MAX_ROWS)) return;
      this.resize(m.cols, m.rows);
    } else if (m.type === 'mode' && (m.to === 'local' || m.to === 'remote')) {
      const session = this.#session;
      if (!session) return;
      session.switchMode(m.to).catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        this.#sendText(client, JSON.stringify({ type: 'error', message: `mode ${String(m.to)}: ${reason}` }));
      });
    }
  }

  /** The writer's window: the terminal UI (now and later ones) and the mirror take it; everyone is told. */
  resize(cols: number, rows: number): void {
    const session = this.#session;
    if (!session) return;
    session.terminal.resize(cols, rows);
    this.#mirror?.resize(cols, rows);
    this.#broadcastStatus();
  }

  /** Closes every client (the server stops); the session is the host's. */
  close(code: number = TERMINAL_CLOSE.serverStopping, reason = 'the server is stopping'): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe = [];
    for (const client of [...this.#clients.values()]) {
      client.socket.close(code, reason);
      setTimeout(() => client.socket.terminate(), CUT_GRACE_MS).unref();
    }
    this.#clients.clear();
    for (const [socket, waiting] of this.#waitingWriters) {
      clearTimeout(waiting.timer);
      socket.close(code, reason);
    }
    this.#waitingWriters.clear();
    this.#watchStalls();
    this.#mirror?.dispose();
    this.#mirror = undefined;
    this.#opts.onClosed(this);
  }

  /** A new terminal UI draws from a blank screen, at the size it actually got. */
  #newMirror(session: Session): void {
    const size = session.terminal.dimensions() ?? DEFAULT_SIZE;
    if (this.#mirror) {
      this.#mirror.reset();
      this.#mirror.resize(size.cols, size.rows);
    } else this.#mirror = new TerminalMirror(size.cols, size.rows);
  }

  #sessionEnded(session: Session): void {
    if (this.#session !== session) return;
    this.close(TERMINAL_CLOSE.sessionEnded, 'the session ended');
  }

  #output(data: string): void {
    this.#mirror?.write(data);
    if (this.#clients.size === 0) return;
    const bytes = Buffer.from(data, 'utf8');
    for (const client of [...this.#clients.values()]) {
      if (client.pending) {
        client.pending.push(bytes);
        client.pendingBytes += bytes.byteLength;
        if (client.pendingBytes > this.#opts.maxBufferedBytes) this.#cut(client);
      } else this.#send(client, bytes);
    }
  }

  #status(client: Client): TerminalStatus {
    const session = this.#session;
    const size = session?.terminal.dimensions() ?? (this.#mirror ? { cols: this.#mirror.cols, rows: this.#mirror.rows } : DEFAULT_SIZE);
    return {
      type: 'status',
      sessionId: this.sessionId,
      mode: this.#mode,
      role: client.role,
      writerAttached: this.writerAttached,
      cols: size.cols,
      rows: size.rows,
      running: session?.terminal.attached ?? false,
    };
  }

  #sendStatus(client: Client): void {
    this.#sendText(client, JSON.stringify(this.#status(client)));
  }

  #broadcastStatus(): void {
    for (const client of [...this.#clients.values()]) this.#sendStatus(client);
  }

  #sendText(client: Client, text: string): void {
    this.#send(client, text);
  }

  /** Sends unless the client's unsent bytes would pass the bound: then it is cut. */
  #send(client: Client, data: string | Uint8Array): void {
    if (!this.#clients.has(client.socket)) return;
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    if (client.socket.bufferedAmount + size > this.#opts.maxBufferedBytes) {
      this.#cut(client);
      return;
    }
    try {
      client.socket.send(data);
    } catch {
      this.leave(client.socket);
    }
  }

  /** Runs the stall check while clients are connected, and only then. */
  #watchStalls(): void {
    const timeoutMs = this.#opts.writeTimeoutMs ?? 30_000;
    if (this.#clients.size > 0 && !this.#stallCheck) {
      this.#stallCheck = setInterval(() => this.#checkStalls(timeoutMs), Math.min(1000, timeoutMs));
      this.#stallCheck.unref?.();
    } else if (this.#clients.size === 0 && this.#stallCheck) {
      clearInterval(this.#stallCheck);
      this.#stallCheck = undefined;
    }
  }

  /** Cuts a client whose unsent bytes neither emptied nor shrank for `timeoutMs`. */
  #checkStalls(timeoutMs: number): void {
    const now = (this.#opts.now ?? Date.now)();
    for (const client of [...this.#clients.values()]) {
      const buffered = client.socket.bufferedAmount;
      if (buffered === 0 || buffered < client.lastBuffered) client.stalledSince = undefined;
      else if (client.stalledSince === undefined) client.stalledSince = now;
      else if (now - client.stalledSince >= timeoutMs) {
        this.#cut(client);
        continue;
      }
      client.lastBuffered = buffered;
    }
  }

  #cut(client: Client): void {
    this.#clients.delete(client.socket);
    this.#watchStalls();
    client.socket.close(TERMINAL_CLOSE.tooSlow, 'too slow: terminal output not read');
    // The close frame waits behind the unread output: give it a moment, then drop the connection.
    setTimeout(() => client.socket.terminate(), CUT_GRACE_MS).unref();
    if (client.role === 'writer') this.#writerGone();
  }
}

function isSize(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max;
}

/** Its close is under way (the WebSocket's readyState says closing or closed), where the socket tells. */
function isClosing(socket: TerminalSocket): boolean {
  return socket.readyState !== undefined && socket.readyState >= 2;
}
