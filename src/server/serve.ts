/**
 * `startServer()`: the server on a port, its sessions in a supervisor (`createSupervisor`). Refuses to bind a non-loopback address without a token
 * given explicitly (a token file), generates a token otherwise, and listens with
 * @hono/node-server. `close()` ends the streams, stops the sessions it created and closes the port.
 */
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { defaultRegistry } from '../engines/default-registry.js';
import type { EngineFactory } from '../engines/core/engine.js';
import { AseError } from '../errors.js';
import { FileJournal } from '../effects/journal/file-journal.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import type { SessionStore } from '../effects/store/session-store.js';
import { createServerApp, type ServerApp, type ServerAppOptions } from './app.js';
import { generateToken, isLoopback, ServerAuth } from './auth.js';
import { recoverSessions, type RecoveryReport } from './recover-sessions.js';
import { createSessionHost, type SessionHost } from './session-host.js';

export interface ServerOptions extends Partial<Omit<ServerAppOptions, 'host' | 'journal' | 'auth' | 'agents'>> {
  /** Address to bind. Default 127.0.0.1. A non-loopback one needs `token`. */
  hostname?: string;
  /** Port; 0 picks a free one. Default 8787. */
  port?: number;
  /** The bearer token (e.g. read from `--token-file`). Default: a new random one. */
  token?: string;
  /** Where sessions and transcripts are kept. */
  dataDir: string;
  /** Runs the sessions. Default: `createSessionHost` on `dataDir`. */
  host?: SessionHost;
  journal?: TranscriptJournal;
  store?: SessionStore;
  /** Extra engines (e.g. a scripted fake) for the default host. */
  engines?: EngineFactory[];
  /** The default host's supervisor: open sessions allowed at once. */
  maxSessions?: number;
  /** The default host's supervisor: idle sessions stop their agent after this long (0: never). */
  hibernateAfterMs?: number;
  /**
   * On start, open the stored sessions that were live when the last server died (recover-sessions.ts):
   * their turn in flight ends `interrupted`, open prompts `cancelled`, accepted messages go out. Default true.
   */
  recoverSessions?: boolean;
  /** The default host's supervisor: the agent executable per engine name for new sessions (`--bin claude=PATH`). */
  bins?: Readonly<Record<string, string>>;
  /** The default host's supervisor: each session's ownership lease, in ms (createSession's `leaseTtlMs`). */
  leaseTtlMs?: number;
  /** The default host: offer every session `spawn_session` / `session_status` (`ase serve --sub-agents`; SessionHostOptions.subAgents). */
  subAgents?: boolean;
}

export interface RunningServer {
  /** `http://host:port`. */
  url: string;
  /** The URL to open in a browser: it carries the token once, and the page trades it for a cookie. */
  pageUrl: string;
  token: string;
  /** True when the token was generated here (print it). */
  generatedToken: boolean;
  port: number;
  app: ServerApp;
  host: SessionHost;
  journal: TranscriptJournal;
  /** Resolves once every session that was live when the last server died has been tried (`recoverSessions`). */
  recovery: Promise<RecoveryReport>;
  /** The Node HTTP server that listens (e.g. for a test to watch every response it writes). */
  httpServer: ServerType;
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  if (!isLoopback(hostname) && options.token === undefined) {
    throw new AseError('INVALID_OPTIONS', `ase serve: binding ${hostname} (not loopback) needs --token-file: a server others can reach must not run with a token only this terminal saw`);
  }
  const token = options.token ?? generateToken();
  const auth = new ServerAuth(token);
  const journal = options.journal ?? new FileJournal({ dir: path.join(options.dataDir, 'transcripts') });
  const registry = defaultRegistry();
  for (const engine of options.engines ?? []) registry.register(engine);
  const host =
    options.host ??
    createSessionHost({
      dataDir: options.dataDir,
      journal,
      ...(options.store && { store: options.store }),
      ...(options.engines && { engines: options.engines }),
      ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
      ...(options.hibernateAfterMs !== undefined && { hibernateAfterMs: options.hibernateAfterMs }),
      ...(options.bins && { bins: options.bins }),
      ...(options.leaseTtlMs !== undefined && { leaseTtlMs: options.leaseTtlMs }),
      ...(options.subAgents && { subAgents: true }),
    });
  const { hostname: _h, port: _p, token: _t, dataDir: _d, host: _host, journal: _j, store: _s, engines: _e, maxSessions: _m, hibernateAfterMs: _hib, recoverSessions: _r, bins: _bins, leaseTtlMs: _ttl, subAgents: _sub, ...appOptions } = options;
  const app = createServerApp({ ...appOptions, allowedHosts: [hostname, ...(options.allowedHosts ?? [])], host, journal, auth, agents: registry.names() });

  const server = await new Promise<ServerType>((resolve, reject) => {
    // The terminal's WebSockets (`GET /api/sessions/:id/terminal`): `ws` does the protocol, hono's
    // node adapter routes the upgrade through the app (auth, Origin, 404 before upgrading). A
    // client frame is at most 1 MiB (a paste); `ws` refuses bigger ones.
    const websocket = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
    const s = serve({ fetch: app.app.fetch, port: options.port ?? 8787, hostname, websocket: { server: websocket } }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const shown = hostname.includes(':') ? `[${hostname}]` : hostname;
  const url = `http://${shown}:${port}`;
  // After listening: a client may connect while the sessions reopen (its first request joins the same open).
  const closed = new AbortController();
  const recovery =
    options.recoverSessions === false
      ? Promise.resolve<RecoveryReport>({ reopened: [], skipped: [] })
      : recoverSessions(host, { open: (id) => app.openSession(id), signal: closed.signal });
  let closing: Promise<void> | undefined;
  return {
    url,
    pageUrl: `${url}/?token=${encodeURIComponent(token)}`,
    token,
    generatedToken: options.token === undefined,
    port,
    app,
    host,
    journal,
    recovery,
    httpServer: server,
    close() {
      closing ??= (async () => {
        closed.abort();
        app.close();
        await host.shutdown();
        await recovery.catch(() => undefined);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        if (!options.journal) await journal.close?.();
      })();
      return closing;
    },
  };
}
