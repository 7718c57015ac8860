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
 * The same moves from a key-chord menu of ours (desk-menu.ts), in any agent's UI (Codex's has no
 * `/ase:` commands): Ctrl-] opens it over the terminal UI, listing the children; a digit enters
 * one, x goes back to the parent, h (or Ctrl-] again) hands the session shown to remote control and
 * ends the desk, any other key closes it. While it is open the UI's output is held; on close it is
 * written and the UI repaints itself (a size change), so nothing of the menu stays on the screen.
 *
 * A sub-agent's answer is typed into its parent's terminal UI (typed-result.ts), which takes it as
 * a prompt at once; the tree notes it delivered once the parent's agent reported it. A parent not
 * in local mode is sent it instead; a message sent to a session in local mode hands it to remote
 * control, and the desk takes the session it shows back to local once that turn is done (the UI
 * resumes the same session, the answer in it; a line on the terminal says so meanwhile).
 *
 * The desk follows one session at a time: its keys go to that session's terminal, its output is
 * the only one drawn. Quitting the root's UI ends everything. Every session this process opened is
 * stopped on the way out.
 */
import { AseError, answerText, changeTreeOf, createSupervisor, defaultRegistry, findSessionTree, subAgentTools, typedResultDelivery, type Session, type Supervisor } from '../index.js';
import { DeskMenu, MenuOverlay, type MenuMoves } from './desk-menu.js';
import { CLEAR_SCREEN, openDesk, splitAtDetachKey, type Desk } from './desk-terminal.js';
import { enterSubAgent } from './enter-sub-agent.js';
import type { Output } from './render.js';
import { TerminalMirror } from '../server.js';
import type { RunArgs } from './run-args.js';

/** How long a moved desk waits for the entered session's terminal UI before it gives up (a slow start on a loaded machine). */
const TERMINAL_START_MS = 60_000;

