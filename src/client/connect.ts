/**
 * `connect({ url, token })`: a typed client of `ase serve`'s HTTP API for Node and browsers, so a
 * remote client need not write its own requests, SSE parser and reconnect. One method per route a
 * client drives a session with (docs/server.md, "Routes"), and `events(id)`, the session's stream
 * (remote-events.ts). `send` retries a request that got no answer with the same `localId`: the
 * server stores a message once per `localId`, so a retry never sends it twice.
 *
 * Browser-safe: no `node:` import (the `agent-session-engine/client` entry loads nothing else).
 */
import type { ControlMode } from '../events/session-input.js';
import { remoteEvents, type RemoteEvent, type RemoteEventsOptions } from './remote-events.js';
import { RemoteError, remoteTransport } from './remote-transport.js';

export interface ConnectOptions {
  /** The server, e.g. `http://127.0.0.1:8787` (what `ase serve` prints, without `?token=`). */
  url: string;
  /** The bearer token (`ase serve` prints it, or `--token-file`). Omit in a page of the server itself (its cookie). */
  token?: string;
  /** A `fetch` of your own (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** One session in `sessions.list()`. */
export interface RemoteSessionInfo {
  sessionId: string;
  agent: string;
  workDir: string;
  phase: string;
  status: 'running' | 'hibernated' | 'stored';
  lastActivityAt: number;
  costUsd: number;
  parentId?: string;
}

export interface RemoteCreateOptions {
  agent: string;
  workDir: string;
  mode?: ControlMode;
  engineOptions?: Record<string, unknown>;
  sessionId?: string;
  parentId?: string;
  parentCallId?: string;
}

/** What `send` resolves with once the server stored the message: its `seq` once journaled (`delivered`), null while `queued`. */
export interface RemoteSendResult {
  localId: string;
  seq: number | null;
  status: 'delivered' | 'queued';
}

export interface AseClient {
  readonly sessions: {
    /** Open and stored sessions, newest activity first. */
    list(): Promise<RemoteSessionInfo[]>;
    /** Creates (or continues, with a stored `sessionId`) a session on the server. */
    create(options: RemoteCreateOptions): Promise<{ sessionId: string }>;
    /** A live session's snapshot (`live: true`) or a stored one's summary (`live: false`). */
    get(sessionId: string): Promise<{ live: boolean; sessionId: string; [key: string]: unknown }>;
    /** Stops a session; its final snapshot. */
    stop(sessionId: string): Promise<{ stopped: true; snapshot: unknown }>;
  };
  /** Sends a message; resolves once the server stored it. Retries (same `localId`) when no answer came. */
  send(sessionId: string, text: string, options?: { localId?: string }): Promise<RemoteSendResult>;
  /** Answers a permission request; a later answer than another client's rejects with `PERMISSION_ALREADY_DECIDED` (`body.outcome` says what won). */
  decide(sessionId: string, requestId: string, decision: 'allow' | 'deny', options?: { updatedInput?: unknown; message?: string }): Promise<{ requestId: string; outcome: unknown }>;
  /** Interrupts the running turn (`NOTHING_TO_ABORT` when none runs). */
  abort(sessionId: string): Promise<void>;
  /** Hands the session to its terminal (`local`) or to remote clients (`remote`). */
  mode(sessionId: string, to: ControlMode): Promise<{ mode: ControlMode }>;
  /**
   * The session's events from `afterSeq` on: every durable entry once, in order, across reconnects
   * (`Last-Event-ID`); ephemeral frames while connected. Runs until you break out of the loop or
   * abort `signal`; a refused stream throws a `RemoteError`.
   */
  events(sessionId: string, options?: RemoteEventsOptions): AsyncGenerator<RemoteEvent, void, undefined>;
}

const SEND_ATTEMPTS = 3;

export function connect(options: ConnectOptions): AseClient {
  if (typeof options?.url !== 'string' || !/^https?:\/\//.test(options.url)) throw new TypeError(`connect(): url must be an http(s) URL, got ${String(options?.url)}`);
  const transport = remoteTransport(options);
  const at = (sessionId: string, rest = '') => `/api/sessions/${encodeURIComponent(sessionId)}${rest}`;
  return {
    sessions: {
      list: async () => (await transport.json<{ sessions: RemoteSessionInfo[] }>('GET', '/api/sessions')).sessions,
      create: (create) => transport.json('POST', '/api/sessions', create),
      get: (sessionId) => transport.json('GET', at(sessionId)),
      stop: (sessionId) => transport.json('POST', at(sessionId, '/stop'), {}),
    },
    async send(sessionId, text, sendOptions = {}) {
      const localId = sendOptions.localId ?? globalThis.crypto.randomUUID();
      for (let attempt = 1; ; attempt++) {
        try {
          return await transport.json<RemoteSendResult>('POST', at(sessionId, '/messages'), { text, localId });
        } catch (error) {
          // No answer (the connection dropped): the message may or may not be stored; the same localId makes asking again safe.
          if (error instanceof RemoteError || attempt >= SEND_ATTEMPTS) throw error;
        }
      }
    },
    decide: (sessionId, requestId, decision, decideOptions = {}) =>
      transport.json('POST', at(sessionId, `/permissions/${encodeURIComponent(requestId)}`), {
        decision,
        ...(decideOptions.updatedInput !== undefined && { updatedInput: decideOptions.updatedInput }),
        ...(decideOptions.message !== undefined && { message: decideOptions.message }),
      }),
    abort: async (sessionId) => void (await transport.json('POST', at(sessionId, '/abort'), {})),
    mode: (sessionId, to) => transport.json('POST', at(sessionId, '/mode'), { to }),
    events: (sessionId, eventsOptions) => remoteEvents(transport, sessionId, eventsOptions),
  };
}
