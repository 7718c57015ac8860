/**
 * `ase run --mode local --sub-agents`: the agent's own terminal UI, as `ase run --mode local`, on a
 * supervisor of this process whose root session offers the agent `spawn_session` and
 * `session_status` (subAgentTools), and the person the host's commands, typed in the agent's UI
 * and kept from the model (claude/local/terminal-commands.ts):
 *
 * - `/ase:children`: the sub-agent sessions of the session shown, with their state.
 * - `/ase:enter <id>`: the terminal now shows that child's own terminal UI (same session id: it
 *   switches to local mode; a turn it is running is interrupted first); the tree's focus moves to
 *   it and the parent is suspended (its terminal UI keeps running, hidden).
 * - `/ase:exit`: back to the parent's terminal UI; the child is completed in the tree, so its last
 *   answer reaches the parent exactly once, and its own UI is stopped.
 *
 * A sub-agent's answer is a queued message to its parent, and a message sent to a session in local
 * mode hands it to remote control (its terminal UI stops; the session runs the message). The desk
 * takes the session it shows back to local once that turn is done: the terminal UI resumes the same
 * session, drawing the whole conversation, the delivered answer included. A line on the terminal
 * says so meanwhile.
 *
 * The desk follows one session at a time: its keys go to that session's terminal, its output is
 * the only one drawn. Ctrl-] hands the shown session to remote control and ends the desk; quitting
 * the root's UI ends everything. Every session this process opened is stopped on the way out.
 */
import { AseError, changeTreeOf, createSupervisor, defaultRegistry, findSessionTree, subAgentTools, type Session, type Supervisor } from '../index.js';
import { CLEAR_SCREEN, openDesk, splitAtDetachKey, type Desk } from './desk-terminal.js';
import type { Output } from './render.js';
import type { RunArgs } from './run-args.js';

/** How long a moved desk waits for the entered session's terminal UI before it gives up (a slow start on a loaded machine). */
const TERMINAL_START_MS = 60_000;

