/**
 * One client's `GET /api/sessions/:id/events`: Server-Sent Events. Durable transcript entries go
 * out as `event: entry` frames with `id: <seq>`; first those after the client's cursor
 * (`Last-Event-ID` or `?after_seq=`) read from the journal, then live ones, each exactly once (the
 * live feed is buffered while the journal is read, and anything at or below the last seq sent is
 * skipped). Everything else (text deltas, status, presence, prompts, inspection) goes out without an
 * id, so it never moves the client's cursor. A cursor the journal cannot serve gets a `gap` frame.
 * A client that stops reading is cut off (it resumes from its cursor, losing nothing durable).
 *
 * Memory per client is bounded by bytes: frames wait in this stream's own queue (the response body
 * pulls from it only as fast as the socket takes them, so the queue measures exactly what the client
 * has not taken). Live frames that would push it past `maxQueuedBytes`, or a queue the client has not
 * taken from for `writeTimeoutMs`, cut the client off: its queue is dropped at once and the
 * connection reset (`reset`; ending it gracefully would wait for the stalled socket to take the rest).
 * The replay never outruns the client: it waits for room before each chunk of frames
 * (entry-frames.ts: a page's frames in a few buffers, from the journal's JSON text), so a full
 * replay of a long session costs a bounded queue, not the session's size. Entries journaled meanwhile are held
 * up to the same bound; past it they are dropped and read from the journal again instead.
 * Replays share the event loop (loop-budget.ts): small pages, and a pause for the loop to turn
 * whenever the replays of this process have run 10 ms, so ten long replays never stall a request.
 */
import type { JournaledEntry, TranscriptEntry } from '../events/transcript-entry.js';
import { readJsonEntries, type TranscriptJournal } from '../effects/journal/transcript-journal.js';
import { entryFrameChunks } from './entry-frames.js';
import { replayBudget } from './loop-budget.js';

const encoder = new TextEncoder();
/**
 * Entries read from the journal per page while replaying, at most... (a page is parsed in one go
 * when its read completes: 256 entries of ~300 bytes take a few ms; at most two pages are read at
 * once, loop-budget.ts, so their parses cannot pile up in one turn of the loop as ten did)
 */
const REPLAY_PAGE = 256;
/** ...and about this many bytes (a page of long entries is shorter, so a replay holds little at once). */
const REPLAY_PAGE_BYTES = 256 * 1024;
/** A replayed page goes out in chunks of frames of at most this many bytes (entry-frames.ts), and at most a quarter of the client's queue bound. */
const REPLAY_CHUNK_BYTES = 64 * 1024;

export interface EventStreamOptions {
  sessionId: string;
  journal: TranscriptJournal;
  /** The last seq the client has (0: none). */
  cursor: number;
  /** Bytes a client may have untaken before it is cut off. */
  maxQueuedBytes: number;
  /** How long a client may take nothing while frames wait for it before it is cut off. */
  writeTimeoutMs: number;
  /** Whether the client asked for the inspector's frames (`?inspect=1`). */
  inspect: boolean;
  /** Subscribes to the session's durable entries as they are journaled (with the frame, encoded once for all streams); returns the unsubscribe. */
  watchDurable(listener: (entry: JournaledEntry, frame: Uint8Array) => void): () => void;
  onClose(stream: EventStream): void;
  /**
   * Drops the client's connection (its socket and the kernel buffers with it): how a cut-off client
   * is let go without waiting for it to take what the socket still holds. Default: none (the stream
   * just ends).
   */
  reset?: () => void;
  /** The clock (tests). Default `Date.now`. */
  now?: () => number;
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
  /** Live entries heard while replaying, and their bytes; `#overflowed`: some were dropped (read them from the journal again). */
  #held: [JournaledEntry, Uint8Array][] = [];
  #heldBytes = 0;
  #overflowed = false;
  #unwatch: (() => void) | undefined;
  /** Frames the client has not taken yet (the response pulls from here), and their bytes. */
  #queue: Uint8Array[] = [];
  #queueHead = 0;
  #queuedBytes = 0;
  /** Set while the response waits for a frame (the client has taken everything). */
  #wantsMore: (() => void) | undefined;
  /** When the client last took a frame, and when the queue last started filling. */
  #lastTakenAt: number;
  #queueStartedAt = 0;
  /** The replay waiting for room in the queue. */
  #roomWaiter: (() => void) | undefined;
  readonly #now: () => number;
  /** Replay chunks fit twice into the room the replay waits for (half the queue bound). */
  readonly #chunkBytes: number;

