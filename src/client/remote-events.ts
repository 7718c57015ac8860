/**
 * A session's event stream from `ase serve` as an async iterable that reconnects by itself. Node
 * 24 has no global `EventSource`, and a browser's cannot send an `Authorization` header, so this
 * reads the stream with `fetch` (a streaming body) and parses it with `eventsource-parser`, a small,
 * well-kept SSE parser (used by the MCP SDK, the OpenAI and Vercel AI SDKs) that gets the corner
 * cases of the spec right (CR/LF/CRLF, a BOM, multi-line `data`, comments, `retry`), instead of one
 * more hand-written splitter.
 *
 * Nothing is lost or repeated: the cursor is the `seq` of the last durable entry handed to the
 * consumer; a reconnect sends it as `Last-Event-ID` (the server replays what came after it), a
 * frame cut in the middle is thrown away with its connection (a new parser per connection), and an
 * entry at or below the cursor is skipped. Ephemeral frames (text deltas, status, prompts) are
 * those of the connection that is open: a reconnect may miss some, as the server documents.
 *
 * Browser-safe: no `node:` import here or below.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import type { AgentEvent } from '../events/agent-event.js';
import { RemoteError, type RemoteTransport } from './remote-transport.js';

/** What `events(id)` yields: a durable entry (with its seq), or an ephemeral frame as the server sent it. */
export type RemoteEvent =
  | { type: 'entry'; seq: number; entry: TranscriptEntry }
  | { type: 'agent'; data: AgentEvent }
  | { type: RemoteFrameType; data: unknown };

/**
 * The ephemeral frames besides `agent` (docs/server.md, "The event stream"): `live` (`{lastSeq}`:
 * the replay is over), `snapshot`, `status`, `thinking`, `presence`, `permission_prompt`,
 * `permission_resolved`, `tree`, `error`, `done`, `gap`, `heartbeat`, `inspect`.
 */
export type RemoteFrameType = 'live' | 'snapshot' | 'status' | 'thinking' | 'presence' | 'permission_prompt' | 'permission_resolved' | 'tree' | 'error' | 'done' | 'gap' | 'heartbeat' | 'inspect';

export interface RemoteEventsOptions {
  /** Start after this seq (the last one you hold); default: from the first entry. */
  afterSeq?: number;
  /** Aborting it ends the iteration with an `AbortError`. */
  signal?: AbortSignal;
  /** Also the inspector's `inspect` frames. */
  inspect?: boolean;
  /** Reconnect when nothing (not even a heartbeat) came for this long. Default 45,000 ms (the server beats every 10 s at most). */
  idleTimeoutMs?: number;
  /** Longest wait between reconnects (they back off from the server's `retry`, 1 s, doubling). Default 10,000 ms. */
  maxRetryMs?: number;
  /** Told about each reconnect: the attempt, the cursor it resumes from, and why. */
  onReconnect?: (info: { attempt: number; afterSeq: number | undefined; reason: string }) => void;
}

/** The session's events; see the file comment. A refused stream (401, 404, ...) throws a `RemoteError` at once. */
export async function* remoteEvents(transport: RemoteTransport, sessionId: string, options: RemoteEventsOptions = {}): AsyncGenerator<RemoteEvent, void, undefined> {
  const { signal } = options;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const maxRetryMs = options.maxRetryMs ?? 10_000;
  let cursor = options.afterSeq;
  let retryMs = 1_000;
  let failures = 0;
  let reason = '';
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(signal);
    if (attempt > 0) {
      options.onReconnect?.({ attempt, afterSeq: cursor, reason });
      await sleep(Math.min(maxRetryMs, failures === 0 ? 0 : retryMs * 2 ** Math.min(failures - 1, 6)), signal);
    }
    const connection = new AbortController();
    const onAbort = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const armIdle = () => {
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    };
    try {
      const query = options.inspect ? '?inspect=1' : '';
      let response: Response;
      try {
        response = await transport.fetch(`/api/sessions/${encodeURIComponent(sessionId)}/events${query}`, {
          headers: { accept: 'text/event-stream', ...(cursor !== undefined && { 'last-event-id': String(cursor) }) },
          signal: connection.signal,
        });
      } catch (error) {
        throwIfAborted(signal);
        failures++;
        reason = `connect failed: ${messageOf(error)}`;
        continue;
      }
      if (!response.ok) {
        // The server or a proxy in trouble: try again. Anything else (401, 404, 400) will not get better.
        if (response.status >= 500 || response.status === 429) {
          failures++;
          reason = `HTTP ${response.status}`;
          await response.body?.cancel().catch(() => undefined);
          continue;
        }
        throw await RemoteError.fromResponse(response);
      }
      if (!response.body) throw new RemoteError('INTERNAL', 'the event stream has no body', response.status);
      const frames: EventSourceMessage[] = [];
      // A new parser per connection: what an earlier connection left half-sent is dropped with it.
      const parser = createParser({
        onEvent: (message) => void frames.push(message),
        onRetry: (ms) => {
          if (Number.isFinite(ms) && ms > 0) retryMs = ms;
        },
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let gotData = false;
      try {
        armIdle();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          armIdle();
          parser.feed(decoder.decode(value, { stream: true }));
          while (frames.length > 0) {
            const event = toRemoteEvent(frames.shift()!);
            if (!event) continue;
            if (event.type === 'entry') {
              const { seq } = event as { seq: number };
              if (cursor !== undefined && seq <= cursor) continue; // already handed out
              cursor = seq;
            }
            gotData = true;
            yield event;
          }
        }
        reason = 'the server ended the stream';
      } catch (error) {
        throwIfAborted(signal);
        reason = `the connection broke: ${messageOf(error)}`;
      } finally {
        await reader.cancel().catch(() => undefined);
      }
      // A connection that delivered something starts the backoff over.
      failures = gotData ? 0 : failures + 1;
    } finally {
      if (idle !== undefined) clearTimeout(idle);
      signal?.removeEventListener('abort', onAbort);
      connection.abort();
    }
  }
}

/** A frame as the consumer sees it; a frame whose data is not JSON is skipped (the server sends JSON only). */
function toRemoteEvent(message: EventSourceMessage): RemoteEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  const type = message.event ?? 'message';
  if (type === 'entry') {
    const seq = Number(message.id);
    if (!Number.isSafeInteger(seq)) return undefined;
    return { type: 'entry', seq, entry: data as TranscriptEntry };
  }
  return { type, data } as RemoteEvent;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    const error = new Error('events(): the signal was aborted', { cause: signal.reason });
    error.name = 'AbortError';
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
