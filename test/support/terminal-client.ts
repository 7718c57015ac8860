/**
 * A client of `GET /api/sessions/:id/terminal` for tests and benches (the `ws` library, as
 * `ase attach` uses it): collects status frames and output, and waits for conditions on them.
 */
import WebSocket from 'ws';

export interface TerminalStatusFrame {
  type: 'status';
  sessionId: string;
  mode: string;
  role: 'writer' | 'viewer';
  writerAttached: boolean;
  cols: number;
  rows: number;
  running: boolean;
}

export interface TerminalTestClient {
  socket: WebSocket;
  statuses: TerminalStatusFrame[];
  /** Every text frame that is not a status (e.g. `error`). */
  others: unknown[];
  /** All binary output so far, as text. */
  output(): string;
  /** Bytes of binary output so far. */
  bytes(): number;
  /** The last few KB of output, as text (cheap: for waiting on a flood's end). */
  tail(): string;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  type(text: string): void;
  control(message: unknown): void;
  close(): void;
}

/** The HTTP status of a refused upgrade, or the open client. */
export async function openTerminal(url: string, options: { headers?: Record<string, string>; role?: 'writer' | 'viewer'; ticket?: string } = {}): Promise<TerminalTestClient | { refused: number }> {
  const target = new URL(url.replace(/^http/, 'ws'));
  if (options.role) target.searchParams.set('role', options.role);
  if (options.ticket) target.searchParams.set('ticket', options.ticket);
  const socket = new WebSocket(target, { headers: options.headers ?? {} });
  const statuses: TerminalStatusFrame[] = [];
  const others: unknown[] = [];
  const chunks: Buffer[] = [];
  let received = 0;
  let recent = Buffer.alloc(0);
  let text = '';
  let textUpTo = 0;
  const changed = new Set<() => void>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of changed) wake();
    });
  });
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      const chunk = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      chunks.push(chunk);
      received += chunk.byteLength;
      recent = Buffer.concat([recent, chunk]).subarray(-4096);
    }
    else {
      const frame = JSON.parse(data.toString()) as { type: string };
      if (frame.type === 'status') statuses.push(frame as TerminalStatusFrame);
      else others.push(frame);
    }
    for (const wake of changed) wake();
  });
  socket.on('error', () => undefined);
  const opened = await new Promise<number | true>((resolve) => {
    socket.once('open', () => resolve(true));
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      response.resume();
      socket.terminate();
    });
    socket.once('error', () => resolve(0));
  });
  if (opened !== true) return { refused: opened };
  const output = () => {
    if (chunks.length > textUpTo) {
      text += Buffer.concat(chunks.slice(textUpTo)).toString('utf8');
      textUpTo = chunks.length;
    }
    return text;
  };
  return {
    socket,
    statuses,
    others,
    output,
    bytes: () => received,
    tail: () => recent.toString('utf8'),
    closed,
    waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const attempt = () => {
          const value = check();
          if (value !== undefined && value !== false) {
            done();
            resolve(value);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`terminal client: no ${what} within ${timeoutMs} ms; statuses ${JSON.stringify(statuses.at(-1))}; output tail ${JSON.stringify(output().slice(-300))}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          changed.delete(attempt);
        };
        changed.add(attempt);
        attempt();
      });
    },
    type: (keys) => socket.send(Buffer.from(keys, 'utf8')),
    control: (message) => socket.send(JSON.stringify(message)),
    close: () => socket.close(),
  };
}
