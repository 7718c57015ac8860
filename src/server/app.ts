/**
 * The HTTP API of `ase serve`, on hono (web-standard Request/Response, so the same app runs under
 * Node's http server here and under `app.request()` in tests). Every request is authenticated
 * (auth.ts), state-changing ones must come from an allowed Origin, bodies are bounded and parsed
 * with clear 400s, ids are checked before they reach a store or a file.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AseError, isAseError } from '../errors.js';
import { ControlModeSchema } from '../events/session-input.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import type { JournaledEntry } from '../events/transcript-entry.js';
import { answerText, type MessageWithText } from '../events/message-text.js';
import { SESSION_ID_PATTERN } from '../effects/store/file-store.js';
import type { Session } from '../session/session.js';
import { COOKIE_NAME, PAGE_TTL_MS, type ServerAuth } from './auth.js';
import { EventStream } from './event-stream.js';
import { errorBody, toHttpError } from './http-errors.js';
import type { CommandOutcome, SessionCommand, SessionCommandRouter } from '../effects/session-commands.js';
import type { SessionLiveRelay } from '../effects/session-live-relay.js';
import { permissionPromptOf } from '../events/ephemeral.js';
import type { SessionSnapshot } from '../session/snapshot.js';
import { stat } from 'node:fs/promises';
import type { ErrorCode } from '../events/error-codes.js';
import { allowedHostNames, hostAllowed } from './host-check.js';
import { readBodyText } from './read-body.js';
import { chartAt } from '../actors/chart-replay.js';
import { openApiDocument } from './openapi.js';
import { renderPage } from './page.js';
import { mountPageAssets } from './page-assets.js';
import { SessionHub } from './session-hub.js';
import { LIVE_PHASES } from './recover-sessions.js';
import type { SessionHost } from './session-host.js';
import { TreeFeed } from './tree-feed.js';
import * as treeRules from '../session/session-tree-state.js';
import { oneAtATime } from '../effects/one-at-a-time.js';
import { storedOrStopped } from '../session/stored-or-stopped.js';
import { typedResultDelivery } from '../session/typed-result.js';
import { diagramSvg } from './diagram-svg.js';
import { upgradeWebSocket } from '@hono/node-server';
import type { WebSocket } from 'ws';
import { TerminalRoom, type TerminalRole } from './terminal-room.js';
import { sessionMachine } from '../actors/session.js';
import { toGraph } from '../actors/diagram.js';

export interface ServerAppOptions {
  host: SessionHost;
  journal: TranscriptJournal;
  auth: ServerAuth;
  /** Engine names the new-session form offers. */
  agents: string[];
  /** Origins allowed besides the server's own (CORS is enabled for exactly these). */
  allowedOrigins?: string[];
  /** Largest request body in bytes. Default 1.5 MiB (a message may be 1 MiB). */
  maxBodyBytes?: number;
  /** Heartbeat interval of event streams; at most 10 s. Default 10000. */
  heartbeatMs?: number;
  /** Grace before `client_offline` once the last stream closed. Default 3000. */
  presenceGraceMs?: number;
  /** Bytes of frames a client may leave untaken before it is cut off (its queue dropped at once). Default 4 MiB. */
  maxQueuedBytes?: number;
  /** How long an event-stream or terminal client may take nothing while bytes wait for it before it is cut off. Default 30000. */
  writeTimeoutMs?: number;
  /** How long `POST messages` waits for the message's journal entry before answering `seq: null`. Default 1000. */
  messageSeqWaitMs?: number;
  /** Unsent terminal output bytes a terminal client (`GET …/terminal`) may have before it is cut. Default 4 MiB. */
  maxTerminalBufferedBytes?: number;
  /** Show secrets in the inspector's context. Default false (redacted). */
  revealSecrets?: boolean;
  /**
   * `Host` names answered besides loopback ones (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`);
   * any other is 421 `FORBIDDEN_HOST` before authentication (DNS rebinding). `startServer` adds
   * the name it binds. Default: none.
   */
  allowedHosts?: string[];
  /**
   * Carries commands for sessions another live host owns to that host (a store shared by hosts:
   * `PostgresCommandRouter`), and applies the commands other hosts route here. Without it such a
   * command is refused with `SESSION_OWNED`.
   */
  router?: SessionCommandRouter;
  /**
   * Carries the ephemeral frames (text deltas, prompts, status) of sessions this host runs to pages on
   * other hosts, and those of sessions other hosts run to this host's streams (`PostgresLiveRelay`).
   * Without it a stream of a session another host runs carries its durable entries only.
   */
  relay?: SessionLiveRelay;
  /** Where unexpected failures (500s) are logged, one line each with the request id. Default: stderr. */
  logError?: (line: string) => void;
}

export interface ServerApp {
  app: Hono;
  hubs: Map<string, SessionHub>;
  /** The live session, continuing a stored one with the server's hooks attached (what a client's first action does). */
  openSession(id: string): Promise<Session>;
  /** Closes every stream and stops the heartbeat (sessions are the host's). */
  close(): void;
}

