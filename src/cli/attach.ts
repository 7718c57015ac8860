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
import { AseError } from '../index.js';
import { CLEAR_SCREEN, openDesk, splitAtDetachKey, type Desk } from './desk-terminal.js';
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

/**
 * This terminal as the desk of a session the server hosts, until the person hands it over
 * (Ctrl-], exit 0), leaves from the banner (Ctrl-], exit 0), the session ends (exit 0) or the
 * connection is lost (exit 1).
 */
export async function attachDesk(target: ServerTarget, sessionId: string, output: Output): Promise<number> {
  const socket = await connectWriter(target, sessionId);
  let desk: Desk | undefined;
  let mode = '';
  let running = false;
  /** Ctrl-] was pressed: waiting for the server to confirm remote control. */
  let handingOver = false;
  /** The "controlled remotely" line is on screen. */
  let banner = false;
  /** A key on the banner asked for local control; waiting for the terminal UI. */
  let reclaiming = false;
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
  const showBanner = (line: string) => {
    banner = true;
    desk?.write(`${CLEAR_SCREEN}${line}\r\n`);
  };

  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      // The old terminal UI's last words after the switch would be drawn over the banner.
      if (!banner) desk?.write(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer));
      return;
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
      if (mode !== 'local' || !running) finish(0, `session ${sessionId} handed to remote control; take it back with: ase attach ${sessionId}`, true);
      return;
    }
    if (mode !== 'local' && !reclaiming && !banner) showBanner(REMOTE_BANNER);
    else if (running && banner) {
      // The terminal UI is back: it draws the whole conversation from here.
      banner = false;
      reclaiming = false;
      desk?.write(CLEAR_SCREEN);
    }
  });
  socket.on('close', (code, reason) => {
    if (code === 1000) finish(0, `session ${sessionId} ended`, false);
    else if (code === 4409) finish(1, `ase attach: ${reason.toString() || 'a desk is already attached'} to session ${sessionId}`, false);
    else finish(1, `ase attach: the connection to ${target.url} closed (${code}${reason.length > 0 ? `: ${reason.toString()}` : ''})`, false);
  });
  socket.on('error', () => undefined); // the close that follows says it

  try {
    desk = openDesk({
      onKeys: (keys) => {
        if (banner) {
          if (keys.includes('\x1d')) finish(0, `left session ${sessionId} under remote control; take it back with: ase attach ${sessionId}`, true);
          else if (!reclaiming) {
            reclaiming = true;
            showBanner('taking it back\u2026');
            send(JSON.stringify({ type: 'mode', to: 'local' }));
          }
          return;
        }
        const { before, detached } = splitAtDetachKey(keys);
        if (before !== '' && !handingOver) send(Buffer.from(before, 'utf8'));
        if (!detached || handingOver) return;
        handingOver = true;
        if (mode !== 'local') finish(0, `session ${sessionId} is under remote control; take it back with: ase attach ${sessionId}`, true);
        else send(JSON.stringify({ type: 'mode', to: 'remote' }));
      },
      onResize: (cols, rows) => send(JSON.stringify({ type: 'resize', cols, rows })),
      onSignal: (signal) => {
        socket.close(1000);
        process.kill(process.pid, signal);
      },
    });
    send(JSON.stringify({ type: 'resize', cols: desk.cols, rows: desk.rows }));
    await ended;
  } finally {
    desk?.restore({ clear: finished?.clear ?? false });
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(1000);
  }
  const result = finished!;
  output.err(`${result.message}\n`);
  return result.code;
}
