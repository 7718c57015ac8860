/**
 * The engine's end of the hooks: a unix socket in the engine's private temp directory (0700, so
 * only this user reaches it) where the hook script (hook-script.ts) sends one `{"hook": …}` line per
 * hook the CLI runs, and waits for one reply line: `{"output": <hook stdout JSON>}` or `{}`.
 * A hook whose connection closes before the reply (the CLI killed it: the person answered the dialog
 * in the terminal first, or interrupted the turn) is reported through `onHangUp`.
 */
import { createServer, type Server, type Socket } from 'node:net';

/**
 * A hook's JSON is one line: its tool input may hold a whole file (a Write's content), so the bound
 * is generous; a longer line, or one that never ends, closes the connection (the script then fails
 * closed) rather than growing without end.
 */
export const MAX_HOOK_LINE_CHARS = 32 * 1024 * 1024;

/** One hook call waiting for the engine's reply. */
export interface HookCall {
  /** The JSON the CLI gave the hook on stdin. */
  readonly input: Record<string, unknown>;
  /** Replies once (later calls are ignored): `output` is what the hook prints for the CLI. */
  reply(output?: unknown): void;
  /** Whether the reply was sent or the hook went away. */
  readonly settled: boolean;
  /** Called when the hook goes away before a reply. */
  onHangUp(listener: () => void): void;
}

export class HookServer {
  readonly path: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  private constructor(path: string, server: Server) {
    this.path = path;
    this.#server = server;
  }

  static async listen(path: string, onCall: (call: HookCall) => void): Promise<HookServer> {
    const server = createServer();
    const hooks = new HookServer(path, server);
    server.on('connection', (socket) => hooks.#accept(socket, onCall));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return hooks;
  }

  /** Stops listening and drops every waiting hook (their scripts then fail closed). */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(socket: Socket, onCall: (call: HookCall) => void): void {
    this.#sockets.add(socket);
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    let buffered = '';
    let call: (HookCall & { hangUp(): void }) | undefined;
    socket.on('close', () => {
      this.#sockets.delete(socket);
      call?.hangUp();
    });
    socket.on('data', (chunk: string) => {
      if (call) return;
      // Only the new chunk can hold the line's end (an earlier one would have made the call), so
      // the search is linear in the bytes received, not quadratic in the buffered line.
      const inChunk = chunk.indexOf('\n');
      const end = inChunk < 0 ? -1 : buffered.length + inChunk;
      buffered += chunk;
      if (end < 0) {
        if (buffered.length > MAX_HOOK_LINE_CHARS) socket.destroy();
        return;
      }
      let input: Record<string, unknown> = {};
      try {
        const parsed = JSON.parse(buffered.slice(0, end)) as { hook?: unknown };
        if (parsed.hook && typeof parsed.hook === 'object') input = parsed.hook as Record<string, unknown>;
      } catch {
        // A malformed line gets the empty reply.
      }
      let settled = false;
      const hangUps: (() => void)[] = [];
      call = {
        input,
        get settled() {
          return settled;
        },
        reply: (output?: unknown) => {
          if (settled) return;
          settled = true;
          socket.end(`${JSON.stringify(output === undefined ? {} : { output })}\n`);
        },
        onHangUp: (listener) => void hangUps.push(listener),
        hangUp: () => {
          if (settled) return;
          settled = true;
          for (const listener of hangUps) listener();
        },
      };
      onCall(call);
    });
  }
}
