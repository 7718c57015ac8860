/** The OpenAPI 3.1 description of `ase serve`'s HTTP API, served at `/api/openapi.json` (docs/server.md says the same in prose). */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const SESSION_ID_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$';
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: SESSION_ID_PATTERN } };
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [String(code), { description: ERROR_TEXT[code] ?? 'error', ...json(ref('Error')) }]));
const ERROR_TEXT: Record<number, string> = {
  400: 'bad JSON, a body that does not fit the schema, or a bad id',
  401: 'no token, a wrong token, or a spent/expired ticket',
  403: 'a state change from a foreign Origin',
  404: 'no such session (or permission request, or session tree)',
  409: 'the request conflicts with the session (already decided, nothing to abort, stopped, owned by another host) or its tree (TREE_CONFLICT: the tree\'s rules forbid the move now)',
  413: 'the body is too large',
  421: 'FORBIDDEN_HOST: the Host header names no loopback name, the bound name or an --allow-host one (refused before authentication)',
  500: 'INTERNAL: an unexpected failure; error.requestId matches the line the server logged',
  504: "TIMEOUT: the host that owns the session (--store postgres://) did not answer in time: a stalled host, or one that died on another machine and whose lease has not expired yet; error.details says who and whether the command was withdrawn (nothing done) or may still be applied",
};

/**
 * What every operation can answer whatever it is (the Host check and the path check run before
 * any route; an unexpected failure is possible anywhere), and an `operationId` for each one that
 * has none, from its method and path: added here once rather than repeated in every operation.
 */
function completeOperations(paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>): void {
  for (const [route, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      operation.operationId ??= method + route.split(/[/.]/).filter((part) => part !== '' && part !== 'api').map((part) => {
        const name = part.replace(/^\{(.*)\}$/, 'by-$1');
        return name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
      }).join('');
      for (const code of [400, 421, 500]) {
        operation.responses[String(code)] ??= { description: code === 400 ? 'a malformed path (a bad percent-escape)' : ERROR_TEXT[code], ...json(ref('Error')) };
      }
    }
  }
}

