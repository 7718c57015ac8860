/**
 * `ase run --mode local` on a terminal: the agent's own terminal UI, attached to the user's
 * terminal through `session.terminal`. stdin goes raw into the agent's PTY, its output straight to
 * stdout, the window size follows (SIGWINCH).
 *
 * Keys: Ctrl-] hands the session to remote control (it stays stored; `ase run --session-id` or a
 * host continues it) and gives the terminal back. Quitting the agent's UI ends the session.
 *
 * The terminal is restored on every way out (the UI quits, Ctrl-], a crash, SIGTERM/SIGHUP, an
 * exception): raw mode off, stdin paused and blocking again, keys typed meanwhile drained (so they
 * do not land in the shell), the cursor shown and the alternate screen left.
 */
import path from 'node:path';
import { AseError, createSession, defaultRegistry, type Session } from '../index.js';
import { assertDirectory } from './data-dir.js';
import type { Output } from './render.js';
import type { RunArgs } from './run.js';

/** Ctrl-]: the telnet/ssh-style escape key; no agent TUI binds it. */
const DETACH_KEY = '\x1d';
/** Show the cursor, leave the alternate screen, reset attributes: what a TUI killed mid-draw leaves behind. */
const RESET_SCREEN = '\x1b[?25h\x1b[?1049l\x1b[0m\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1006l';

export async function runLocal(args: RunArgs, output: Output): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) throw new AseError('INVALID_OPTIONS', '--mode local needs a terminal (stdin and stdout must be TTYs)');
  if (args.agent === undefined && args.sessionId === undefined) throw new AseError('INVALID_OPTIONS', '--agent is required');
  const workDir = path.resolve(args.cwd ?? process.cwd());
  await assertDirectory(workDir, '--cwd');

  const session: Session = await createSession({
    agent: args.agent ?? '',
    workDir,
    mode: 'local',
    registry: defaultRegistry(),
    dataDir: args.dataDir,
    ...(args.sessionId !== undefined && { sessionId: args.sessionId }),
    ...(args.bin !== undefined && { bin: args.bin }),
    ...((Object.keys(args.env).length > 0 || Object.keys(args.options).length > 0) && {
      engineOptions: { ...args.options, ...(Object.keys(args.env).length > 0 && { env: args.env }) },
    }),
  });
  output.err(`session ${session.id} (local: Ctrl-] hands it to remote control)\r\n`);

  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    stdin.off('data', onKeys);
    process.off('SIGWINCH', onResize);
    try {
      stdin.setRawMode(false);
    } catch {
      // stdin already closed
    }
    stdin.pause();
    drainTypeAhead();
    stdout.write(RESET_SCREEN);
  };
  const onResize = () => session.terminal.resize(stdout.columns, stdout.rows);
  let detached = false;
  const onKeys = (keys: Buffer) => {
    const text = keys.toString('utf8');
    const at = text.indexOf(DETACH_KEY);
    if (at < 0) {
      session.terminal.write(text);
      return;
    }
    if (at > 0) session.terminal.write(text.slice(0, at));
    detached = true;
    void session.switchMode('remote').catch(() => undefined);
  };
  const onExit = () => restore();
  process.once('exit', onExit);
  const onSignal = (signal: NodeJS.Signals) => {
    restore();
    void session.stop().finally(() => process.kill(process.pid, signal));
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.once(signal, onSignal);

  try {
    onResize();
    session.terminal.onData((data) => stdout.write(data));
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onKeys);
    process.on('SIGWINCH', onResize);
    // Ends when the UI quits (session done) or Ctrl-] handed the session over (the terminal detached).
    await new Promise<void>((resolve) => {
      void session.done.then(() => resolve());
      session.terminal.onChange((change) => {
        if (!change.attached && detached) resolve();
      });
    });
  } finally {
    restore();
    for (const signal of signals) process.off(signal, onSignal);
    process.off('exit', onExit);
  }
  if (detached) {
    output.err(`session ${session.id} handed to remote control; continue it with: ase run --session-id ${session.id} "…"\n`);
    await session.stop();
    return 0;
  }
  const final = await session.done;
  return final.phase === 'stopped' && !final.lastError ? 0 : 1;
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
