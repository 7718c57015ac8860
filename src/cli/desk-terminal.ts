/**
 * The person's terminal while an agent's terminal UI is shown on it (`ase run --mode local`, `ase
 * attach`): raw mode, keys to a handler, the window size followed (SIGWINCH), and the terminal
 * restored on every way out: the UI quits, Ctrl-], a crash, SIGTERM/SIGHUP, an exception, process
 * exit. Restored means raw mode off, stdin paused and blocking again, keys typed meanwhile drained
 * (so they do not land in the shell), the cursor shown, the alternate screen and mouse modes left;
 * and, when the desk hands over, the terminal UI's remains cleared, so the next line is not printed
 * over them.
 */
import { AseError } from '../index.js';

/** Ctrl-]: the telnet/ssh-style escape key; no agent TUI binds it. */
export const DETACH_KEY = '\x1d';
/** Show the cursor, leave the alternate screen, reset attributes, bracketed paste and mouse modes off: what a TUI killed mid-draw leaves behind. */
const RESET_SCREEN = '\x1b[?25h\x1b[?1049l\x1b[0m\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1006l';
/** Cursor home, clear the visible screen (the scrollback stays). */
export const CLEAR_SCREEN = '\x1b[H\x1b[2J';

export interface DeskHandlers {
  /** Keys typed (raw bytes as text). */
  onKeys(keys: string): void;
  /** The window's new size. */
  onResize(cols: number, rows: number): void;
  /** SIGTERM/SIGHUP arrived; the terminal is restored already. The handler ends the process (e.g. by re-raising the signal). */
  onSignal(signal: NodeJS.Signals): void;
}

export interface Desk {
  readonly cols: number;
  readonly rows: number;
  write(data: string | Uint8Array): void;
  /** Gives the terminal back (idempotent). `clear`: wipe what the terminal UI left on the screen first. */
  restore(options?: { clear?: boolean }): void;
  /**
   * After a hand-over (Ctrl-]): keys are still read and dropped for a moment before the terminal is
   * given back, since typing that ran on past the key was meant for the agent's UI, not the shell
   * (a quick hand-over would otherwise leave it at the shell prompt).
   */
  settle(): Promise<void>;
}

/** How long {@link Desk.settle} keeps dropping keys. */
export const HANDOVER_SETTLE_MS = 200;

/** Keys before Ctrl-], and whether Ctrl-] was among them (what follows it is dropped). */
export function splitAtDetachKey(keys: string): { before: string; detached: boolean } {
  const at = keys.indexOf(DETACH_KEY);
  return at < 0 ? { before: keys, detached: false } : { before: keys.slice(0, at), detached: true };
}

/** Puts this process's terminal in raw mode for an agent's terminal UI. Needs stdin and stdout to be TTYs. */
export function openDesk(handlers: DeskHandlers): Desk {
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) throw new AseError('INVALID_OPTIONS', 'an agent\'s terminal UI needs a terminal (stdin and stdout must be TTYs)');
  let restored = false;
  let settling = false;
  const onData = (keys: Buffer) => {
    if (!settling) handlers.onKeys(keys.toString('utf8'));
  };
  const onResize = () => handlers.onResize(stdout.columns, stdout.rows);
  const onExit = () => restore();
  const onSignal = (signal: NodeJS.Signals) => {
    restore();
    handlers.onSignal(signal);
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];
  const restore = (options: { clear?: boolean } = {}) => {
    if (restored) return;
    restored = true;
    stdin.off('data', onData);
    process.off('SIGWINCH', onResize);
    process.off('exit', onExit);
    for (const signal of signals) process.off(signal, onSignal);
    try {
      stdin.setRawMode(false);
    } catch {
      // stdin already closed
    }
    stdin.pause();
    drainTypeAhead();
    stdout.write(RESET_SCREEN + (options.clear ? CLEAR_SCREEN : ''));
  };
  process.once('exit', onExit);
  for (const signal of signals) process.once(signal, onSignal);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.on('data', onData);
  process.on('SIGWINCH', onResize);
  return {
    get cols() {
      return stdout.columns;
    },
    get rows() {
      return stdout.rows;
    },
    write: (data) => {
      if (!restored) stdout.write(data);
    },
    restore,
    settle: async () => {
      if (restored) return;
      settling = true;
      await new Promise((resolve) => setTimeout(resolve, HANDOVER_SETTLE_MS));
    },
  };
}

/**
 * Drops keys typed during the last moments (they were meant for the agent's UI, not the shell) and
 * puts stdin back to blocking, as a shell expects it (Node leaves a TTY stdin non-blocking).
 */
function drainTypeAhead(): void {
  while (process.stdin.read() !== null) {
    // dropped
  }
  const handle = (process.stdin as unknown as { _handle?: { setBlocking?: (blocking: boolean) => void } })._handle;
  try {
    handle?.setBlocking?.(true);
  } catch {
    // not a TTY handle any more
  }
}
