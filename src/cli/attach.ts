/**
 * `ase attach ID [--server URL] [--token-file F]`: this terminal becomes the desk of a session that
 * `ase serve` hosts. It connects to the session's terminal (`GET /api/sessions/:id/terminal`, as
 * the writer), shows the agent's terminal UI and types into it (desk-terminal.ts: raw mode, the
 * window size followed, the terminal restored on every way out).
 *
 * The handoff, both ways:
 * - Ctrl-] hands the session to remote control (the phone, the page) and gives the terminal back,
 *   cleared, with one line saying how to take it back.
 * - When remote control takes the session (the page's button, `POST …/mode`), or the session is
 *   remote when the desk attaches, the desk shows one line, "controlled remotely — press any key
 *   to take it back"; a key switches the session to local, and the terminal UI resumes the same
 *   session, drawing the whole conversation (the remote turns too). Ctrl-] there leaves instead.
 *
 * Without --server, the server is the one running on the data dir (its serve.json).
 */
import WebSocket from 'ws';
import { AseError, isAseError } from '../index.js';
import { TerminalMirror } from '../server.js';
import { DeskMenu, MenuOverlay, type MenuMoves } from './desk-menu.js';
import { CLEAR_SCREEN, openDesk, splitAtDetachKey, type Desk } from './desk-terminal.js';
import { enterSubAgent } from './enter-sub-agent.js';
import type { Output } from './render.js';
import { findLiveServer, readServeFile } from './serve-file.js';
import { readFile } from 'node:fs/promises';

export const REMOTE_BANNER = 'controlled remotely \u2014 press any key to take it back (Ctrl-] leaves)';

/** A server and its token. */
export interface ServerTarget {
  url: string;
  token: string;
}

export interface AttachArgs {
  sessionId: string;
  server?: string;
  tokenFile?: string;
  dataDir: string;
}

/** The server `ase attach` talks to: --server with --token-file, or the data dir's serve.json. */
export async function resolveServer(args: { server?: string; tokenFile?: string; dataDir: string }): Promise<ServerTarget> {
  if (args.tokenFile !== undefined) {
    const token = (await readFile(args.tokenFile, 'utf8').catch((error: unknown) => {
      throw new AseError('INVALID_OPTIONS', `--token-file ${args.tokenFile}: ${error instanceof Error ? error.message : String(error)}`);
    })).trim();
    const url = args.server ?? (await readServeFile(args.dataDir))?.url;
    if (url === undefined) throw new AseError('INVALID_OPTIONS', `--token-file needs --server URL (no ase serve runs on the data dir ${args.dataDir})`);
    return { url: url.replace(/\/+$/, ''), token };
  }
  const live = await findLiveServer(args.dataDir);
  if (args.server !== undefined) {
    if (live && sameServer(live.url, args.server)) return { url: live.url, token: live.token };
    throw new AseError('INVALID_OPTIONS', `--server ${args.server} needs --token-file (the server's token)`);
  }
  if (!live) throw new AseError('INVALID_OPTIONS', `no ase serve runs on the data dir ${args.dataDir}: start one (ase serve --data-dir ${args.dataDir}) or give --server URL --token-file F`);
  return { url: live.url, token: live.token };
}

function sameServer(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** A JSON request to the server's API; an error answer becomes an AseError with the server's code. */
export async function serverRequest<T>(target: ServerTarget, method: string, route: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${target.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${target.token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new AseError('CONNECTION_CLOSED', `ase serve at ${target.url}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw serverError(response.status, error?.code, error?.message ?? text.slice(0, 200));
  }
  return parsed as T;
}

function serverError(status: number, code: string | undefined, message: string): AseError {
  if (status === 404) return new AseError('SESSION_NOT_FOUND', message);
  if (status === 401 || status === 403) return new AseError('INVALID_OPTIONS', `the server refused the token: ${message}`);
  if (code === 'SESSION_OWNED') return new AseError('SESSION_OWNED', message);
  if (status === 400) return new AseError('INVALID_OPTIONS', message);
  return new AseError('ENGINE_ERROR', `ase serve answered ${status}: ${message}`);
}

export async function runAttach(args: AttachArgs, output: Output): Promise<number> {
  const target = await resolveServer(args);
  return attachDesk(target, args.sessionId, output);
}

/** Connects as the session's writer; rejects with the server's refusal (no token, no session, ...). */
function connectWriter(target: ServerTarget, sessionId: string): Promise<WebSocket> {
  const url = new URL(`${target.url}/api/sessions/${encodeURIComponent(sessionId)}/terminal`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('role', 'writer');
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${target.token}` } });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text = (text + chunk).slice(0, 4096)));
      response.on('end', () => {
        let error: { code?: string; message?: string } | undefined;
        try {
          error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
        } catch {
          error = undefined;
        }
        reject(serverError(response.statusCode ?? 0, error?.code, error?.message ?? `HTTP ${response.statusCode}`));
      });
      socket.terminate();
    });
    socket.once('error', (error) => reject(new AseError('CONNECTION_CLOSED', `ase serve at ${target.url}: ${error.message}`)));
  });
}

