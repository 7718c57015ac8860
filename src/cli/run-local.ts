/**
 * `ase run --mode local` on a terminal: the agent's own terminal UI, attached to the user's
 * terminal through `session.terminal`. stdin goes raw into the agent's PTY, its output straight to
 * stdout, the window size follows (SIGWINCH).
 *
 * When an `ase serve` runs on the data dir (its serve.json), the session is created (or continued)
 * in that server instead and this terminal attaches to it as its desk (attach.ts), so the page sees
 * it at once; `--no-server` keeps it in this process.
 *
 * `--sub-agents`: with sub-agent sessions the person can enter: through a live `ase serve --sub-agents`
 * (attach.ts has the same Ctrl-] menu), else hosted in this process (run-local-tree.ts). A live
 * server without `--sub-agents` is a refusal, not a session split from the phone.
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
import { openDesk, splitAtDetachKey, type Desk } from './desk-terminal.js';
import type { Output } from './render.js';
import type { RunArgs } from './run-args.js';
import { attachDesk, serverRequest, type ServerTarget } from './attach.js';
import { findLiveServer } from './serve-file.js';
import { runLocalTree } from './run-local-tree.js';

export async function runLocal(args: RunArgs, output: Output): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new AseError('INVALID_OPTIONS', '--mode local needs a terminal (stdin and stdout must be TTYs)');
  if (args.agent === undefined && args.sessionId === undefined) throw new AseError('INVALID_OPTIONS', '--agent is required');
  const workDir = path.resolve(args.cwd ?? process.cwd());
  await assertDirectory(workDir, '--cwd');
  const server = args.noServer ? undefined : await findLiveServer(args.dataDir);
  if (server && args.subAgents && !server.subAgents) {
    // Hosted here instead, the session would be stored on the server's data dir but out of its
    // reach: the phone could not see its terminal nor drive it. Said, not silently split.
    throw new AseError(
      'INVALID_OPTIONS',
      `--sub-agents: the ase serve on ${args.dataDir} (pid ${server.pid}, ${server.url}) does not offer sub-agents: restart it with --sub-agents, or run this with --no-server`,
    );
  }
  if (server) return runLocalThroughServer(args, workDir, server, output);
  if (args.subAgents) return runLocalTree(args, workDir, output);

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

  let detached = false;
  let desk: Desk | undefined;
  try {
    desk = openDesk({
      onKeys: (keys) => {
        if (detached) return;
        const { before, detached: leaving } = splitAtDetachKey(keys);
        if (before !== '') session.terminal.write(before);
        if (!leaving) return;
        detached = true;
        void session.switchMode('remote').catch(() => undefined);
      },
      onResize: (cols, rows) => session.terminal.resize(cols, rows),
      onSignal: (signal) => void session.stop().finally(() => process.kill(process.pid, signal)),
    });
    session.terminal.resize(desk.cols, desk.rows);
    const shown = desk;
    session.terminal.onData((data) => shown.write(data));
    // Ends when the UI quits (session done) or Ctrl-] handed the session over (the terminal detached).
    await new Promise<void>((resolve) => {
      void session.done.then(() => resolve());
      session.terminal.onChange((change) => {
        if (!change.attached && detached) resolve();
      });
    });
    if (detached) await desk.settle();
  } finally {
    // Handing over clears the terminal UI's remains, so the hand-over line stands on a clean screen.
    desk?.restore({ clear: detached });
  }
  if (detached) {
    output.err(`session ${session.id} handed to remote control; continue it with: ase run --session-id ${session.id} "…"\n`);
    await session.stop();
    return 0;
  }
  const final = await session.done;
  return final.phase === 'stopped' && !final.lastError ? 0 : 1;
}

/** The session in the data dir's `ase serve`: created there (or continued and switched to local), then attached. */
async function runLocalThroughServer(args: RunArgs, workDir: string, server: ServerTarget, output: Output): Promise<number> {
  let sessionId: string;
  if (args.sessionId !== undefined) {
    sessionId = args.sessionId;
    await serverRequest(server, 'POST', `/api/sessions/${encodeURIComponent(sessionId)}/mode`, { to: 'local' });
  } else {
    const engineOptions = {
      ...args.options,
      ...(Object.keys(args.env).length > 0 && { env: args.env }),
      ...(args.bin !== undefined && { bin: args.bin }),
    };
    const created = await serverRequest<{ sessionId: string }>(server, 'POST', '/api/sessions', {
      agent: args.agent,
      workDir,
      mode: 'local',
      ...(Object.keys(engineOptions).length > 0 && { engineOptions }),
    });
    sessionId = created.sessionId;
  }
  output.err(`session ${sessionId} (local, hosted by ase serve at ${server.url}: Ctrl-] hands it to remote control)\r\n`);
  return attachDesk(server, sessionId, output);
}
