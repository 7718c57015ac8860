/**
 * The desk and the phone of issue 20's end-to-end tests: the desk is a real terminal (tmux on a
 * private socket) running an `ase` command in a shell, read as the person sees it (capture-pane) and
 * typed into with send-keys; the phone is the server's page in Chromium, whose terminal panel is
 * read as text (xterm.js's DOM rows).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** Whether tmux is installed (the desk tests are skipped where it is not). */
export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

export interface DeskOptions {
  /** A temp dir of the test: the tmux socket and the desk's script go here. */
  root: string;
  cwd: string;
  /** HOME of the shell. */
  home: string;
  /** The command (argv) the desk runs; the shell then prints `ase exited <code>` and stays. */
  command: string[];
  cols?: number;
  rows?: number;
  /** More to say when a wait fails (e.g. the server's output). */
  describe?: () => string;
}

export interface TmuxDesk {
  /** The screen as shown (capture-pane). */
  screen(): string;
  /** Waits (polling) until the screen matches; returns it. Throws with the screen when it never does. */
  waitScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Literal keys (`\x1d` for Ctrl-] works too). */
  keys(text: string): void;
  /** Types a line and Enter once the line is on the screen, as a person does. */
  typeLine(text: string): Promise<void>;
  /** Kills the tmux server (idempotent). */
  close(): void;
}

/** A terminal in tmux running `command` in a shell. */
export function deskInTmux(options: DeskOptions): TmuxDesk {
  const socket = join(options.root, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  const script = join(options.root, 'desk.sh');
  writeFileSync(script, `cd ${quote(options.cwd)}\n${options.command.map(quote).join(' ')}\necho "ase exited $?"\nexec sh\n`);
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'desk', '-x', String(options.cols ?? 100), '-y', String(options.rows ?? 30), '-e', `HOME=${options.home}`, `sh ${quote(script)}`);
  const screen = () => tmux('capture-pane', '-p', '-t', 'desk');
  const waitScreen = async (pattern: RegExp, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = screen();
      if (pattern.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`the desk never showed ${pattern}:\n${text}\n${options.describe?.() ?? ''}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  // Keys go in as hex bytes: send-keys -l would read a leading '-' or ';' as tmux syntax.
  const keys = (text: string) => void tmux('send-keys', '-t', 'desk', '-H', ...[...Buffer.from(text, 'utf8')].map((b) => b.toString(16).padStart(2, '0')));
  let closed = false;
  return {
    screen,
    waitScreen,
    keys,
    async typeLine(text) {
      keys(text);
      await waitScreen(new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      // The TUI takes a pasted burst followed at once by Enter as a paste (a newline, not a submit).
      await new Promise((resolve) => setTimeout(resolve, 300));
      keys('\r');
    },
    close() {
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

/** The text of the page's terminal panel rows (xterm.js's DOM renderer), as the phone shows it. */
export const pageTerminalText = (page: Page) => page.evaluate<string>(`[...document.querySelectorAll('#terminal-host .xterm-rows > div')].map((r) => r.textContent).join('\\n')`);

/** The user's messages in the page's transcript, in order (their own text, without the entry's number). */
export const pageUserMessages = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('#transcript .entry.user')].map((e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join(''))`);