interface StatusFrame {
  type: 'status';
  mode: string;
  running: boolean;
}

/** The body of `GET /api/sessions/:id/tree` (what the desk needs of it). */
interface TreeBody {
  focus: string;
  nodes: Record<string, { sessionId: string; parentId?: string; state: string }>;
}

/** How long a move (enter, exit) may take before the desk gives up on it (a slow agent start on a loaded machine). */
const MOVE_MS = 90_000;

/**
 * This terminal as the desk of a session the server hosts, until the person hands it over
 * (Ctrl-], exit 0), leaves from the banner (Ctrl-], exit 0), the session ends (exit 0) or the
 * connection is lost (exit 1).
 *
 * A session of a session tree on the server (`GET /api/sessions/:id/tree` answers): Ctrl-] opens
 * the menu of `ase run --sub-agents` (desk-menu.ts) over the terminal UI instead. A digit enters
 * that sub-agent: the tree's focus moves to it (`POST …/tree/enter`), its turn is interrupted, it
 * switches to local mode, and the desk reconnects to its terminal (same session id, its own
 * terminal UI). x goes back: the focus returns to the parent (`…/tree/exit`), the desk reconnects
 * to the parent's terminal UI (it kept running, hidden), and the sub-agent is completed
 * (`…/tree/complete`): its last answer is typed into the parent's UI once, and it is stopped.
 * h (or Ctrl-] again) hands the session shown to remote control, as Ctrl-] does outside a tree.
 */
