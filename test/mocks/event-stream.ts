/**
 * Server-sent-event responses of the mock model servers: the stream's headers, frames written with
 * a per-event delay (a "slow stream" a test can interrupt), and text cut into delta pieces.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `text` in at most `pieces` consecutive pieces (at least one, `['']` for an empty text). */
export function split(text: string, pieces: number): string[] {
  const n = Math.max(1, Math.min(pieces, text.length || 1));
  const size = Math.ceil(text.length / n) || 1;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/** One named SSE event whose data is `data` as JSON. */
export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface EventStreamOptions {
  /** pause after every frame in ms (default 0) */
  delayMs?: number;
  /** true once the mock is closing: frames are dropped from then on */
  stopped(): boolean;
  /** added to the `text/event-stream` headers */
  headers?: OutgoingHttpHeaders;
}

/**
 * Sends the 200 `text/event-stream` head and returns the frame writer. A frame is dropped when the
 * mock is closing or the client went away (an interrupted turn), so a script never writes to a
 * dead socket.
 */
export function openEventStream(res: ServerResponse, options: EventStreamOptions): (frame: string) => Promise<void> {
  const delayMs = options.delayMs ?? 0;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...options.headers });
  return async (frame) => {
    if (options.stopped() || res.destroyed) return;
    res.write(frame);
    if (delayMs > 0) await sleep(delayMs);
  };
}
