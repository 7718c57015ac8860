/**
 * A person's terminal for the desk-and-phone tests (issue 20): tmux on a private socket, so the
 * `ase` commands under test get a real TTY (raw mode, SIGWINCH, a screen to draw on) and the test
 * reads the screen as the person sees it (`capture-pane`). Shared by the claude and codex stories.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether tmux is installed (the tests that need it are skipped without it). */
export const hasTmux: boolean = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** One word quoted for sh. */
export const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Writes a script that runs `argv` in `cwd`, then prints `<label> exited <status>` and whether the
 * terminal is back in canonical mode (`icanon`, or `-icanon` when a command left it raw), then
 * stays in a shell so the screen can still be read.
 */
export function writeDeskScript(file: string, options: { cwd: string; argv: string[]; label?: string }): string {
  const label = options.label ?? 'ase';
  writeFileSync(file, `cd ${shellQuote(options.cwd)}\n${options.argv.map(shellQuote).join(' ')}\necho "${label} exited $?"\nstty -a | grep -o -- '-\\?icanon' | head -1\nexec sh\n`);
  return file;
}

export interface TmuxDesk {
  readonly socket: string;
  /** The first window's target (the tmux session's name). */
  readonly target: string;
  tmux(...args: string[]): string;
  /** Opens another window running `script` (sh); returns its target. */
  window(name: string, script: string): string;
  /** The visible screen of `target` as text. */
  screen(target?: string): string;
  /** Polls the screen until `pattern` shows; throws with the screen (and `context()`) when it does not in time. */
  waitScreen(pattern: RegExp, options?: { timeoutMs?: number; target?: string }): Promise<string>;
  /** Types `text` literally (no key names). */
  type(text: string, target?: string): void;
  /** Presses keys by tmux name (`Enter`, `C-]`). */
  press(key: string, target?: string): void;
  /** Kills the tmux server and everything in it (idempotent). */
  close(): void;
}

/**
 * Starts a tmux server on a socket under `root` with one window (`cols`×`rows`) running
 * `sh script`. `context` adds to a failed wait's message (e.g. the server's output).
 */
export function openTmuxDesk(options: { root: string; script: string; name?: string; cols?: number; rows?: number; env?: Record<string, string>; context?: () => string }): TmuxDesk {
  const socket = join(options.root, 'tmux.sock');
  const target = options.name ?? 'desk';
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  const envArgs = Object.entries(options.env ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', target, '-x', String(options.cols ?? 100), '-y', String(options.rows ?? 30), ...envArgs, `sh ${shellQuote(options.script)}`);
  const screen = (at = target) => tmux('capture-pane', '-p', '-t', at);
  let closed = false;
  return {
    socket,
    target,
    tmux,
    window: (name, script) => {
      tmux('new-window', '-d', '-t', `${target}:`, '-n', name, `sh ${shellQuote(script)}`);
      return `${target}:${name}`;
    },
    screen,
    async waitScreen(pattern, { timeoutMs = 45_000, target: at = target } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen(at);
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`tmux screen ${at} never showed ${pattern}:\n${text}${options.context ? `\n--- context:\n${options.context()}` : ''}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    type: (text, at = target) => void tmux('send-keys', '-t', at, '-l', text),
    press: (key, at = target) => void tmux('send-keys', '-t', at, key),
    close: () => {
      if (closed) return;
      closed = true;
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}