  constructor(opts: EventStreamOptions) {
    this.opts = opts;
    this.#chunkBytes = Math.max(1, Math.min(REPLAY_CHUNK_BYTES, Math.floor(opts.maxQueuedBytes / 4)));
    this.#lastSeq = opts.cursor;
    this.#now = opts.now ?? Date.now;
    this.#lastTakenAt = this.#now();
    this.response = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          // Retry hint for EventSource, and a comment so proxies flush the headers at once.
          controller.enqueue(encoder.encode('retry: 1000\n: connected\n\n'));
        },
        pull: (controller) => this.#pull(controller),
        cancel: () => this.close(),
      },
      // Nothing queued inside the ReadableStream itself: every untaken byte is in #queue, counted.
      { highWaterMark: 0 },
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Where the stream is, for a debugger: replaying the journal, live or closed; the last seq it sent; live entries held meanwhile; whether the replay waits for room. */
  get state(): { phase: 'replaying' | 'live' | 'closed'; lastSeq: number; held: number; waitingForRoom: boolean } {
    const phase = this.#closed ? 'closed' : this.#replaying ? 'replaying' : 'live';
    return { phase, lastSeq: this.#lastSeq, held: this.#held.length, waitingForRoom: this.#roomWaiter !== undefined };
  }

  /** Bytes waiting for the client (what a stalled client costs). */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Replays from the cursor, then goes live. Call once, right after construction. */
  async start(): Promise<void> {
    const { journal, sessionId } = this.opts;
    this.#unwatch = this.opts.watchDurable((entry, frame) => {
      if (!this.#replaying) return void this.#durable(entry, frame);
      if (this.#overflowed) return;
      this.#held.push([entry, frame]);
      this.#heldBytes += frame.byteLength;
      if (this.#heldBytes > this.opts.maxQueuedBytes) {
        // The replay is slower than the session: drop what is held, read it from the journal after.
        this.#held = [];
        this.#heldBytes = 0;
        this.#overflowed = true;
      }
    });
    try {
      await this.#replay();
    } catch (error) {
      this.ephemeral('error', { code: 'JOURNAL_IO', message: `replaying the journal failed: ${error instanceof Error ? error.message : String(error)}` });
      this.close();
      return;
    }
  }

  /**
   * Sends everything after the cursor: pages from the journal, then the live entries held meanwhile,
   * both waiting for room in the queue (a client slow to take the replay's last pages still has them
   * queued at the hand-over, so the held entries must wait too rather than cut it off). Held entries
   * that overflowed are read from the journal again. Returns live, with nothing held (or closed).
   */
  async #replay(): Promise<void> {
    const { journal, sessionId } = this.opts;
    const bounds = (await journal.bounds?.(sessionId)) ?? { firstSeq: 0, lastSeq: Number.POSITIVE_INFINITY };
    if (this.#lastSeq > bounds.lastSeq) {
      // A cursor from the future: this journal was reset (the session deleted and recreated, or another store).
      this.ephemeral('gap', { reason: 'ahead', afterSeq: this.#lastSeq, firstSeq: bounds.firstSeq, lastSeq: bounds.lastSeq });
      this.#lastSeq = 0;
    } else if (bounds.firstSeq > this.#lastSeq + 1) {
      this.ephemeral('gap', { reason: 'trimmed', afterSeq: this.#lastSeq, firstSeq: bounds.firstSeq, lastSeq: bounds.lastSeq });
    }
    do {
      this.#overflowed = false;
      let limit = REPLAY_PAGE;
      for (;;) {
        await replayBudget.pause();
        if (this.#closed) return;
        const afterSeq = this.#lastSeq;
        const page = await replayBudget.reading(() => readJsonEntries(journal, sessionId, { afterSeq, limit }));
        await replayBudget.pause(); // framing the page is a step of its own
        if (this.#closed) return;
        let pageBytes = 0;
        for (const chunk of entryFrameChunks(page, this.#chunkBytes)) {
          await this.#room();
          if (this.#closed) return;
          this.#write(chunk.bytes);
          this.#lastSeq = chunk.lastSeq;
          pageBytes += chunk.bytes.byteLength;
        }
        if (page.length < limit || this.#closed) break;
        limit = Math.max(1, Math.min(REPLAY_PAGE, Math.floor(REPLAY_PAGE_BYTES / Math.max(1, pageBytes / page.length))));
      }
      // The hand-over: what was held, oldest first, as room allows (more may be held meanwhile).
      while (!this.#overflowed && this.#held.length > 0) {
        await this.#room();
        if (this.#closed) return;
        const [entry, frame] = this.#held.shift()!;
        this.#heldBytes -= frame.byteLength;
        this.#durable(entry, frame);
      }
    } while (this.#overflowed && !this.#closed);
    if (this.#closed) return;
    // Synchronously after the last hand-over step: an entry heard from here on goes out live, after this frame.
    this.#replaying = false;
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

  /** Sends an entry unless the client has it; returns the frame's bytes (0: skipped). */
  #durable(entry: JournaledEntry, frame?: Uint8Array): number {
    if (entry.seq <= this.#lastSeq) return 0;
    this.#lastSeq = entry.seq;
    const bytes = frame ?? encodeFrame('entry', entry, entry.seq);
    this.#write(bytes);
    return bytes.byteLength;
  }

  #write(bytes: Uint8Array): void {
    if (this.#closed) return;
    if (this.#wantsMore) {
      // The client is waiting: hand it over without queueing.
      const resume = this.#wantsMore;
      this.#wantsMore = undefined;
      this.#controller.enqueue(bytes);
      resume();
      return;
    }
    const now = this.#now();
    if (this.#queuedBytes > 0 && now - Math.max(this.#lastTakenAt, this.#queueStartedAt) > this.opts.writeTimeoutMs) {
      this.#cut(`took nothing for ${this.opts.writeTimeoutMs} ms`);
      return;
    }
    if (this.#queuedBytes + bytes.byteLength > this.opts.maxQueuedBytes) {
      this.#cut(`over ${this.opts.maxQueuedBytes} bytes untaken`);
      return;
    }
    if (this.#queuedBytes === 0) this.#queueStartedAt = now;
    this.#queue.push(bytes);
    this.#queuedBytes += bytes.byteLength;
  }

  /** The response wants the next frame: give the oldest, or wait for one. */
  #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> | void {
    this.#lastTakenAt = this.#now();
    if (this.#queueHead < this.#queue.length) {
      const bytes = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead++] = EMPTY;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#queueHead);
        this.#queueHead = 0;
      }
      this.#queuedBytes -= bytes.byteLength;
      controller.enqueue(bytes);
      if (this.#roomWaiter && this.#queuedBytes <= this.opts.maxQueuedBytes / 2) {
        const wake = this.#roomWaiter;
        this.#roomWaiter = undefined;
        wake();
      }
      return;
    }
    if (this.#closed) return;
    return new Promise<void>((resolve) => {
      this.#wantsMore = resolve;
    });
  }

  /** Resolves once the queue is at most half full; cuts the client off if it takes nothing for writeTimeoutMs. */
  #room(): Promise<void> | void {
    if (this.#closed || this.#queuedBytes <= this.opts.maxQueuedBytes / 2) return;
    return new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (this.#closed) done();
        else if (this.#now() - Math.max(this.#lastTakenAt, this.#queueStartedAt) > this.opts.writeTimeoutMs) {
          this.#cut(`took nothing for ${this.opts.writeTimeoutMs} ms`);
          done();
        }
      }, Math.min(1000, this.opts.writeTimeoutMs));
      check.unref?.();
      const done = () => {
        clearInterval(check);
        if (this.#roomWaiter === done) this.#roomWaiter = undefined;
        resolve();
      };
      this.#roomWaiter = done;
    });
  }

  /** A client that stopped taking frames (`reason`, for a debugger): drop its queue now and reset the connection. */
  #cut(reason: string): void {
    if (this.#closed) return;
    this.cutReason = reason;
    this.#free();
    this.#finish(() => {
      try {
        this.#controller.close();
      } catch {
        // already closed or cancelled by the client
      }
      this.opts.reset?.();
    });
  }

  /** Why this client was cut off, if it was. */
  cutReason: string | undefined;

  /** Ends the stream: what is queued still goes out (an `error` frame before a close, say), then the end. */
  close(): void {
    if (this.#closed) return;
    this.#finish(() => {
      for (let i = this.#queueHead; i < this.#queue.length; i++) this.#controller.enqueue(this.#queue[i]!);
      this.#free();
      try {
        this.#controller.close();
      } catch {
        // already closed or cancelled by the client
      }
    });
  }

  #free(): void {
    this.#queue = [];
    this.#queueHead = 0;
    this.#queuedBytes = 0;
    this.#held = [];
    this.#heldBytes = 0;
  }

  #finish(end: () => void): void {
    this.#closed = true;
    this.#unwatch?.();
    this.#roomWaiter?.();
    end();
    // A pull waiting for a frame is answered by the close or the error itself.
    this.#wantsMore?.();
    this.#wantsMore = undefined;
    this.opts.onClose(this);
  }
}

const EMPTY = new Uint8Array(0);
