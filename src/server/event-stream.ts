/**
 * One client's `GET /api/sessions/:id/events`: Server-Sent Events. Durable transcript entries go
 * out as `event: entry` frames with `id: <seq>`; first those after the client's cursor
 * (`Last-Event-ID` or `?after_seq=`) read from the journal, then live ones, each exactly once (the
 * live feed is buffered while the journal is read, and anything at or below the last seq sent is
 * skipped). Everything else (text deltas, status, presence, prompts, inspection) goes out without an
 * id, so it never moves the client's cursor. A cursor the journal cannot serve gets a `gap` frame.
 * A client that stops reading is cut off (it resumes from its cursor, losing nothing durable).
 */
import type { JournaledEntry, TranscriptEntry } from '../events/transcript-entry.js';
import type { TranscriptJournal } from '../runtime/journal/transcript-journal.js';

const encoder = new TextEncoder();
/** Entries read from the journal per page while replaying. */
const REPLAY_PAGE = 500;

export interface EventStreamOptions {
  sessionId: string;
  journal: TranscriptJournal;
  /** The last seq the client has (0: none). */
  cursor: number;
  /** Frames a client may have unread before it is cut off. */
  maxQueuedFrames: number;
  /** Whether the client asked for the inspector's frames (`?inspect=1`). */
  inspect: boolean;
  /** Subscribes to the session's durable entries as they are journaled (with the frame, encoded once for all streams); returns the unsubscribe. */
  watchDurable(listener: (entry: JournaledEntry, frame: Uint8Array) => void): () => void;
  onClose(stream: EventStream): void;
}

/** Formats one SSE frame (multi-line data split into `data:` lines, as the format requires). */
export function sseFrame(event: string, data: unknown, id?: number): string {
  const json = JSON.stringify(data);
  const lines = json.split('\n').map((l) => `data: ${l}`).join('\n');
  return `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\n${lines}\n\n`;
}

/** A frame as bytes: what a broadcast encodes once and hands to every stream. */
export function encodeFrame(event: string, data: unknown, id?: number): Uint8Array {
  return encoder.encode(sseFrame(event, data, id));
}

export class EventStream {
  readonly response: ReadableStream<Uint8Array>;
  readonly opts: EventStreamOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #closed = false;
  #lastSeq: number;
  #replaying = true;
  #buffered: [JournaledEntry, Uint8Array][] = [];
  #unwatch: (() => void) | undefined;

  constructor(opts: EventStreamOptions) {
    this.opts = opts;
    this.#lastSeq = opts.cursor;
    this.response = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          // Retry hint for EventSource, and a comment so proxies flush the headers at once.
          controller.enqueue(encoder.encode('retry: 1000\n: connected\n\n'));
        },
        cancel: () => this.close(),
      },
      new CountQueuingStrategy({ highWaterMark: opts.maxQueuedFrames }),
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Replays from the cursor, then goes live. Call once, right after construction. */
  async start(): Promise<void> {
    const { journal, sessionId } = this.opts;
    this.#unwatch = this.opts.watchDurable((entry, frame) => {
      if (this.#replaying) this.#buffered.push([entry, frame]);
      else this.#durable(entry, frame);
    });
    try {
      const bounds = (await journal.bounds?.(sessionId)) ?? { firstSeq: 0, lastSeq: Number.POSITIVE_INFINITY };
      if (this.#lastSeq > bounds.lastSeq) {
        // A cursor from the future: this journal was reset (the session deleted and recreated, or another store).
        this.ephemeral('gap', { reason: 'ahead', afterSeq: this.#lastSeq, firstSeq: bounds.firstSeq, lastSeq: bounds.lastSeq });
        this.#lastSeq = 0;
      } else if (bounds.firstSeq > this.#lastSeq + 1) {
        this.ephemeral('gap', { reason: 'trimmed', afterSeq: this.#lastSeq, firstSeq: bounds.firstSeq, lastSeq: bounds.lastSeq });
      }
      for (;;) {
        const page = (await journal.read(sessionId, { afterSeq: this.#lastSeq, limit: REPLAY_PAGE })) as TranscriptEntry[];
        for (const entry of page) this.#durable(entry as JournaledEntry);
        if (page.length < REPLAY_PAGE || this.#closed) break;
      }
    } catch (error) {
      this.ephemeral('error', { code: 'JOURNAL_IO', message: `replaying the journal failed: ${error instanceof Error ? error.message : String(error)}` });
      this.close();
      return;
    }
    this.#replaying = false;
    const buffered = this.#buffered;
    this.#buffered = [];
    for (const [entry, frame] of buffered) this.#durable(entry, frame);
    this.ephemeral('live', { lastSeq: this.#lastSeq });
  }

  /** A frame without an id (not part of the durable transcript). */
  ephemeral(event: string, data: unknown): void {
    this.#write(encodeFrame(event, data));
  }

  /** An ephemeral frame already encoded (a broadcast). */
  write(frame: Uint8Array): void {
    this.#write(frame);
  }

  #durable(entry: JournaledEntry, frame?: Uint8Array): void {
    if (entry.seq <= this.#lastSeq) return;
    this.#lastSeq = entry.seq;
    this.#write(frame ?? encodeFrame('entry', entry, entry.seq));
  }

  #write(bytes: Uint8Array): void {
    if (this.#closed) return;
    const backlog = -(this.#controller.desiredSize ?? 0);
    if (backlog > 0) {
      // The client stopped reading: cut it off rather than hold an unbounded queue for it.
      this.close();
      return;
    }
    this.#controller.enqueue(bytes);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch?.();
    try {
      this.#controller.close();
    } catch {
      // already closed or cancelled by the client
    }
    this.opts.onClose(this);
  }
}
