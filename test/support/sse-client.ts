/**
 * A small Server-Sent Events reader over fetch for the server tests: parses frames (`id`, `event`,
 * `data`), sends `Last-Event-ID`, and can be cut at any moment (abort), like a dropped connection.
 */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

export interface SseConnection {
  status: number;
  frames: SseFrame[];
  /** Resolves with the first frame (from the start) that `predicate` accepts. */
  waitFor(predicate: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Drops the connection. */
  cut(): void;
  /** Resolves when the server ended the stream (or it was cut). */
  ended: Promise<void>;
  /** How the stream ended, once it has: `done` (the server ended it) or the reader's error. */
  readonly endReason: string | undefined;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let ended: Promise<void> = Promise.resolve();
  let endReason: string | undefined;
  /** The bytes after the last complete frame (what a failure message shows). */
  let rest = '';
  if (response.ok && response.body) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    ended = (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) {
            endReason = 'done';
            break;
          }
          buffer += decoder.decode(value, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const frame: SseFrame = { event: 'message', data: '' };
            const data: string[] = [];
            let any = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':') || line === '') continue;
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') frame.id = value;
              else if (field === 'event') frame.event = value;
              else if (field === 'data') data.push(value);
              else continue;
              any = true;
            }
            if (!any || data.length === 0) continue;
            frame.data = data.join('\n');
            frames.push(frame);
          }
          rest = buffer;
          notify();
        }
      } catch (error) {
        // cut (by us, or the connection failed)
        endReason = `error: ${error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error)}`;
      }
      notify();
    })();
  } else {
    endReason = `status ${response.status}`;
    await response.body?.cancel();
  }
  let finished = false;
  void ended.then(() => (finished = true));
  return {
    status: response.status,
    frames,
    ended,
    get endReason() {
      return endReason;
    },
    cut: () => controller.abort(),
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.find(predicate);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          } else if (finished) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`stream ended (${endReason}) without the frame; got ${frames.map((f) => f.event).join(',')}; then ${JSON.stringify(rest.slice(0, 300))}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching frame in ${timeoutMs} ms; got ${frames.map((f) => f.event).join(',')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** The durable entries among frames, parsed. */
export function entriesOf(frames: readonly SseFrame[]): { seq: number; eventId: string; type: string }[] {
  return frames.filter((f) => f.event === 'entry').map((f) => ({ ...(JSON.parse(f.data) as { seq: number; eventId: string; type: string }), frameId: f.id }));
}
