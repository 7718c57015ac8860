/**
 * A copy of one session's terminal screen, kept by the server so a client that connects late (the
 * page's panel, a desk re-attaching) is shown the screen at once instead of a blank one until the
 * terminal UI happens to redraw. Every output byte is parsed by a headless terminal emulator
 * (@xterm/headless) and the screen (with some scrollback) is serialized back to escape sequences
 * on demand (@xterm/addon-serialize): what a terminal emulator shows, not a byte log that would
 * replay stale frames.
 */
import xterm from '@xterm/headless';
import serialize from '@xterm/addon-serialize';

/** Lines of scrollback kept and repainted (enough for the recent conversation in an inline TUI). */
const SCROLLBACK = 1000;
/** Clear the screen and the scrollback, cursor home: the repaint starts from nothing. */
const CLEAR = '\x1b[0m\x1b[H\x1b[2J\x1b[3J';

export class TerminalMirror {
  readonly #term: InstanceType<typeof xterm.Terminal>;
  readonly #serializer: InstanceType<typeof serialize.SerializeAddon>;

  constructor(cols: number, rows: number) {
    this.#term = new xterm.Terminal({ cols, rows, scrollback: SCROLLBACK, allowProposedApi: true });
    this.#serializer = new serialize.SerializeAddon();
    this.#term.loadAddon(this.#serializer);
  }

  get cols(): number {
    return this.#term.cols;
  }

  get rows(): number {
    return this.#term.rows;
  }

  write(data: string): void {
    this.#term.write(data);
  }

  resize(cols: number, rows: number): void {
    if (cols !== this.#term.cols || rows !== this.#term.rows) this.#term.resize(cols, rows);
  }

  /** A new terminal UI starts from a blank screen. */
  reset(): void {
    this.#term.reset();
  }

  /**
   * Calls `ready` with the screen as escape sequences once everything written before this call is
   * parsed, and nothing after it (the emulator parses in order and calls back per write), so the
   * caller can send the repaint followed by exactly the output that came after.
   */
  snapshot(ready: (repaint: string) => void): void {
    this.#term.write('', () => ready(CLEAR + this.#serializer.serialize({ scrollback: SCROLLBACK })));
  }

  /**
   * The visible screen only, as `snapshot` does, to repaint a terminal that shows it already over
   * something drawn on top (the desk's chord menu): cleared and drawn again, its scrollback untouched.
   */
  screen(ready: (repaint: string) => void): void {
    this.#term.write('', () => ready('\x1b[0m\x1b[H\x1b[2J' + this.#serializer.serialize({ scrollback: 0 })));
  }

  dispose(): void {
    this.#term.dispose();
  }
}