export async function attachDesk(target: ServerTarget, sessionId: string, output: Output): Promise<number> {
  let socket = await connectWriter(target, sessionId);
  /** The session the desk shows now (a sub-agent after an enter). */
  let shown = sessionId;
  let desk: Desk | undefined;
  let mode = '';
  let running = false;
  /** Ctrl-] was pressed: waiting for the server to confirm remote control. */
  let handingOver = false;
  /** The "controlled remotely" line is on screen. */
  let banner = false;
  /** A key on the banner asked for local control; waiting for the terminal UI. */
  let reclaiming = false;
  /** The tree of the session shown is being read for the chord menu. */
  let opening = false;
  /** An enter or exit under way: keys are dropped until it is done. */
  let moving = false;
  /** Counts moves begun and ended: a writer connection opened for a move that is over is closed, not shown. */
  let moveCount = 0;
  /** What the desk shows, but the menu: closing the menu repaints the screen as the terminal UI left it. */
  let mirror: TerminalMirror | undefined;
  /** Completions still being delivered when the desk ends are not waited for: the server finishes them. */
  const leaving = new AbortController();
  let finished: { code: number; message: string; clear: boolean } | undefined;
  let settle: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (settle = resolve));
  const finish = (code: number, message: string, clear: boolean) => {
    if (finished) return;
    finished = { code, message, clear };
    settle();
  };
  const send = (data: string | Buffer) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(data);
  };
  const toDesk = (data: string | Buffer) => {
    mirror?.write(typeof data === 'string' ? data : data.toString('utf8'));
    desk?.write(data);
  };
  const showBanner = (line: string) => {
    banner = true;
    toDesk(`${CLEAR_SCREEN}${line}\r\n`);
  };
  const note = (line: string) => toDesk(`\r\n[ase] ${line}\r\n`);

  /** The chord menu over the screen; the UI's output goes through it. */
  const menu = new MenuOverlay<Buffer>({ terminal: () => desk, show: toDesk, screen: (draw) => mirror?.screen(draw) });

  /** Wires a writer socket: only the one the desk uses now is heard (an old one closed on purpose is not an end). */
  const wire = (ws: WebSocket, id: string) => {
    ws.on('message', (data, isBinary) => {
      if (ws !== socket) return;
      if (isBinary) {
        const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
        // The old terminal UI's last words after the switch would be drawn over the banner.
        if (banner) return;
        return menu.output(bytes);
      }
      let frame: StatusFrame | { type: 'error'; message: string };
      try {
        frame = JSON.parse(data.toString()) as typeof frame;
      } catch {
        return;
      }
      if (frame.type === 'error') {
        if (reclaiming) {
          reclaiming = false;
          showBanner(`${REMOTE_BANNER}\r\n${frame.message}`);
        }
        return;
      }
      if (frame.type !== 'status') return;
      mode = frame.mode;
      running = frame.running;
      if (handingOver) {
        if (mode !== 'local' || !running) finish(0, `session ${id} handed to remote control; take it back with: ase attach ${id}`, true);
        return;
      }
      if (mode !== 'local' && !reclaiming && !banner) {
        menu.close(false);
        showBanner(REMOTE_BANNER);
      } else if (running && banner) {
        // The terminal UI is back: it draws the whole conversation from here.
        banner = false;
        reclaiming = false;
        toDesk(CLEAR_SCREEN);
      }
    });
    ws.on('close', (code, reason) => {
      if (ws !== socket) return;
      if (code === 1000) finish(0, `session ${id} ended`, false);
      else if (code === 4409) finish(1, `ase attach: ${reason.toString() || 'a desk is already attached'} to session ${id}`, false);
      else finish(1, `ase attach: the connection to ${target.url} closed (${code}${reason.length > 0 ? `: ${reason.toString()}` : ''})`, false);
    });
    ws.on('error', () => undefined); // the close that follows says it
  };

  /** The desk now shows `id`'s terminal: a new writer connection (its first frame repaints the screen), the old one closed. */
  const show = async (id: string) => {
    const moveAtStart = moveCount;
    const next = await connectWriter(target, id);
    // The move timed out, or the desk ended, while this connection was opening: it must not become
    // the desk's writer (nothing would close it, and the server would refuse the next desk).
    if (finished || moveAtStart !== moveCount) {
      next.close(1000);
      return;
    }
    const old = socket;
    socket = next;
    shown = id;
    mode = '';
    running = false;
    banner = false;
    reclaiming = false;
    wire(next, id);
    old.close(1000);
    toDesk(CLEAR_SCREEN);
    if (desk) send(JSON.stringify({ type: 'resize', cols: desk.cols, rows: desk.rows }));
  };

  const request = <T>(method: string, route: string, body?: unknown) => serverRequest<T>(target, method, route, body);
  const path = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

  /** Ctrl-]: the menu for a session of a tree on the server; otherwise the hand-over. */
  const chord = async () => {
    opening = true;
    let tree: TreeBody | undefined;
    let listed: { sessionId: string; agent: string }[] = [];
    try {
      tree = await request<TreeBody>('GET', `${path(shown)}/tree`);
      listed = (await request<{ sessions: { sessionId: string; agent: string }[] }>('GET', '/api/sessions')).sessions;
    } catch (error) {
      // In no tree: Ctrl-] hands over, as it always did. A tree that could not be read: a line, nothing else.
      if (!isAseError(error, 'SESSION_NOT_FOUND')) {
        opening = false;
        return note(`the session tree of ${shown} could not be read: ${error instanceof Error ? error.message : String(error)}`);
      }
      tree = undefined;
    } finally {
      opening = false;
    }
    if (finished || moving) return;
    if (!tree) return handOver();
    const agents = new Map(listed.map((s) => [s.sessionId, s.agent]));
    const kids = Object.values(tree.nodes)
      .filter((n) => n.parentId === shown)
      .map((n) => ({ id: n.sessionId, state: n.state, agent: agents.get(n.sessionId) ?? '?' }));
    menu.open(new DeskMenu(shown, kids, tree.nodes[shown]?.parentId === undefined));
  };

  const handOver = () => {
    handingOver = true;
    if (mode !== 'local') finish(0, `session ${shown} is under remote control; take it back with: ase attach ${shown}`, true);
    else send(JSON.stringify({ type: 'mode', to: 'remote' }));
  };

  const enter = async (childId: string) => {
    await enterSubAgent({
      focus: async () => void (await request('POST', `${path(childId)}/tree/enter`, {})),
      state: () => request<{ phase?: string; mode?: string }>('GET', path(childId)),
      interrupt: () => request('POST', `${path(childId)}/abort`, {}),
      switchToLocal: () => request('POST', `${path(childId)}/mode`, { to: 'local' }),
    });
    await show(childId);
  };

  const exit = async () => {
    const childId = shown;
    const tree = await request<TreeBody>('POST', `${path(childId)}/tree/exit`, {});
    await show(tree.focus);
    // Its answer is typed into the parent's UI shown now (the server waits for the agent to take it).
    void fetch(`${target.url}${path(childId)}/tree/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
      body: '{}',
      signal: leaving.signal,
    })
      .then(async (response) => {
        if (!response.ok && !finished) note(`sub-agent ${childId}: its answer could not be delivered: ${(await response.text()).slice(0, 300)}`);
      })
      .catch(() => undefined);
  };

  /** Runs a move; keys wait for it; a failure is a line on the terminal (the session shown stays). */
  const move = (line: string, work: () => Promise<void>) => {
    moving = true;
    moveCount++;
    toDesk(`${CLEAR_SCREEN}[ase] ${line}\u2026\r\n`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new AseError('TIMEOUT', `${line}: no answer within ${MOVE_MS / 1000} s`)), MOVE_MS);
    });
    void Promise.race([work(), timeout])
      .catch((error: unknown) => {
        if (finished) return;
        // The session shown draws itself again (the move cleared the screen), then the failure.
        mirror?.screen((screen) => desk?.write(screen));
        if (desk) {
          send(JSON.stringify({ type: 'resize', cols: Math.max(1, desk.cols - 1), rows: desk.rows }));
          send(JSON.stringify({ type: 'resize', cols: desk.cols, rows: desk.rows }));
        }
        note(error instanceof Error ? error.message : String(error));
      })
      .finally(() => {
        clearTimeout(timer);
        moving = false;
        moveCount++; // what this move still has under way is stale now (see show)
      });
  };

  /** What the menu's choices do here. */
  const menuMoves: MenuMoves = {
    handover: handOver,
    enter: (id) => move(`entering sub-agent session ${id}`, () => enter(id)),
    exit: () => move('back to the parent session', exit),
  };

  wire(socket, sessionId);
  try {
    desk = openDesk({
      onKeys: (keys) => {
        if (moving || opening || handingOver) return;
        if (banner) {
          if (keys.includes('\x1d')) finish(0, `left session ${shown} under remote control; take it back with: ase attach ${shown}`, true);
          else if (!reclaiming) {
            reclaiming = true;
            showBanner('taking it back\u2026');
            send(JSON.stringify({ type: 'mode', to: 'local' }));
          }
          return;
        }
        if (menu.isOpen) return void menu.keys(keys, menuMoves);
        const { before, detached } = splitAtDetachKey(keys);
        if (before !== '') send(Buffer.from(before, 'utf8'));
        if (!detached) return;
        if (mode !== 'local') return handOver();
        void chord();
      },
      onResize: (cols, rows) => {
        mirror?.resize(cols, rows);
        send(JSON.stringify({ type: 'resize', cols, rows }));
        menu.draw(); // at the new size (the UI's repaint is held until the menu closes)
      },
      onSignal: (signal) => {
        socket.close(1000);
        process.kill(process.pid, signal);
      },
    });
    mirror = new TerminalMirror(desk.cols, desk.rows);
    send(JSON.stringify({ type: 'resize', cols: desk.cols, rows: desk.rows }));
    await ended;
    if (finished?.clear) await desk.settle(); // handed over
  } finally {
    leaving.abort();
    mirror?.dispose();
    mirror = undefined;
    desk?.restore({ clear: finished?.clear ?? false });
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(1000);
  }
  const result = finished!;
  output.err(`${result.message}\n`);
  return result.code;
}