const SESSION_ID = SESSION_ID_PATTERN;
/** Stored phases a stop finishes by taking the session over (its owner died with an agent, or mid-stop): see `stopNotRunningHere`. */
const STOP_BY_TAKING_OVER: ReadonlySet<string> = new Set([...LIVE_PHASES, 'stopping']);
const LOCAL_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Journal entries read per page when searching a journal backwards (the last answer, a message by its localId). */
const JOURNAL_PAGE = 500;

const SessionIdParam = z.string().regex(SESSION_ID, 'a session id: 1-128 letters, digits or . _ -, not starting with .');
const CreateBody = z
  .strictObject({
    agent: z.string().min(1).max(64),
    workDir: z.string().min(1).max(4096),
    mode: ControlModeSchema.optional(),
    engineOptions: z.record(z.string(), z.unknown()).optional(),
    /** The session that started this one (a sub-agent session): stored with it, as `createSession`'s `parentId`, and a node of the parent's tree (the host's `create`). */
    parentId: SessionIdParam.optional(),
    parentCallId: z.string().min(1).max(256).optional(),
  })
  .refine((b) => b.parentCallId === undefined || b.parentId !== undefined, { path: ['parentCallId'], message: 'needs parentId (the session whose call it is)' });
const MessageBody = z.strictObject({
  text: z.string().min(1),
  localId: z.string().regex(LOCAL_ID, 'localId: 1-128 letters, digits or . _ : -'),
});
const DecisionBody = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  updatedInput: z.unknown().optional(),
  message: z.string().optional(),
});
const ModeBody = z.strictObject({ to: ControlModeSchema });
const TicketBody = z.strictObject({ sessionId: z.string().regex(SESSION_ID).optional() });

