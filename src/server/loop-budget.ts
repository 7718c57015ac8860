/**
 * A share of the event loop for background work that comes in many small steps (replaying a long
 * journal to event-stream clients): the steps run back to back for at most `sliceMs`, then wait for
 * the loop to turn (timers, other requests, socket I/O) before the next slice.
 *
 * Why one budget for the process, not one per stream: the loop is one. Ten replays that each yield
 * every N entries still hold the loop for ten times N entries whenever their steps are ready in the
 * same phase (the 275 ms stall of docs/performance-notes.md section 15); sharing a slice bounds what the
 * loop is held for, however many replays run, and the replays share it in turn.
 *
 * One kind of step cannot be paused in: a journal page is parsed in the callback of its read, and
 * every read that completed meanwhile runs its parse in the same poll phase. So the reads
 * themselves are limited too (`reading`): at most `reads` pages are being read at once.
 */
export class LoopBudget {
  #sliceStartedAt = performance.now();
  #turning = false;
  #reading = 0;
  readonly #readers: (() => void)[] = [];

  constructor(
    readonly sliceMs: number,
    readonly reads = 2,
  ) {}

  /** Runs `read` when fewer than `reads` others run (first come, first served). */
  async reading<T>(read: () => Promise<T>): Promise<T> {
    if (this.#reading >= this.reads) await new Promise<void>((resolve) => this.#readers.push(resolve));
    else this.#reading++;
    try {
      return await read();
    } finally {
      // The slot passes to the next waiter directly (the count stays), or is given back.
      const next = this.#readers.shift();
      if (next) next();
      else this.#reading--;
    }
  }

  /**
   * Nothing (go on) while the current slice lasts; else a promise that resolves once the loop has
   * turned. Call it before each step; a step should be far shorter than the slice.
   */
  pause(): Promise<void> | undefined {
    if (!this.#turning && performance.now() - this.#sliceStartedAt < this.sliceMs) return undefined;
    if (!this.#turning) {
      this.#turning = true;
      // Queued before any waiter's: the next slice starts in the next check phase, before they resume.
      setImmediate(() => {
        this.#turning = false;
        this.#sliceStartedAt = performance.now();
      });
    }
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.pause());
  }
}

/** The replays of every event stream in this process (event-stream.ts): 10 ms slices, a fifth of the 50 ms stall goal; two pages read at once. */
export const replayBudget = new LoopBudget(10, 2);
