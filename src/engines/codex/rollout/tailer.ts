/**
 * Follows a Codex rollout file while Codex appends to it and reports TailedEvents.
 *
 * - The file may not exist yet (Codex creates it at the first turn, in a dated directory that may
 *   not exist either): it is polled for until it appears.
 * - Once open, `fs.watch` wakes the reader on appends; a poll every `pollIntervalMs` is the
 *   fallback (watch events can be coalesced or missed, and some filesystems have none).
 * - Reads are serial, from the last read offset to EOF; a trailing partial line is carried until
 *   its newline arrives (rollout-reader.ts).
 * - `from` resumes after a stored cursor without repeating or skipping an event.
 * - A file that shrinks below the read offset (rewritten or truncated) stops tailing with an `io`
 *   diagnostic: offsets into it no longer mean anything.
 * - `close()` (or aborting `signal`) stops the watcher and the timer and waits for a read in
 *   progress; nothing is reported afterwards. Errors are diagnostics, never thrown.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { RolloutCursor, RolloutDiagnostic, TailedEvent } from './cursor.js';
import { RolloutReader } from './rollout-reader.js';

export interface TailerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RolloutTailerOptions {
  path: string;
  /** resume after this cursor */
  from?: RolloutCursor;
  onEvent: (event: TailedEvent) => void;
  onDiagnostic?: (diagnostic: RolloutDiagnostic) => void;
  signal?: AbortSignal;
  /** fallback poll period (also while waiting for the file to appear); default 250 ms */
  pollIntervalMs?: number;
  /** use fs.watch on the file (default true) */
  watch?: boolean;
  /** read buffer size; default 64 KiB */
  readChunkBytes?: number;
  maxLineBytes?: number;
  timers?: TailerTimers;
}

const globalTimers: TailerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class RolloutTailer {
  readonly reader: RolloutReader;
  private readonly options: RolloutTailerOptions;
  private readonly timers: TailerTimers;
  private readonly pollIntervalMs: number;
  private readonly buffer: Buffer;
  private handle: FileHandle | undefined;
  private watcher: FSWatcher | undefined;
  private timer: unknown;
  /** the last read pass queued (passes never overlap) */
  private chain: Promise<void> = Promise.resolve();
  /** a pass queued but not started yet */
  private queued: Promise<void> | undefined;
  private isClosed = false;
  private readonly onAbort = () => void this.close();

  constructor(options: RolloutTailerOptions) {
    this.options = options;
    this.timers = options.timers ?? globalTimers;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.buffer = Buffer.alloc(options.readChunkBytes ?? 64 * 1024);
    this.reader = new RolloutReader(options.path, {
      ...(options.from ? { from: options.from } : {}),
      ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
    });
    this.reader.onDiagnostic = (d) => {
      try {
        options.onDiagnostic?.(d);
      } catch {
        // a throwing diagnostics listener must not stop tailing
      }
    };
    if (options.signal?.aborted) {
      this.isClosed = true;
      return;
    }
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    void this.catchUp();
  }

  get path(): string {
    return this.options.path;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Resume point after the last complete line read. */
  get cursor(): RolloutCursor {
    return this.reader.cursor;
  }

  get diagnostics(): readonly RolloutDiagnostic[] {
    return this.reader.diagnostics;
  }

  /**
   * Reads everything the file holds now. Resolves after a read pass that started after this call
   * (so it sees every byte written before it), once that pass's events were reported.
   */
  catchUp(): Promise<void> {
    if (this.isClosed) return this.chain;
    if (!this.queued) {
      // Passes run one after another; callers arriving before the next pass starts share it.
      this.queued = this.chain = this.chain.then(async () => {
        this.queued = undefined;
        await this.readPass();
        this.schedulePoll();
      });
    }
    return this.queued;
  }

  async close(): Promise<void> {
    if (!this.isClosed) {
      this.isClosed = true;
      this.options.signal?.removeEventListener('abort', this.onAbort);
      this.watcher?.close();
      this.watcher = undefined;
      if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.chain;
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  private schedulePoll(): void {
    if (this.isClosed) return;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.catchUp();
    }, this.pollIntervalMs);
  }

  private async readPass(): Promise<void> {
    if (this.isClosed) return;
    if (!this.handle && !(await this.openFile())) return;
    const handle = this.handle!;
    try {
      const { size } = await handle.stat();
      if (size < this.reader.readOffset) {
        void this.close(); // first, so a consumer seeing the diagnostic sees `closed`
        this.diagnose({ kind: 'io', message: `rollout shrank from ${this.reader.readOffset} to ${size} bytes; tailing stopped` });
        return;
      }
      for (;;) {
        if (this.isClosed) return;
        const { bytesRead } = await handle.read(this.buffer, 0, this.buffer.length, this.reader.readOffset);
        if (bytesRead === 0 || this.isClosed) return;
        for (const event of this.reader.push(this.buffer.subarray(0, bytesRead))) this.deliver(event);
      }
    } catch (error) {
      this.diagnose({ kind: 'io', message: `reading rollout failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  /** Opens the file if it exists now; starts watching it. */
  private async openFile(): Promise<boolean> {
    try {
      this.handle = await open(this.options.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.diagnose({ kind: 'io', message: `opening rollout failed: ${(error as Error).message}` });
      }
      return false; // not there yet: the poll retries
    }
    if (this.isClosed) {
      await this.handle.close().catch(() => undefined);
      this.handle = undefined;
      return false;
    }
    if (this.options.watch !== false) {
      try {
        this.watcher = watch(this.options.path, { persistent: false }, () => void this.catchUp());
        this.watcher.on('error', () => {
          // the poll keeps going
          this.watcher?.close();
          this.watcher = undefined;
        });
      } catch {
        // no watch support here: polling only
      }
    }
    return true;
  }

  private deliver(event: TailedEvent): void {
    if (this.isClosed) return;
    try {
      this.options.onEvent(event);
    } catch (error) {
      this.diagnose({ kind: 'listener', message: `onEvent threw: ${error instanceof Error ? error.message : String(error)}`, line: event.line });
    }
  }

  /** Tailer-level problems (I/O, listener) go through the reader so there is one list and one cap. */
  private diagnose(diagnostic: RolloutDiagnostic): void {
    this.reader.record(diagnostic);
  }
}

/** Starts following `options.path`; stop with `close()` or the AbortSignal. */
export function tailRollout(options: RolloutTailerOptions): RolloutTailer {
  return new RolloutTailer(options);
}