export function createServerApp(options: ServerAppOptions): ServerApp {
  const { host, journal, auth } = options;
  const heartbeatMs = Math.min(options.heartbeatMs ?? 10_000, 10_000);
  const maxBody = options.maxBodyBytes ?? 1.5 * 1024 * 1024;
  const hubs = new Map<string, SessionHub>();
  const hostNames = allowedHostNames(undefined, options.allowedHosts);
  const logError = options.logError ?? ((line: string) => process.stderr.write(`${line}\n`));
  const trees = new TreeFeed(host, hubs);
  // One for the server: it remembers what it typed into a parent's UI, so a retry never types it twice (typed-result.ts).
  const typedResults = typedResultDelivery();
  const app = new Hono();
  /** Per session id: its terminal's clients (terminal-room.ts), following the live Session object. */
  const rooms = new Map<string, TerminalRoom>();
  const roomFor = (session: Session): TerminalRoom => {
    let room = rooms.get(session.id);
    if (!room) {
      room = new TerminalRoom({
        sessionId: session.id,
        maxBufferedBytes: options.maxTerminalBufferedBytes ?? 4 * 1024 * 1024,
        writeTimeoutMs: options.writeTimeoutMs ?? 30_000,
        onClosed: (closed) => {
          if (rooms.get(closed.sessionId) === closed) rooms.delete(closed.sessionId);
        },
      });
      rooms.set(session.id, room);
    }
    room.bind(session);
    return room;
  };

  const hubFor = (id: string): SessionHub => {
    let hub = hubs.get(id);
    if (!hub) {
      hub = new SessionHub({
        sessionId: id,
        journal,
        presenceGraceMs: options.presenceGraceMs ?? 3000,
        inspectorBacklog: 500,
        revealSecrets: options.revealSecrets === true,
        // Its terminal is mirrored from the start, so a client connecting later sees the screen.
        onAttach: (session) => {
          roomFor(session);
          unfollowRemote(id); // Runs here now: its frames come from the session itself.
        },
        ...(options.relay && { onFrame: (event: string, data: unknown) => options.relay!.publish(id, event, data) }),
      });
      hubs.set(id, hub);
      // Forgotten once nothing watches it and no session runs (its answers by localId are then
      // found in the journal instead).
      const created = hub;
      created.onIdle = () => {
        if (hubs.get(id) !== created) return;
        created.close();
        hubs.delete(id);
      };
      const live = host.get(id);
      if (live) hub.attach(live);
    }
    return hub;
  };

  const checkId = (id: string | undefined): string => {
    if (id === undefined || !SESSION_ID.test(id)) throw new AseError('INVALID_INPUT', `not a session id: ${JSON.stringify(id)}`);
    return id;
  };

  /** 404 unless the session is live here, stored, or has a transcript. */
  const assertKnown = async (id: string): Promise<void> => {
    if (host.get(id) || hubs.get(id)?.session) return;
    if (await host.stored(id)) return;
    if (((await journal.bounds?.(id))?.lastSeq ?? 0) > 0) return;
    throw new AseError('NOT_FOUND', `no session ${id}`);
  };

  /** Per session another host runs and a stream here shows: the relay subscription of its ephemeral frames. */
  const remoteFeeds = new Map<string, () => void>();
  const unfollowRemote = (id: string): void => {
    remoteFeeds.get(id)?.();
    remoteFeeds.delete(id);
  };
  /** The owner's snapshot of a session another host runs (its open prompts), asked through the router. */
  const peekOwner = async (id: string): Promise<SessionSnapshot | undefined> => {
    const outcome = await options.router?.route(id, { kind: 'peek' }).catch(() => undefined);
    return outcome?.ok ? (outcome.value.snapshot as SessionSnapshot) : undefined;
  };
  const sendSnapshot = (snapshot: SessionSnapshot, send: (event: string, data: unknown) => void): void => {
    send('snapshot', snapshot);
    for (const [requestId, open] of Object.entries(snapshot.requests)) send('permission_prompt', permissionPromptOf(requestId, open));
  };
  /**
   * A stream here of a session another host runs: its ephemeral frames through the relay while a
   * stream is open, and the owner's snapshot first (and again after a `resync`: frames were lost).
   */
  const followRemote = (hub: SessionHub, stream: EventStream): void => {
    const relay = options.relay;
    if (!relay || hub.session) return;
    if (!remoteFeeds.has(hub.id)) {
      remoteFeeds.set(
        hub.id,
        relay.subscribe(hub.id, ([event, data]) => {
          if (hub.session) return;
          if (event !== 'resync') return hub.broadcast(event, data);
          void peekOwner(hub.id).then((snapshot) => snapshot && !hub.session && sendSnapshot(snapshot, (e, d) => hub.broadcast(e, d)));
        }),
      );
    }
    void peekOwner(hub.id).then((snapshot) => snapshot && !hub.session && !stream.closed && sendSnapshot(snapshot, (e, d) => stream.ephemeral(e, d)));
  };

  /**
   * Opening a stored session and settling the stop of one that runs nowhere (`stopNotRunningHere`)
   * take turns per id: each takes the session's lease, and the other would find it held, by this
   * very server, and answer a spurious 409 `SESSION_OWNED`.
   */
  const inTurn = oneAtATime();

  /** The session if it runs here (its hub attached), else undefined. */
  const runningHere = (id: string): Session | undefined => {
    const hub = hubFor(id);
    const running = hub.session ?? host.get(id);
    if (running && !hub.session) hub.attach(running);
    return running;
  };

  /** Continues a stored session here; the caller holds the id's turn (`inTurn`). */
  const openHere = async (id: string, adopt: boolean): Promise<Session> => {
    const running = runningHere(id); // opened while this call waited for its turn
    if (running) return running;
    // A session another host stopped renewing is taken here only when asked (POST …/adopt).
    if (!adopt) await options.router?.refuseOrphaned?.(id);
    const hub = hubFor(id);
    const opened = await host.open(id, { onNotice: hub.onNotice, inspect: hub.inspect });
    if (!opened) throw new AseError('NOT_FOUND', `no session ${id}`);
    hub.attach(opened);
    return opened;
  };

  /** The live session, continuing a stored one if needed (actions need a running session). */
  const liveSession = async (id: string, adopt = false): Promise<Session> => runningHere(id) ?? inTurn(id, () => openHere(id, adopt));

  const readJson = async <T>(c: Context, schema: z.ZodType<T>): Promise<T> => {
    const text = await readBodyText(c.req.raw, maxBody);
    let data: unknown;
    try {
      data = text === '' ? {} : JSON.parse(text);
    } catch (error) {
      throw new AseError('BAD_JSON', `request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      throw new AseError('INVALID_INPUT', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    }
    return parsed.data;
  };

  const ownOrigins = (c: Context): Set<string> => {
    const hostHeader = c.req.header('host');
    const set = new Set(options.allowedOrigins ?? []);
    if (hostHeader) set.add(`${new URL(c.req.url).protocol}//${hostHeader}`);
    return set;
  };

  app.onError((error, c) => {
    const [status, body, logLine] = toHttpError(error, c.req);
    if (logLine !== undefined) logError(logLine);
    return c.json(body, status as 400);
  });

  // Before anything else, authentication included: a Host this server does not answer for, then a
  // path that does not decode (a bad percent-escape is the client's error, not a 500).
  app.use('*', async (c, next) => {
    const url = new URL(c.req.url);
    if (!hostAllowed(c.req.header('host') ?? url.host, hostNames)) {
      throw new AseError('FORBIDDEN_HOST', `this server does not answer for Host ${JSON.stringify((c.req.header('host') ?? '').slice(0, 100))}: add it with --allow-host`);
    }
    try {
      decodeURIComponent(url.pathname);
    } catch {
      throw new AseError('INVALID_INPUT', 'the path has a malformed percent-escape');
    }
    await next();
  });
  app.notFound((c) => c.json(errorBody('NOT_FOUND', `no route ${c.req.method} ${new URL(c.req.url).pathname}`), 404));

  // Security headers on everything; CORS only for configured origins.
  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    const origin = c.req.header('origin');
    if (origin && options.allowedOrigins?.includes(origin)) {
      c.header('Access-Control-Allow-Origin', origin);
      c.header('Vary', 'Origin');
    }
  });

  // Origin: a state-changing request from a browser page must come from this server or an allowed origin.
  app.use('*', async (c, next) => {
    const method = c.req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      const origin = c.req.header('origin');
      if (origin !== undefined && !ownOrigins(c).has(origin)) throw new AseError('FORBIDDEN_ORIGIN', `Origin ${origin} may not change state here`);
      const length = Number(c.req.header('content-length') ?? 0);
      if (length > maxBody) throw new AseError('BODY_TOO_LARGE', `request body over ${maxBody} bytes`, { details: { limit: maxBody } });
    }
    if (method === 'OPTIONS') {
      const origin = c.req.header('origin');
      if (!origin || !options.allowedOrigins?.includes(origin)) return c.body(null, 403);
      return c.body(null, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Last-Event-ID',
        'Access-Control-Max-Age': '600',
      });
    }
    await next();
  });

  // The page: `/?token=...` (the URL `ase serve` prints) trades the token for a page cookie.
  app.get('/', (c) => {
    const token = c.req.query('token');
    if (token !== undefined) {
      if (!auth.checkToken(token)) return c.html(loginPage('That token is not this server\'s.'), 401);
      const value = auth.openPage();
      c.header('Set-Cookie', `${COOKIE_NAME}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(PAGE_TTL_MS / 1000)}`);
      return c.redirect('/', 303);
    }
    const result = auth.check({ authorization: c.req.header('authorization'), cookie: c.req.header('cookie') });
    if (!result.ok) return c.html(loginPage('Open the URL that `ase serve` printed (it carries the token).'), 401);
    const nonce = randomUUID().replace(/-/g, '');
    c.header('Content-Security-Policy', `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    c.header('Cache-Control', 'no-store');
    return c.html(renderPage(nonce));
  });

  // The page's scripts (markdown-it from node_modules, the page's own), authenticated like the page.
  mountPageAssets(app, auth);

  // Everything under /api needs the token (or the page cookie); an event stream may use a ticket.
  app.use('/api/*', async (c, next) => {
    const ticket = c.req.query('ticket');
    const events = /^\/api\/sessions\/([^/]+)\/(?:events|terminal)$/.exec(new URL(c.req.url).pathname);
    if (ticket !== undefined && events && c.req.method === 'GET') {
      const result = auth.redeemTicket(ticket, decodeURIComponent(events[1]!));
      if (!result.ok) throw new AseError('UNAUTHORIZED', result.reason);
      return next();
    }
    const result = auth.check({ authorization: c.req.header('authorization'), cookie: c.req.header('cookie') });
    if (!result.ok) {
      c.header('WWW-Authenticate', 'Bearer realm="ase"');
      throw new AseError('UNAUTHORIZED', result.reason);
    }
    // A page cookie rides along on any request the browser makes: state changes also need an Origin.
    if (result.via === 'cookie' && c.req.method !== 'GET' && c.req.method !== 'HEAD' && c.req.header('origin') === undefined) {
      throw new AseError('FORBIDDEN_ORIGIN', 'a cookie-authenticated change needs an Origin header');
    }
    return next();
  });

  app.get('/api/openapi.json', (c) => c.json(openApiDocument()));

  app.post('/api/tickets', async (c) => {
    const body = await readJson(c, TicketBody);
    return c.json(auth.issueTicket(body.sessionId), 201);
  });

  app.get('/api/agents', (c) => c.json({ agents: options.agents }));

  app.get('/api/sessions', async (c) => c.json({ sessions: await host.list() }));

  app.post('/api/sessions', async (c) => {
    const body = await readJson(c, CreateBody);
    const sessionId = randomUUID();
    const hub = hubFor(sessionId);
    try {
      // With a parentId the host spawns it into the parent's tree (a completed parent: 409 TREE_CONFLICT, nothing created).
      const session = await host.create({ ...body, sessionId, onNotice: hub.onNotice, inspect: hub.inspect });
      hub.attach(session);
      // 201 means stored: the id works on every host of a shared store (and after a crash of this one).
      await storedOrStopped(session);
      // The tree's streams hear the new node now, not at the watch's next look.
      if (body.parentId !== undefined) trees.refresh();
      return c.json({ sessionId: session.id }, 201);
    } catch (error) {
      hub.close();
      hubs.delete(sessionId);
      throw error;
    }
  });

  app.get('/api/sessions/:id', async (c) => {
    const id = checkId(c.req.param('id'));
    const live = hubs.get(id)?.session ?? host.get(id);
    if (live) return c.json({ live: true, ...live.snapshot() });
    const stored = await host.stored(id);
    if (!stored) throw new AseError('NOT_FOUND', `no session ${id}`);
    return c.json({ live: false, ...stored });
  });

  // The tree that holds the session, with its focus: the session the person drives now (a stream
  // of the session is told changes as `tree` frames). Sessions of no tree known here: 404.
  app.get('/api/sessions/:id/tree', async (c) => {
    const id = checkId(c.req.param('id'));
    await assertKnown(id);
    const tree = await host.tree?.(id);
    if (!tree) throw new AseError('NOT_FOUND', `no session tree known here holds ${id}`);
    return c.json({ sessionId: id, ...tree });
  });

  // A remote client moves the focus: enter a sub-agent of the focused session, or exit the focused
  // one back to its parent. Every stream of the tree's sessions hears the new tree (`tree` frames).
  const moveFocus = (move: 'enter' | 'exit') => async (c: Context) => {
    const id = checkId(c.req.param('id'));
    await readJson(c, z.strictObject({}));
    await assertKnown(id);
    const found = host.moveTreeFocus ? await host.tree?.(id) : undefined;
    if (!found) throw new AseError('NOT_FOUND', `no session tree known here holds ${id}`);
    // The rules first, on the tree as read (the move checks them again on the file): a refused
    // move opens no session. Then the sessions the move touches are opened here, with this
    // server's hooks, so their streams carry their live notices.
    if (move === 'enter') treeRules.enter(found, id, undefined);
    else treeRules.exit(found, undefined, id);
    for (const touched of move === 'enter' ? [found.focus, id] : [found.nodes[id]?.parentId]) {
      if (touched !== undefined) await liveSession(touched).catch(() => undefined); // the move reports what fails
    }
    const moved = await host.moveTreeFocus!(id, move);
    if (!moved) throw new AseError('NOT_FOUND', `no session tree known here holds ${id}`);
    trees.refresh();
    return c.json({ sessionId: id, ...moved });
  };
  app.post('/api/sessions/:id/tree/enter', moveFocus('enter'));
  app.post('/api/sessions/:id/tree/exit', moveFocus('exit'));

  // A sub-agent the person is done with (`ase attach` leaving it: exit first, then this): it is
  // completed in its tree with `result` or its last answer (the journal's last assistant message),
  // which reaches the parent once, typed into the parent's terminal UI when the parent is local
  // (typed-result.ts), else sent; then its agent is stopped. A completed one again: the tree as it is.
  app.post('/api/sessions/:id/tree/complete', async (c) => {
    const id = checkId(c.req.param('id'));
    const body = await readJson(c, z.strictObject({ result: z.string().max(1_000_000).optional() }));
    await assertKnown(id);
    const found = host.completeTreeChild ? await host.tree?.(id) : undefined;
    if (!found) throw new AseError('NOT_FOUND', `no session tree known here holds ${id}`);
    treeRules.complete(found, id, ''); // refused (root, focused, suspended): nothing changes
    const parentId = found.nodes[id]!.parentId!;
    if (found.nodes[id]!.state !== 'completed') {
      // The parent is opened here, with this server's hooks, so the delivery is on its stream.
      await liveSession(parentId).catch(() => undefined);
      const result = body.result ?? (await lastAnswer(id));
      let done;
      try {
        done = await host.completeTreeChild!(id, result, typedResults);
      } finally {
        // Also when the answer could not be delivered: it stays in the tree, delivered at the tree's next change.
        trees.refresh();
        if (hubs.get(id)?.session ?? host.get(id)) await host.stop(id).catch(() => undefined);
      }
      if (!done) throw new AseError('NOT_FOUND', `no session tree known here holds ${id}`);
      return c.json({ sessionId: id, ...done });
    }
    return c.json({ sessionId: id, ...found });
  });

  // Takes over a session whose owner, on another host, stopped renewing its lease (it is listed
  // `orphaned`): only here and only when asked, since the agent resumes on this machine's disk.
  // Refused while its owner lives (409 SESSION_OWNED), and where the agent could not really resume
  // here (409 RESUME_FORKED: it would start over): its work directory is missing, or its engine
  // (`EngineFactory.checkResume`) finds no session files of the agent's here. A refusal changes
  // nothing: the check only reads, before any lease is taken. The old owner, should it come
  // back, finds its fence stale: LEASE_LOST, and it writes nothing more.
  app.post('/api/sessions/:id/adopt', async (c) => {
    const id = checkId(c.req.param('id'));
    await readJson(c, z.strictObject({}));
    await assertKnown(id);
    if (hubs.get(id)?.session ?? host.get(id)) return c.json({ sessionId: id, adopted: false, running: true });
    const stored = await host.stored(id);
    if (!stored) throw new AseError('NOT_FOUND', `no session ${id}`);
    const check = host.checkResume ? await host.checkResume(id) : await workDirCheck(stored.workDir);
    if (!check) throw new AseError('NOT_FOUND', `no session ${id}`);
    if (!check.ok) {
      throw new AseError('RESUME_FORKED', `session ${id} cannot resume on this host: ${check.reason}`, { details: { sessionId: id, workDir: stored.workDir, reason: check.reason } });
    }
    const session = await liveSession(id, true);
    return c.json({ sessionId: id, adopted: true, running: true, phase: session.snapshot().phase });
  });

  app.post('/api/sessions/:id/stop', async (c) => {
    const id = checkId(c.req.param('id'));
    await assertKnown(id);
    return c.json(await apply(id, { kind: 'stop' }));
  });

  /** What a client asks of a session, done here: the routes below, and the commands other hosts route to this one. */
  const applyHere = async (id: string, command: SessionCommand): Promise<Record<string, unknown>> => {
    switch (command.kind) {
      case 'send': {
        const hub = hubFor(id);
        let accepted = hub.messages.get(command.localId);
        if (!accepted) {
          accepted = (async () => {
            const session = await liveSession(id);
            try {
              await session.send(command.text, { localId: command.localId });
              return { duplicate: false };
            } catch (error) {
              // Already accepted before (this server restarted, or another client sent it): the same answer.
              if (!isAseError(error, 'DUPLICATE_SEND')) throw error;
              return { duplicate: true };
            }
          })();
          hub.messages.set(command.localId, accepted);
          accepted.catch(() => hub.messages.delete(command.localId));
        }
        const { duplicate } = await accepted;
        const seq = await messageSeq(hub, command.localId, options.messageSeqWaitMs ?? 1000, duplicate);
        return { localId: command.localId, seq, status: seq === null ? 'queued' : 'delivered' };
      }
      case 'decide': {
        const session = await liveSession(id);
        try {
          await session.decide(command.requestId, command.decision, {
            ...(command.updatedInput !== undefined && { updatedInput: command.updatedInput }),
            ...(command.message !== undefined && { message: command.message }),
          });
        } catch (error) {
          // The error also says what the first answer was, so a client that lost the race shows it.
          if (isAseError(error, 'PERMISSION_ALREADY_DECIDED')) {
            throw new AseError(error.code, error.message, { details: { outcome: session.snapshot().completed[command.requestId] ?? null } });
          }
          throw error;
        }
        return { requestId: command.requestId, outcome: session.snapshot().completed[command.requestId] ?? null };
      }
      case 'abort':
        await (await liveSession(id)).abort();
        return { aborted: true };
      case 'mode':
        await (await liveSession(id)).switchMode(command.to);
        return { mode: command.to };
      case 'peek': {
        const live = hubs.get(id)?.session ?? host.get(id);
        if (!live) throw new AseError('NOT_FOUND', `session ${id} is not running on this host`);
        return { snapshot: live.snapshot() };
      }
      case 'stop': {
        if (hubs.get(id)?.session ?? host.get(id)) return { stopped: true, snapshot: await host.stop(id) };
        return inTurn(id, () => (host.get(id) ? host.stop(id).then((snapshot) => ({ stopped: true, snapshot })) : stopNotRunningHere(id)));
      }
    }
  };

  /**
   * A stop of a session this server does not run, and no other live host runs either (a router
   * found none): what its store says decides. Stored in a phase with an agent, its owner died
   * with it running (a SIGKILLed `ase run` or server, its lease maybe still valid): it is taken
   * over here with the next fence, as any command takes it (restore included), and stopped, so the
   * answer is the real stop's and no restarted server reopens it. Stored without one (`stopped`,
   * `hibernated`, `failed`): nothing is started; the lease is taken for a moment to prove no live
   * process holds it (`settleStored`), and the answer says the phase (`live: false`). A live owner
   * is 409 `SESSION_OWNED` either way, as for every other command: never `stopped` for a session
   * that still runs. Known only by its transcript: nothing to stop. Runs in the id's turn (`inTurn`).
   */
  const stopNotRunningHere = async (id: string): Promise<Record<string, unknown>> => {
    const stored = await host.stored(id);
    if (!stored) return { stopped: true, live: false };
    if (STOP_BY_TAKING_OVER.has(stored.phase)) {
      await openHere(id, false);
      return { stopped: true, snapshot: await host.stop(id) };
    }
    const settled = host.settleStored ? await host.settleStored(id) : stored;
    return { stopped: true, live: false, phase: settled?.phase ?? stored.phase };
  };

  /**
   * Does `command` here, or, when another live host owns the session and a router is given
   * (`--store postgres://`), there: the owner applies it with its own `applyHere` and answers.
   */
  const apply = async (id: string, command: SessionCommand): Promise<Record<string, unknown>> => {
    const router = options.router;
    // A session that does not run here goes to a live owner first, if another host has one: opening
    // it here would only be refused, after loading it and looking for its work directory and its
    // agent, which a host on another machine may not have at all.
    if (router && !(hubs.get(id)?.session ?? host.get(id))) {
      const outcome = await router.route(id, command);
      if (outcome) return unwrap(outcome);
    }
    // Here, else routed to the owner; again when the owner died before it took the command (the
    // router withdrew it): then this host takes the session over, or routes it to whoever did.
    for (let attempt = 1; ; attempt++) {
      try {
        return await applyHere(id, command);
      } catch (error) {
        if (!router || !isAseError(error, 'SESSION_OWNED') || attempt === 3) throw error;
        const outcome = await router.route(id, command);
        if (outcome) return unwrap(outcome);
      }
    }
  };
  options.router?.serve(async (id, command) => {
    try {
      await assertKnown(id);
      return { ok: true, value: await applyHere(id, command) };
    } catch (error) {
      const failure = isAseError(error) ? error : new AseError('INTERNAL', 'the owning host failed to apply the command');
      return { ok: false, error: { code: failure.code, message: failure.message, ...(failure.details !== undefined && { details: failure.details }) } };
    }
  });

  app.post('/api/sessions/:id/messages', async (c) => {
    const id = checkId(c.req.param('id'));
    const body = await readJson(c, MessageBody);
    await assertKnown(id);
    return c.json(await apply(id, { kind: 'send', text: body.text, localId: body.localId }));
  });

  /**
   * The seq of the message's `user_message` entry, waiting up to `waitMs` for it to be journaled.
   * The hub heard it when this server accepted the message (it watches the journal from before the
   * send), so the journal is not read. Only a message accepted before this hub existed (a retry after
   * a restart) is looked for in the journal, newest pages first.
   */
  const messageSeq = async (hub: SessionHub, localId: string, waitMs: number, acceptedBefore: boolean): Promise<number | null> => {
    let wake: (() => void) | undefined;
    const stop = hub.watchDurable(() => {
      if (hub.messageSeq(localId) !== undefined) wake?.();
    });
    try {
      if (hub.messageSeq(localId) !== undefined) return hub.messageSeq(localId)!;
      if (acceptedBefore || !hub.hearsJournal) {
        const found = await findMessageInJournal(hub.id, localId);
        if (found !== undefined) return found;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, waitMs).unref?.();
      });
      return hub.messageSeq(localId) ?? null;
    } finally {
      stop();
    }
  };

  /**
   * The newest of the session's journal entries that `pick` makes something of, read back from
   * the end a page at a time (most searches end in the last page); undefined when none does.
   */
  const findLastInJournal = async <T>(id: string, pick: (entry: JournaledEntry) => T | undefined): Promise<T | undefined> => {
    for (let before = Number.MAX_SAFE_INTEGER; ; ) {
      const page = (await journal.read(id, { beforeSeq: before, limit: JOURNAL_PAGE })) as JournaledEntry[];
      for (let i = page.length - 1; i >= 0; i--) {
        const found = pick(page[i]!);
        if (found !== undefined) return found;
      }
      if (page.length < JOURNAL_PAGE) return undefined;
      before = page[0]!.seq;
    }
  };

  /** The session's last answer: the text of its journal's last top-level assistant message ('' when none). */
  const lastAnswer = async (id: string): Promise<string> =>
    (await findLastInJournal(id, (entry) => {
      if (entry.type !== 'message' || typeof entry.payload !== 'object' || entry.payload === null) return undefined;
      return answerText(entry.payload as MessageWithText) || undefined;
    })) ?? '';

  const findMessageInJournal = (id: string, localId: string): Promise<number | undefined> =>
    findLastInJournal(id, (entry) => (entry.type === 'user_message' && (entry.payload as { localId?: unknown } | null)?.localId === localId ? entry.seq : undefined));

  app.get('/api/sessions/:id/transcript', async (c) => {
    const id = checkId(c.req.param('id'));
    await assertKnown(id);
    const afterSeq = cursorParam(c.req.query('after_seq'), 'after_seq');
    const beforeSeq = cursorParam(c.req.query('before_seq'), 'before_seq');
    const limit = cursorParam(c.req.query('limit'), 'limit') ?? 100;
    if (limit < 1 || limit > 500) throw new AseError('INVALID_INPUT', 'limit: 1 to 500');
    if (afterSeq !== undefined && beforeSeq !== undefined) throw new AseError('INVALID_INPUT', 'after_seq and before_seq exclude each other');
    const range = { ...(afterSeq !== undefined && { afterSeq }), ...(beforeSeq !== undefined && { beforeSeq }), limit: limit + 1 };
    const rows = await journal.read(id, range);
    const hasMore = rows.length > limit;
    // Backward paging drops the oldest extra row; forward paging the newest.
    const entries = hasMore ? (beforeSeq !== undefined && afterSeq === undefined ? rows.slice(1) : rows.slice(0, limit)) : rows;
    return c.json({ entries, hasMore });
  });

  app.get('/api/sessions/:id/events', async (c) => {
    const id = checkId(c.req.param('id'));
    const header = c.req.header('last-event-id');
    const cursor = cursorParam(header !== undefined && header !== '' ? header : c.req.query('after_seq'), 'Last-Event-ID / after_seq') ?? 0;
    await assertKnown(id);
    const hub = hubFor(id);
    if (!hub.session) {
      const running = host.get(id);
      if (running) hub.attach(running);
    }
    const stream: EventStream = new EventStream({
      sessionId: id,
      journal,
      cursor,
      inspect: c.req.query('inspect') === '1',
      maxQueuedBytes: options.maxQueuedBytes ?? 4 * 1024 * 1024,
      writeTimeoutMs: options.writeTimeoutMs ?? 30_000,
      watchDurable: (listener) => hub.watchDurable(listener),
      // @hono/node-server hands the Node request over as `env.incoming`: a cut-off client's socket is destroyed.
      reset: () => (c.env as { incoming?: { socket?: { destroy(): void } } } | undefined)?.incoming?.socket?.destroy(),
      onClose: (s) => {
        hub.removeStream(s);
        if (hub.streams.size === 0) unfollowRemote(id);
        clients.delete(s);
        trees.idle();
      },
    });
    clients.add(stream);
    hub.addStream(stream);
    hub.greet(stream);
    followRemote(hub, stream);
    trees.greet(hub, stream);
    void stream.start();
    c.req.raw.signal.addEventListener('abort', () => stream.close(), { once: true });
    return new Response(stream.response, {
      headers: {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
        Connection: 'keep-alive',
      },
    });
  });

  // The session's terminal (local mode's terminal UI) over a WebSocket: terminal-room.ts, and
  // docs/server.md "The terminal". Refused before the upgrade: a foreign Origin (403, a page of
  // another site riding on the cookie), a bad role (400), no upgrade (426), an unknown session (404).
  app.get('/api/sessions/:id/terminal', async (c, next) => {
    const id = checkId(c.req.param('id'));
    const origin = c.req.header('origin');
    if (origin !== undefined && !ownOrigins(c).has(origin)) throw new AseError('FORBIDDEN_ORIGIN', `Origin ${origin} may not open this terminal`);
    const role = c.req.query('role') ?? 'viewer';
    if (role !== 'writer' && role !== 'viewer') throw new AseError('INVALID_INPUT', `role: writer or viewer, not ${JSON.stringify(role.slice(0, 40))}`);
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') throw new AseError('UPGRADE_REQUIRED', 'the terminal is a WebSocket: send Upgrade: websocket');
    await assertKnown(id);
    const room = roomFor(await liveSession(id));
    const upgrade = upgradeWebSocket(() => ({
      onOpen: (_event, ws) => room.join(ws.raw as unknown as WebSocket, role as TerminalRole),
      onMessage: (event, ws) => {
        const socket = ws.raw as unknown as WebSocket;
        if (typeof event.data === 'string') room.control(socket, event.data);
        else if (event.data instanceof ArrayBuffer) room.input(socket, new Uint8Array(event.data));
      },
      onClose: (_event, ws) => room.leave(ws.raw as unknown as WebSocket),
    }));
    const response = await upgrade(c, next);
    // Without the server's WebSocket support (e.g. `app.request()` in a test) there is no upgrade.
    if (!response) throw new AseError('INTERNAL', 'this server cannot upgrade to a WebSocket');
    return response;
  });

  app.post('/api/sessions/:id/permissions/:requestId', async (c) => {
    const id = checkId(c.req.param('id'));
    const requestId = c.req.param('requestId');
    if (requestId.length === 0 || requestId.length > 256) throw new AseError('INVALID_INPUT', 'requestId: 1-256 characters');
    const body = await readJson(c, DecisionBody);
    await assertKnown(id);
    try {
      return c.json(await apply(id, { kind: 'decide', requestId, ...body }));
    } catch (error) {
      if (isAseError(error, 'PERMISSION_ALREADY_DECIDED')) {
        // The body also says what the first answer was, so a client that lost the race shows it.
        return c.json(errorBody(error.code, error.message, { outcome: (error.details as { outcome?: unknown } | undefined)?.outcome ?? null }), 409);
      }
      throw error;
    }
  });

  app.post('/api/sessions/:id/abort', async (c) => {
    const id = checkId(c.req.param('id'));
    await readJson(c, z.strictObject({}));
    await assertKnown(id);
    return c.json(await apply(id, { kind: 'abort' }));
  });

  app.post('/api/sessions/:id/mode', async (c) => {
    const id = checkId(c.req.param('id'));
    const body = await readJson(c, ModeBody);
    await assertKnown(id);
    return c.json(await apply(id, { kind: 'mode', to: body.to }));
  });

  app.get('/api/sessions/:id/inspect', async (c) => {
    const id = checkId(c.req.param('id'));
    await assertKnown(id);
    const atSeq = cursorParam(c.req.query('at_seq'), 'at_seq');
    const entries = await journal.read(id, atSeq !== undefined ? { beforeSeq: atSeq + 1 } : undefined);
    return c.json({ chart: chartAt(entries), lastSeq: entries.at(-1)?.seq ?? 0, events: hubs.get(id)?.inspections() ?? [] });
  });

  app.get('/api/diagram.svg', async (c) => {
    c.header('Content-Type', 'image/svg+xml');
    c.header('Cache-Control', 'no-store');
    return c.body(await diagramSvg());
  });
  app.get('/api/diagram.json', (c) => c.json(toGraph(sessionMachine)));

  // Heartbeats: one timer for every stream.
  const clients = new Set<EventStream>();
  const beat = setInterval(() => {
    const now = Date.now();
    for (const stream of clients) stream.ephemeral('heartbeat', { at: now });
  }, heartbeatMs);
  beat.unref?.();

  return {
    app,
    hubs,
    openSession: (id) => liveSession(checkId(id)),
    close() {
      clearInterval(beat);
      trees.close();
      for (const room of [...rooms.values()]) room.close();
      for (const id of [...remoteFeeds.keys()]) unfollowRemote(id);
      for (const hub of hubs.values()) hub.close();
      hubs.clear();
    },
  };
}

function cursorParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new AseError('INVALID_INPUT', `${name}: a non-negative integer, not ${JSON.stringify(value.slice(0, 40))}`);
  return Number(value);
}

function loginPage(message: string): string {
  const safe = message.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>ase serve</title><p style="font:16px system-ui;margin:2em">${safe}</p>`;
}

/** The owner's answer as the route's own: its value, or its error rethrown with the same code. */
function unwrap(outcome: CommandOutcome): Record<string, unknown> {
  if (outcome.ok) return outcome.value;
  throw new AseError(outcome.error.code as ErrorCode, outcome.error.message, { ...(outcome.error.details !== undefined && { details: outcome.error.details as Record<string, unknown> }) });
}

/** The adopt check of a host that has no `checkResume`: the work directory only. */
async function workDirCheck(workDir: string): Promise<{ ok: true } | { ok: false; reason: string }> {
  const dir = await stat(workDir).catch(() => undefined);
  return dir?.isDirectory() ? { ok: true } : { ok: false, reason: `its work directory ${workDir} does not exist here` };
}
