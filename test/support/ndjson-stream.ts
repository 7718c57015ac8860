/**
 * The plumbing of the tests' own NDJSON child drivers (jsonrpc-child.ts for codex, the stream-json
 * driver in claude-smoke.test.ts): cutting stdout into lines, and letting a wait loop sleep until
 * the next chunk or exit arrives instead of polling on a timer. Each driver keeps its own message
 * and fixture formats.
 */

/** Cuts a text stream into lines; a partial last line is carried until its newline arrives. */
export class LineCarry {
  #buffer = '';

  /** The complete, non-blank lines `chunk` finishes (without their newline). */
  push(chunk: string): string[] {
    this.#buffer += chunk;
    const lines: string[] = [];
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line.trim() !== '') lines.push(line);
    }
    return lines;
  }
}

/** Lets a wait loop sleep until something new arrived ({@link Wakeup.wake}) or `ms` passed. */
export class Wakeup {
  #waiters: Array<() => void> = [];

  wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