export async function runLocalTree(args: RunArgs, workDir: string, output: Output): Promise<number> {
  const engineOptions = { ...args.options, ...(Object.keys(args.env).length > 0 && { env: args.env }) };
  const hasOptions = Object.keys(engineOptions).length > 0;
  const supervisor: Supervisor = createSupervisor({ dataDir: args.dataDir, registry: defaultRegistry() });
  // Children on the run's own agent get its --option/--env/--bin (the same model endpoint, the same credentials).
  const tools = subAgentTools({
    supervisor,
    childOptions: ({ agent }) => (agent === args.agent ? { ...(hasOptions && { engineOptions }), ...(args.bin !== undefined && { bin: args.bin }) } : {}),
  });
  let root: Session;
  try {
    root = await supervisor.create({
      agent: args.agent ?? '',
      workDir,
      mode: 'local',
      tools,
      ...(args.sessionId !== undefined && { sessionId: args.sessionId }),
      ...(args.bin !== undefined && { bin: args.bin }),
      ...(hasOptions && { engineOptions }),
    });
  } catch (error) {
    await supervisor.shutdown();
    throw error;
  }
  output.err(`session ${root.id} (local, sub-agents: /ase:children, /ase:enter ID, /ase:exit; Ctrl-] hands it to remote control)\r\n`);

  /** The last assistant text of each session followed here: a child's result when the person leaves it. */
  const lastText = new Map<string, string>();
  const followText = (session: Session) =>
    session.on('agent', ({ event }) => {
      if (event.type !== 'message' || event.role !== 'assistant' || event.parentCallId !== undefined) return;
      const text = event.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      if (text !== '') lastText.set(session.id, text);
    });

  let desk: Desk | undefined;
  let shown = root;
  let offData: () => void = () => undefined;
  let detached = false;
  /** A move (enter/exit) under way: further commands wait for it. */
  let moving: Promise<void> = Promise.resolve();
  let settle: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (settle = resolve));

  /** Sessions whose status the desk follows (to take them back to local), with the unsubscribes. */
  const followed = new Map<string, () => void>();
  const reclaiming = new Set<string>();
  const keepLocal = (session: Session) => {
    if (followed.has(session.id)) return;
    const offStatus = session.on('status', (n) => {
      if (detached || session !== shown || n.mode !== 'remote' || n.phase !== 'idle' || reclaiming.has(session.id)) return;
      if (session.snapshot().queue.length > 0) return;
      reclaiming.add(session.id);
      void session
        .switchMode('local')
        .catch((error: unknown) => desk?.write(`\r\n[ase] ${session.id}: ${error instanceof Error ? error.message : String(error)}\r\n`))
        .finally(() => reclaiming.delete(session.id));
    });
    const offTerminal = session.terminal.onChange((change) => {
      if (session !== shown || detached) return;
      if (change.attached) desk?.write(CLEAR_SCREEN);
      else desk?.write(`${CLEAR_SCREEN}[ase] ${session.id} runs a message under remote control (a sub-agent's answer); its terminal UI comes back when that is done\r\n`);
    });
    followed.set(session.id, () => {
      offStatus();
      offTerminal();
    });
  };

  const show = (session: Session, redraw: boolean) => {
    offData();
    shown = session;
    desk?.write(CLEAR_SCREEN);
    offData = session.terminal.onData((data) => desk?.write(data));
    if (!desk) return;
    if (redraw) {
      // A terminal UI that kept running hidden draws itself again on a size change.
      session.terminal.resize(Math.max(1, desk.cols - 1), desk.rows);
    }
    session.terminal.resize(desk.cols, desk.rows);
  };

  const untilAttached = (session: Session) =>
    new Promise<void>((resolve, reject) => {
      if (session.terminal.attached) return resolve();
      const timer = setTimeout(() => {
        off();
        reject(new AseError('TIMEOUT', `the terminal UI of ${session.id} did not start within ${TERMINAL_START_MS / 1000} s`));
      }, TERMINAL_START_MS);
      const off = session.terminal.onChange((change) => {
        if (!change.attached) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });

  const children = async (of: Session): Promise<{ id: string; state: string; agent: string }[]> => {
    const tree = await findSessionTree({ dataDir: supervisor.dataDir, store: supervisor.store, sessionId: of.id });
    if (!tree) return [];
    const kids = Object.values(tree.nodes).filter((n) => n.parentId === of.id);
    return Promise.all(
      kids.map(async (n) => ({
        id: n.sessionId,
        state: n.state,
        agent: supervisor.get(n.sessionId)?.snapshot().agent ?? (await supervisor.store.load(n.sessionId))?.state.agent ?? '?',
      })),
    );
  };

  const enter = async (childId: string): Promise<void> => {
    const parent = shown;
    await changeTreeOf(supervisor, childId, (tree) => tree.enter(childId));
    const child = supervisor.get(childId) ?? (await supervisor.open(childId));
    followText(child);
    keepLocal(child);
    child.terminal.onCommand(onCommand);
    // A child still working on its task: its turn is interrupted now rather than after the
    // switch's wait (handoffWaitMs); its own UI shows where it stopped, and the person goes on from there.
    if (child.snapshot().phase === 'running') await child.abort().catch(() => undefined);
    if (child.snapshot().mode !== 'local') await child.switchMode('local');
    await untilAttached(child);
    if (shown === parent && !detached) show(child, false);
  };

  const exit = async (): Promise<void> => {
    const child = shown;
    const parent = await changeTreeOf(supervisor, child.id, (tree) => tree.exit(child.id));
    if (!parent || detached) return;
    show(parent, true);
    // Its answer reaches the parent once (run under remote control, then the parent's UI is back); its own UI stops.
    await changeTreeOf(supervisor, child.id, (tree) => tree.complete(child.id, lastText.get(child.id) ?? ''));
    await supervisor.stop(child.id);
  };

  /** Queues a move after the one under way; a failure is written on the terminal (the UI answered already). */
  const move = (work: () => Promise<void>) => {
    moving = moving.then(work).catch((error: unknown) => {
      desk?.write(`\r\n[ase] ${error instanceof Error ? error.message : String(error)}\r\n`);
    });
  };

  async function onCommand(line: string): Promise<string> {
    const match = /^\s*\/ase(?::|\s+)([a-z-]+)\b\s*([\s\S]*)$/i.exec(line);
    const verb = match?.[1]?.toLowerCase() ?? '';
    const arg = match?.[2]?.trim() ?? '';
    if (verb === 'children') {
      const kids = await children(shown);
      return kids.length === 0 ? `no sub-agent sessions under ${shown.id}` : kids.map((k) => `${k.id}  ${k.agent}  ${k.state}`).join('\n');
    }
    if (verb === 'enter') {
      const kids = await children(shown);
      const kid = kids.find((k) => k.id === arg);
      if (!kid) return `/ase:enter ${arg}: not a sub-agent session of ${shown.id}${kids.length > 0 ? ` (its children: ${kids.map((k) => k.id).join(', ')})` : ''}`;
      if (kid.state === 'completed') return `/ase:enter ${arg}: that sub-agent session is completed`;
      // After the UI shows this answer: the move replaces what the terminal shows.
      move(() => enter(kid.id));
      return `entering sub-agent session ${kid.id}\u2026`;
    }
    if (verb === 'exit') {
      if (shown === root) return `/ase:exit: ${root.id} is the top session (quit its UI to end it)`;
      move(exit);
      return `back to the parent session\u2026`;
    }
    return 'ase commands: /ase:children, /ase:enter <session id>, /ase:exit';
  }

  followText(root);
  keepLocal(root);
  root.terminal.onCommand(onCommand);
  try {
    desk = openDesk({
      onKeys: (keys) => {
        if (detached) return;
        const { before, detached: leaving } = splitAtDetachKey(keys);
        if (before !== '') shown.terminal.write(before);
        if (!leaving) return;
        detached = true;
        void shown.switchMode('remote').catch(() => undefined).finally(settle);
      },
      onResize: (cols, rows) => shown.terminal.resize(cols, rows),
      onSignal: (signal) => void supervisor.shutdown().finally(() => process.kill(process.pid, signal)),
    });
    show(root, false);
    void root.done.then(settle);
    await ended;
  } finally {
    offData();
    for (const off of followed.values()) off();
    desk?.restore({ clear: detached });
  }
  const handedOver = shown;
  if (detached) output.err(`session ${handedOver.id} handed to remote control; continue it with: ase run --session-id ${handedOver.id} "…"\n`);
  await moving;
  await supervisor.shutdown();
  const final = await root.done;
  return detached || (final.phase === 'stopped' && !final.lastError) ? 0 : 1;
}

