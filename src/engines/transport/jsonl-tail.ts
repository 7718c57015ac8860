/**
 * Follows a JSONL file another process appends to (an agent's transcript) from a byte offset:
 * `fs.watch` wakes the reader, a poll is the fallback, reads are serial and a trailing partial line
 * waits for its newline. `catchUp()` reads to the current end (call it when the agent says a turn
 * ended, and before reporting an exit, so nothing written is missed). A file that does not exist
 * yet is waited for. Malformed lines are handed to `onInvalid`, never thrown.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, stat } from 'node:fs/promises';

export interface JsonlTailOptions {
  path: string;
  /** Byte offset to start at (default: the end of the file when tailing starts, 0 if it is missing). */
  from?: number;
  onLine(value: unknown, raw: string): void;
  onInvalid?(raw: string, error: unknown): void;
  /** Fallback poll period; default 250 ms. */
  pollIntervalMs?: number;
}

export class JsonlTail {
  readonly path: string;
  #offset = 0;
  #carry = '';
  #chain: Promise<void> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #options: JsonlTailOptions;

  private constructor(options: JsonlTailOptions) {
    this.#options = options;
    this.path = options.path;
  }

  /** Starts following `options.path`; the start offset is fixed before this resolves. */
  static async start(options: JsonlTailOptions): Promise<JsonlTail> {
    const tail = new JsonlTail(options);
    tail.#offset = options.from ?? (await stat(options.path).then((s) => s.size, () => 0));
    tail.#timer = setInterval(() => void tail.catchUp(), options.pollIntervalMs ?? 250);
    tail.#timer.unref();
    tail.#watch();
    return tail;
  }

  /** Bytes consumed so far (complete lines only). */
  get offset(): number {
    return this.#offset;
  }

  /** Reads everything appended so far; resolves after the lines were delivered. */
  catchUp(): Promise<void> {
    this.#chain = this.#chain.then(() => this.#read()).catch(() => undefined);
    return this.#chain;
  }

  /** Stops following after a last read to the end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.catchUp();
    this.#closed = true;
    clearInterval(this.#timer);
    this.#watcher?.close();
  }

  #watch(): void {
    if (this.#watcher || this.#closed) return;
    try {
      this.#watcher = watch(this.path, () => void this.catchUp());
      this.#watcher.on('error', () => {
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch {
      // Not there yet: the poll reads it once it appears.
    }
  }

  async #read(): Promise<void> {
    if (this.#closed) return;
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch {
      return; // Not created yet.
    }
    this.#watch();
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.#offset + Buffer.byteLength(this.#carry));
        if (bytesRead === 0) break;
        const text = this.#carry + buffer.subarray(0, bytesRead).toString('utf8');
        const lines = text.split('\n');
        this.#carry = lines.pop() ?? '';
        for (const line of lines) {
          this.#offset += Buffer.byteLength(line) + 1;
          if (line.trim() === '') continue;
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch (error) {
            this.#options.onInvalid?.(line, error);
            continue;
          }
          this.#options.onLine(value, line);
        }
      }
    } finally {
      await handle.close();
    }
  }
}