export async function runLocalTree(args: RunArgs, workDir: string, output: Output): Promise<number> {
  const engineOptions = { ...args.options, ...(Object.keys(args.env).length > 0 && { env: args.env }) };
  const hasOptions = Object.keys(engineOptions).length > 0;
  const supervisor: Supervisor = createSupervisor({ dataDir: args.dataDir, registry: defaultRegistry() });
  // Children on the run's own agent get its --option/--env/--bin (the same model endpoint, the same credentials).
  // A child's answer is typed into its parent's UI (no detour through remote control).
  const deliver = typedResultDelivery();
  const tools = subAgentTools({
    supervisor,
    deliverResult: deliver,
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
  output.err(`session ${root.id} (local, sub-agents: Ctrl-] opens the menu (children, enter, exit, h hands it to remote control); in Claude Code also /ase:children, /ase:enter ID, /ase:exit)\r\n`);

  /** The last assistant text of each session followed here: a child's result when the person leaves it. */
  const lastText = new Map<string, string>();
  const followText = (session: Session) =>
    session.on('agent', ({ event }) => {
      if (event.type !== 'message') return;
      const text = answerText(event);
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
        .catch((error: unknown) => toDesk(`\r\n[ase] ${session.id}: ${error instanceof Error ? error.message : String(error)}\r\n`))
        .finally(() => reclaiming.delete(session.id));
    });
    const offTerminal = session.terminal.onChange((change) => {
      if (session !== shown || detached) return;
      if (change.attached) toDesk(CLEAR_SCREEN);
      else toDesk(`${CLEAR_SCREEN}[ase] ${session.id} runs a message under remote control (a sub-agent's answer); its terminal UI comes back when that is done\r\n`);
    });
    followed.set(session.id, () => {
      offStatus();
      offTerminal();
    });
  };

  /**
   * What the desk shows, but the menu: every write but the menu's goes through it, so closing the
   * menu repaints the screen exactly as the terminal UI left it (a TUI redraws only its own area).
   */
  let mirror: TerminalMirror | undefined;
  const toDesk = (data: string) => {
    mirror?.write(data);
    desk?.write(data);
  };

  /** The chord menu over the screen; the UI's output goes through it. */
  const menu = new MenuOverlay<string>({ terminal: () => desk, show: toDesk, screen: (draw) => mirror?.screen(draw) });

  /** A terminal UI draws itself again on a size change (one that kept running hidden, or under the menu). */
  const repaint = (session: Session) => {
    if (!desk) return;
    session.terminal.resize(Math.max(1, desk.cols - 1), desk.rows);
    session.terminal.resize(desk.cols, desk.rows);
  };

  const show = (session: Session, redraw: boolean) => {
    offData();
    menu.close(false);
    shown = session;
    toDesk(CLEAR_SCREEN);
    offData = session.terminal.onData((data) => menu.output(data));
    if (!desk) return;
    if (redraw) repaint(session);
    else session.terminal.resize(desk.cols, desk.rows);
  };

  const openMenu = async () => {
    const of = shown;
    const kids = await children(of).catch(() => []);
    if (detached || shown !== of || menu.isOpen) return;
    menu.open(new DeskMenu(of.id, kids, of === root));
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
    const child = await enterSubAgent({
      focus: async () => {
        await changeTreeOf(supervisor, childId, (tree) => tree.enter(childId));
        const opened = supervisor.get(childId) ?? (await supervisor.open(childId));
        followText(opened);
        keepLocal(opened);
        opened.terminal.onCommand(onCommand);
        return opened;
      },
      state: (session) => session.snapshot(),
      interrupt: (session) => session.abort(),
      switchToLocal: (session) => session.switchMode('local'),
    });
    await untilAttached(child);
    if (shown === parent && !detached) show(child, false);
  };

  const exit = async (): Promise<void> => {
    const child = shown;
    const parent = await changeTreeOf(supervisor, child.id, (tree) => tree.exit(child.id));
    if (!parent || detached) return;
    show(parent, true);
    // Its answer reaches the parent once, typed into the parent's UI shown now; its own UI stops
    // (also when the answer could not be delivered: it stays in the tree, sent at the tree's next opening).
    try {
      await changeTreeOf(supervisor, child.id, (tree) => tree.complete(child.id, lastText.get(child.id) ?? '', { deliver }));
    } finally {
      await supervisor.stop(child.id);
    }
  };

  /** Queues a move after the one under way; a failure is written on the terminal (the UI answered already). */
  const move = (work: () => Promise<void>) => {
    moving = moving.then(work).catch((error: unknown) => {
      // The session shown draws itself again (a move from the menu cleared the screen), then the failure.
      repaint(shown);
      toDesk(`\r\n[ase] ${error instanceof Error ? error.message : String(error)}\r\n`);
    });
  };

  /** What the menu's choices do here (the move clears the screen and says what it does, then runs). */
  const menuMoves: MenuMoves = {
    handover: () => handOver(),
    enter: (id) => {
      toDesk(`${CLEAR_SCREEN}[ase] entering sub-agent session ${id}\u2026\r\n`);
      move(() => enter(id));
    },
    exit: () => {
      toDesk(`${CLEAR_SCREEN}[ase] back to the parent session\u2026\r\n`);
      move(exit);
    },
  };

  const handOver = () => {
    detached = true;
    void shown.switchMode('remote').catch(() => undefined).finally(settle);
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
        if (menu.isOpen) return void menu.keys(keys, menuMoves);
        const { before, detached: chord } = splitAtDetachKey(keys);
        if (before !== '') shown.terminal.write(before);
        if (chord) void openMenu();
      },
      onResize: (cols, rows) => {
        mirror?.resize(cols, rows);
        shown.terminal.resize(cols, rows);
        menu.draw(); // at the new size (the UI's repaint is held until the menu closes)
      },
      onSignal: (signal) => void supervisor.shutdown().finally(() => process.kill(process.pid, signal)),
    });
    mirror = new TerminalMirror(desk.cols, desk.rows);
    show(root, false);
    void root.done.then(settle);
    await ended;
    if (detached) await desk.settle();
  } finally {
    offData();
    mirror?.dispose();
    mirror = undefined;
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

