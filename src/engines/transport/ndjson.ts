/**
 * NDJSON parsing and writing.
 *
 * `parseLine` never throws: non-JSON lines come back as `{ ok: false }` results (log and skip
 * them — the session survives protocol drift), blank lines as `undefined`.
 *
 * `NdjsonWriter` serializes each value with `JSON.stringify` + '\n' and hands it to the stream as
 * ONE `write` (a partial line on an agent's stdin is fatal for Claude Code). Writes go through a
 * single ordered queue that waits for 'drain' whenever the stream signals backpressure. Once the
 * stream errors, closes or is ended, every queued and later write rejects with
 * an AseError with code `CONNECTION_CLOSED`, so pending writes never hang when the transport goes away.
 */
import type { Writable } from 'node:stream';
import { AseError, errorMessage } from '../../errors.js';

export type ParseResult = { ok: true; value: unknown } | { ok: false; error: Error; line: string };

/** Parses one line. Returns `undefined` for blank lines; never throws. */
export function parseLine(line: string): ParseResult | undefined {
  if (line.trim() === '') return undefined;
  try {
    return { ok: true, value: JSON.parse(line) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)), line };
  }
}

/** Every write after the stream went away rejects with this: an AseError with code `CONNECTION_CLOSED`. */
const streamClosed = (message: string, cause?: unknown): AseError => new AseError('CONNECTION_CLOSED', message, cause !== undefined ? { cause } : {});

interface QueuedWrite {
  data: string;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class NdjsonWriter {
  private readonly queue: QueuedWrite[] = [];
  private readonly inFlight = new Set<QueuedWrite>();
  private pumping = false;
  private failure: AseError | undefined;
  private endPromise: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  /** `onLine` sees each serialized line (without '\n') as it is queued, e.g. for a traffic tap. */
  constructor(
    private readonly stream: Writable,
    private readonly onLine?: (line: string) => void,
  ) {
    // Listening to 'error' also keeps an EPIPE on a dead child's stdin from crashing the host.
    stream.on('error', (error) => this.fail(streamClosed(`NDJSON stream errored: ${error.message}`, error)));
    stream.on('close', () => this.fail(streamClosed('NDJSON stream closed')));
    if (stream.destroyed || stream.writableEnded) this.fail(streamClosed('NDJSON stream already closed'));
  }

  /** True once the stream can no longer be written to. */
  get closed(): boolean {
    return this.failure !== undefined || this.endPromise !== undefined;
  }

  /**
   * Queues one value as one line. Resolves when the stream has accepted the line (its write
   * callback ran); rejects on serialization failure or when the stream is closed/errored/ended.
   */
  write(value: unknown): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.endPromise) return Promise.reject(streamClosed('NDJSON writer was ended'));
    let data: string | undefined;
    try {
      data = JSON.stringify(value);
    } catch (error) {
      return Promise.reject(new AseError('INVALID_INPUT', `value is not JSON-serializable: ${errorMessage(error)}`, { cause: error }));
    }
    if (data === undefined) return Promise.reject(new AseError('INVALID_INPUT', `value is not JSON-serializable: ${typeof value}`));
    this.onLine?.(data);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ data: data + '\n', resolve, reject });
      void this.pump();
    });
  }

  /** Flushes everything queued, then ends the stream. Idempotent. */
  end(): Promise<void> {
    this.endPromise ??= (async () => {
      await this.drained();
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve, reject) => {
        this.stream.end(() => resolve());
        // 'close' without 'finish' (destroyed during end) must not hang.
        this.stream.once('close', () => (this.stream.writableFinished ? resolve() : reject(streamClosed('NDJSON stream closed before finishing'))));
      });
    })();
    return this.endPromise;
  }

  private idleWaiters: Array<() => void> = [];

  private drained(): Promise<void> {
    if (!this.pumping && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const item = this.queue.shift()!;
        if (this.failure) {
          item.reject(this.failure);
          continue;
        }
        // Some streams never call back a write that was in flight when they were destroyed
        // (a Transform holds it until read), so in-flight writes are also settled by fail().
        this.inFlight.add(item);
        const ok = this.stream.write(item.data, (error) => {
          this.inFlight.delete(item);
          if (error) item.reject(this.failure ?? streamClosed(`NDJSON write failed: ${error.message}`, error));
          else item.resolve();
        });
        if (!ok && !this.failure) {
          await new Promise<void>((resolve) => {
            const onDrain = (): void => done();
            const done = (): void => {
              this.stream.off('drain', onDrain);
              this.wake = undefined;
              resolve();
            };
            this.wake = done;
            this.stream.on('drain', onDrain);
          });
        }
      }
    } finally {
      this.pumping = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private fail(error: AseError): void {
    if (this.failure) return;
    this.failure = error;
    for (const item of this.queue.splice(0)) item.reject(error);
    for (const item of this.inFlight) item.reject(error);
    this.inFlight.clear();
    this.wake?.();
  }
}