export function openApiDocument(): Record<string, unknown> {
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'agent-session-engine: ase serve',
      version: '1',
      description: 'Remote control for agent sessions. Every request needs `Authorization: Bearer <token>` (or the page cookie); an EventSource may use a single-use `?ticket=` from POST /api/tickets.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: '`ase serve` with its defaults (--host 127.0.0.1 --port 8787)' }],
    security: [{ bearer: [] }],
    paths: {
      '/': {
        get: {
          summary: 'The web page. `?token=` (the URL `ase serve` prints) trades the token for an HttpOnly page cookie and redirects to `/`',
          security: [{ bearer: [] }, { pageCookie: [] }, {}],
          parameters: [{ name: 'token', in: 'query', schema: { type: 'string' }, description: 'the server token, once' }],
          responses: {
            200: { description: 'the page', content: { 'text/html': { schema: { type: 'string' } } } },
            303: { description: 'the token was right: the page cookie is set, go to /', headers: { Location: { schema: { type: 'string' } }, 'Set-Cookie': { schema: { type: 'string' } } } },
            401: { description: 'no token or cookie, or a wrong token: a short page saying so', content: { 'text/html': { schema: { type: 'string' } } } },
          },
        },
      },
      '/api/sessions': {
        get: { summary: 'List sessions (live here and stored)', responses: { 200: { description: 'sessions', ...json({ type: 'object', required: ['sessions'], properties: { sessions: { type: 'array', items: ref('SessionInfo') } } }) }, ...errors(401) } },
        post: {
          summary: 'Start a session. With parentId: a sub-agent session, spawned into the parent\'s session tree (one is started when the parent is a root session of no tree), so it can be entered (tree/enter)',
          requestBody: { required: true, ...json(ref('CreateSession')) },
          responses: {
            201: { description: 'created', ...json({ type: 'object', required: ['sessionId'], properties: { sessionId: { type: 'string' } } }) },
            409: { description: 'TREE_CONFLICT: the parent is completed, or is a sub-agent session no tree known here holds; nothing is created', ...json(ref('Error')) },
            ...errors(400, 401, 403, 413),
          },
        },
      },
      '/api/sessions/{id}': {
        get: { summary: 'A session snapshot (live) or its stored state', parameters: [idParam], responses: { 200: { description: 'snapshot', ...json({ type: 'object', required: ['live'], properties: { live: { type: 'boolean', description: 'true: the live snapshot; false: the stored state' } } }) }, ...errors(400, 401, 404) } },
      },
      '/api/sessions/{id}/tree': {
        get: {
          summary: 'The session tree (openSessionTree) that holds this session, with its focus. Found under the data dir (trees/<rootId>.json) by the stored parents. The session\'s event stream is told every change (event: tree)',
          parameters: [idParam],
          responses: { 200: { description: 'the tree', ...json(ref('SessionTree')) }, ...errors(400, 401, 404) },
        },
      },
      '/api/sessions/{id}/tree/enter': {
        post: {
          summary: 'Make this session the focus of its tree: it must be a sub-agent of the focused session, not completed; the focused one is suspended (not stopped, not forked). Empty body',
          parameters: [idParam],
          requestBody: { ...json({ type: 'object', additionalProperties: false }) },
          responses: { 200: { description: 'the tree after the move', ...json(ref('SessionTree')) }, 404: { description: 'no such session, or no session tree known here holds it', ...json(ref('Error')) }, ...errors(400, 401, 403, 409) },
        },
      },
      '/api/sessions/{id}/tree/complete': {
        post: {
          summary: 'Complete this sub-agent session (not the focus: exit first; not the root): its result (the body\'s, else its last answer) reaches its parent once, typed into the parent\'s terminal UI when the parent is in local mode, else sent as a queued message; then the sub-agent is stopped. Completed already: the tree unchanged',
          parameters: [idParam],
          requestBody: { ...json({ type: 'object', additionalProperties: false, properties: { result: { type: 'string', maxLength: 1000000 } } }) },
          responses: { 200: { description: 'the tree after it', ...json(ref('SessionTree')) }, 404: { description: 'no such session, or no session tree known here holds it', ...json(ref('Error')) }, ...errors(400, 401, 403, 409) },
        },
      },
      '/api/sessions/{id}/tree/exit': {
        post: {
          summary: 'Return the focus from this session (it must be the focus, not the root) to its parent, which resumes by the same agent session (a forked one is RESUME_FORKED, 409). Empty body',
          parameters: [idParam],
          requestBody: { ...json({ type: 'object', additionalProperties: false }) },
          responses: { 200: { description: 'the tree after the move', ...json(ref('SessionTree')) }, 404: { description: 'no such session, or no session tree known here holds it', ...json(ref('Error')) }, ...errors(400, 401, 403, 409) },
        },
      },
      '/api/sessions/{id}/adopt': {
        post: {
          summary: 'Take over a session whose owner on another host stopped renewing its lease (listed `orphaned`; --store postgres://). Only where the agent could resume here: its work directory and, where its engine can tell (claude, codex), the session files of the agent (transcript, rollout) exist on this host; else 409 RESUME_FORKED naming what is missing, and nothing changed. While its owner lives, 409 SESSION_OWNED. The old owner, back, writes nothing more (LEASE_LOST). Empty body',
          parameters: [idParam],
          requestBody: { ...json({ type: 'object', additionalProperties: false }) },
          responses: { 200: { description: 'adopted (or already running here)', ...json({ type: 'object', properties: { sessionId: { type: 'string' }, adopted: { type: 'boolean' }, running: { type: 'boolean' }, phase: { type: 'string' } }, required: ['sessionId', 'adopted', 'running'] }) }, ...errors(400, 401, 403, 404, 409) },
        },
      },
      '/api/sessions/{id}/stop': { post: { summary: 'Stop the session', parameters: [idParam], responses: { 200: { description: 'stopped', ...json({ type: 'object', required: ['stopped'], properties: { stopped: { const: true }, live: { const: false, description: 'no process runs it: nothing was started to stop it' }, phase: { type: 'string', description: 'with live: false, its stored phase (stopped, hibernated, failed)' }, snapshot: { description: 'the state it stopped in' } } }) }, ...errors(400, 401, 403, 404, 409, 504) } } },
      '/api/sessions/{id}/messages': {
        post: {
          summary: 'Send a user message; idempotent on localId',
          parameters: [idParam],
          requestBody: { required: true, ...json(ref('Message')) },
          responses: { 200: { description: 'accepted (stored); seq is its user_message entry once journaled, null while queued', ...json(ref('MessageReceipt')) }, ...errors(400, 401, 403, 404, 409, 413, 504) },
        },
      },
      '/api/sessions/{id}/terminal': {
        get: {
          summary:
            "The session's terminal (local mode's terminal UI in a PTY in the server) over a WebSocket. Auth as the event stream (bearer, page cookie or ?ticket=); an Origin other than the server's own is 403 before the upgrade. One writer (a second one waits up to 1 s for the place, then is closed with 4409), any number of read-only viewers. Server -> client: a JSON text frame {type:'status', sessionId, mode, role, writerAttached, cols, rows, running} first and on every change; binary frames of terminal output, the first one (when a terminal UI runs) repainting the current screen. Client -> server (writer only): binary keystrokes, text {type:'resize', cols, rows} and {type:'mode', to:'local'|'remote'}. A client whose unsent output passes the byte bound is closed with 1008; the session ending closes with 1000",
          parameters: [
            idParam,
            { name: 'role', in: 'query', schema: { enum: ['writer', 'viewer'], default: 'viewer' } },
            { name: 'ticket', in: 'query', schema: { type: 'string' }, description: 'single-use, from POST /api/tickets' },
          ],
          responses: {
            101: { description: 'switched to the WebSocket protocol' },
            426: { description: 'not a WebSocket upgrade request', ...json(ref('Error')) },
            ...errors(400, 401, 403, 404),
          },
        },
      },
      '/api/sessions/{id}/events': {
        get: {
          summary: 'Server-Sent Events: durable entries (event: entry, id: seq) replayed from Last-Event-ID or after_seq, then live; ephemeral frames without id (agent, status, thinking, presence, permission_prompt, permission_resolved, snapshot, tree, inspect, error, done, live, heartbeat, gap); tree: the SessionTree body at connect and on every change of the tree that holds the session (null once none does)',
          parameters: [
            idParam,
            { name: 'Last-Event-ID', in: 'header', schema: { type: 'string', pattern: '^\\d+$' } },
            { name: 'after_seq', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'inspect', in: 'query', schema: { enum: ['1'] }, description: 'also send the inspector frames (event: inspect)' },
            { name: 'ticket', in: 'query', schema: { type: 'string' }, description: 'single-use, from POST /api/tickets (for EventSource)' },
          ],
          responses: { 200: { description: 'the stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errors(400, 401, 404) },
        },
      },
      '/api/sessions/{id}/transcript': {
        get: {
          summary: 'A page of the durable transcript',
          parameters: [
            idParam,
            { name: 'after_seq', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'before_seq', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
          ],
          responses: { 200: { description: 'entries ascending by seq', ...json({ type: 'object', required: ['entries', 'hasMore'], properties: { entries: { type: 'array', items: ref('Entry') }, hasMore: { type: 'boolean' } } }) }, ...errors(400, 401, 404) },
        },
      },
      '/api/sessions/{id}/permissions/{requestId}': {
        post: {
          summary: 'Answer a permission request; the first answer wins',
          parameters: [idParam, { name: 'requestId', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, ...json(ref('Decision')) },
          responses: { 200: { description: 'recorded', ...json({ type: 'object', required: ['requestId', 'outcome'], properties: { requestId: { type: 'string' }, outcome: { type: ['object', 'null'] } } }) }, 409: { description: 'already decided (the body carries the recorded outcome), or owned by another process (SESSION_OWNED)', ...json(ref('Error')) }, ...errors(400, 401, 403, 404, 504) },
        },
      },
      '/api/sessions/{id}/abort': { post: { summary: 'Interrupt the running turn', parameters: [idParam], responses: { 200: { description: 'aborted', ...json({ type: 'object', required: ['aborted'], properties: { aborted: { const: true } } }) }, ...errors(400, 401, 403, 404, 409, 504) } } },
      '/api/sessions/{id}/mode': {
        post: { summary: 'Switch control mode', parameters: [idParam], requestBody: { required: true, ...json({ type: 'object', required: ['to'], properties: { to: { enum: ['local', 'remote'] } } }) }, responses: { 200: { description: 'switched', ...json({ type: 'object', required: ['mode'], properties: { mode: { enum: ['local', 'remote'] } } }) }, ...errors(400, 401, 403, 404, 409, 504) } },
      },
      '/api/sessions/{id}/inspect': {
        get: {
          summary: 'The inspector: the chart implied by the durable log at at_seq (default: the end), and the recent XState inspection events',
          parameters: [idParam, { name: 'at_seq', in: 'query', schema: { type: 'integer', minimum: 0 } }],
          responses: { 200: { description: 'chart and events', ...json({ type: 'object', required: ['chart', 'lastSeq', 'events'], properties: { chart: { type: 'object' }, lastSeq: { type: 'integer', minimum: 0 }, events: { type: 'array' } } }) }, ...errors(400, 401, 404) },
        },
      },
      '/api/tickets': {
        post: { summary: 'A single-use ticket (30 s) for one event stream', requestBody: { ...json({ type: 'object', properties: { sessionId: { type: 'string' } } }) }, responses: { 201: { description: 'ticket', ...json({ type: 'object', required: ['ticket', 'expiresAt'], properties: { ticket: { type: 'string' }, expiresAt: { type: 'integer' } } }) }, ...errors(400, 401, 403, 413) } },
      },
      '/api/agents': { get: { summary: 'Engine names a session may use', responses: { 200: { description: 'names', ...json({ type: 'object', required: ['agents'], properties: { agents: { type: 'array', items: { type: 'string' } } } }) }, ...errors(401) } } },
      '/api/diagram.svg': { get: { summary: 'The SessionActor statechart as SVG (elkjs layout)', responses: { 200: { description: 'svg', content: { 'image/svg+xml': { schema: { type: 'string' } } } }, ...errors(401) } } },
      '/api/diagram.json': { get: { summary: 'The SessionActor statechart as JSON (nested states, edges)', responses: { 200: { description: 'graph', ...json({
              type: 'object',
              required: ['root', 'edges'],
              properties: {
                root: { type: 'object', required: ['id', 'key', 'type', 'children'], description: 'the root state node; compound nodes nest theirs in children', properties: { id: { type: 'string' }, key: { type: 'string' }, type: { type: 'string' }, initial: { type: 'string' }, children: { type: 'array', items: { type: 'object' } } } },
                edges: { type: 'array', items: { type: 'object', required: ['id', 'source', 'target', 'event'], properties: { id: { type: 'string' }, source: { type: 'string' }, target: { type: 'string' }, event: { type: 'string' }, guard: { type: 'string' } } } },
              },
            }) }, ...errors(401) } } },
      '/api/openapi.json': { get: { summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1', ...json({ type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } }) }, ...errors(401) } } },
      '/assets/{name}': {
        get: {
          summary: "The web page's scripts, served by the server itself (markdown-it from node_modules, the page's own); the page cookie or the token. ETag: If-None-Match answers 304",
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'the script', content: { 'text/javascript': { schema: { type: 'string' } } } }, 304: { description: 'not modified' }, ...errors(401, 404) },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, pageCookie: { type: 'apiKey', in: 'cookie', name: 'ase_page' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          additionalProperties: false,
          properties: {
            error: { type: 'object', required: ['code', 'message'], additionalProperties: false, properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', description: "the error's structured facts, per code (docs/errors.md): e.g. SESSION_OWNED's owner, a routed TIMEOUT's owner, expiresAt and withdrawn" }, requestId: { type: 'string', description: 'on a 500: the id the server logged the failure under' } } },
            outcome: { type: ['object', 'null'], description: 'PERMISSION_ALREADY_DECIDED: the recorded outcome (null when no longer kept)' },
          },
        },
        SessionInfo: { type: 'object', required: ['sessionId', 'agent', 'workDir', 'phase', 'status'], properties: { sessionId: { type: 'string' }, agent: { type: 'string' }, workDir: { type: 'string' }, phase: { type: 'string' }, status: { type: 'string' }, lastActivityAt: { type: 'integer' }, costUsd: { type: 'number' }, parentId: { type: 'string', description: 'the session that started this one (a sub-agent session); absent: none' }, owner: { type: 'object', description: "who holds the session's lease when another host does (a store shared by hosts, docs/multi-host.md): status elsewhere, or orphaned once the lease expired", properties: { host: { type: 'string' }, pid: { type: 'integer' }, label: { type: 'string' }, expiresAt: { type: 'integer' }, live: { type: 'boolean' } } } } },
        SessionTree: {
          type: 'object',
          required: ['sessionId', 'rootId', 'focus', 'nodes'],
          properties: {
            sessionId: { type: 'string', description: 'the session asked about' },
            rootId: { type: 'string' },
            focus: { type: 'string', description: 'the session the person drives now (local terminal or remote clients)' },
            nodes: {
              type: 'object',
              additionalProperties: {
                type: 'object',
                required: ['sessionId', 'state'],
                properties: { sessionId: { type: 'string' }, parentId: { type: 'string' }, parentCallId: { type: 'string' }, state: { enum: ['active', 'suspended', 'completed'] }, resumeTokenAtSuspend: { type: 'string' }, result: { type: 'string' }, delivered: { type: 'boolean' } },
              },
            },
          },
        },
        CreateSession: {
          type: 'object',
          required: ['agent', 'workDir'],
          additionalProperties: false,
          properties: {
            agent: { type: 'string' },
            workDir: { type: 'string' },
            mode: { enum: ['local', 'remote'] },
            engineOptions: { type: 'object' },
            parentId: { type: 'string', pattern: SESSION_ID_PATTERN, description: "the session that starts this one (a sub-agent session), stored with it. A parent in a session tree under the data dir: the new session is a node of that tree (active, not focused); a root session of no tree: a tree rooted at it is started (trees/<parentId>.json, focus at the parent); a completed parent, or a sub-agent session no tree holds: 409 TREE_CONFLICT; no session known here: created with the parentId only (an orphan). Never starts with ." },
            parentCallId: { type: 'string', minLength: 1, maxLength: 256, description: "the parent's tool call that starts it; needs parentId" },
          },
        },
        Message: { type: 'object', required: ['text', 'localId'], additionalProperties: false, properties: { text: { type: 'string', minLength: 1 }, localId: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } } },
        MessageReceipt: { type: 'object', required: ['localId', 'seq', 'status'], properties: { localId: { type: 'string' }, seq: { type: ['integer', 'null'] }, status: { enum: ['delivered', 'queued'] } } },
        Decision: { type: 'object', required: ['decision'], additionalProperties: false, properties: { decision: { enum: ['allow', 'deny'] }, updatedInput: {}, message: { type: 'string' } } },
        Entry: { type: 'object', required: ['seq', 'eventId', 'type'], properties: { seq: { type: 'integer' }, ts: { type: 'integer' }, sessionId: { type: 'string' }, agent: { type: 'string' }, gen: { type: 'integer' }, eventId: { type: 'string' }, type: { type: 'string' }, payload: {} } },
      },
    },
  };
  completeOperations(document.paths as never);
  return document;
}
