/**
 * `ase serve` over real HTTP on loopback, sessions on the fake engine: auth (token, tickets, page
 * cookie, Origin), the 400/404/409 answers, idempotent messages, first-answer-wins permissions,
 * transcript paging, and the event stream (ids are journal seqs, replay from Last-Event-ID and
 * after_seq, ephemeral frames without ids, heartbeats, gaps, presence with a grace).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../src/index.js';
import { startServer } from '../../src/server.js';
import { isAseError } from '../../src/errors.js';
import { rejection } from '../support/async.js';
import { entriesOf, openSse, type SseConnection } from '../support/sse-client.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ASK_TURN = { turns: [[{ text: 'let me look' }, { ask: { toolName: 'Bash', input: { command: 'ls' } } }, { text: 'done' }]] };

let server: TestServer | undefined;
const streams: SseConnection[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.cut();
  await server?.stop();
  server = undefined;
});
const sse = async (route: string, headers: Record<string, string> = server!.headers): Promise<SseConnection> => {
  const connection = await openSse(`${server!.url}${route}`, headers);
  streams.push(connection);
  return connection;
};
const until = async (check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};
const transcriptTypes = async (id: string): Promise<string[]> => (await server!.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries.map((e: { type: string }) => e.type);

describe('auth', () => {
  it('refuses no token, a wrong token and a malformed header; accepts the right one', async () => {
    server = await startTestServer();
    const none = await fetch(`${server.url}/api/sessions`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await server.api('GET', '/api/sessions', undefined, { authorization: `Bearer ${server.token}x` })).status).toBe(401);
    expect((await server.api('GET', '/api/sessions', undefined, { authorization: server.token })).status).toBe(401);
    expect((await server.api('GET', '/api/openapi.json', undefined, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await server.api('GET', '/api/sessions')).status).toBe(200);
    // The page too: no token, no page.
    expect((await fetch(`${server.url}/`)).status).toBe(401);
  });

  it('a ticket opens one event stream once; a reused, foreign or unknown ticket is refused', async () => {
    server = await startTestServer();
    const id = await server.newSession();
    const other = await server.newSession();
    const { body: t } = await server.api('POST', '/api/tickets', { sessionId: id });
    expect(t.ticket).toEqual(expect.any(String));
    const first = await sse(`/api/sessions/${id}/events?ticket=${t.ticket}`, {});
    expect(first.status).toBe(200);
    expect((await sse(`/api/sessions/${id}/events?ticket=${t.ticket}`, {})).status).toBe(401);
    const { body: t2 } = await server.api('POST', '/api/tickets', { sessionId: id });
    expect((await sse(`/api/sessions/${other}/events?ticket=${t2.ticket}`, {})).status).toBe(401);
    expect((await sse(`/api/sessions/${id}/events?ticket=made-up`, {})).status).toBe(401);
    // A ticket is for event streams only.
    const { body: t3 } = await server.api('POST', '/api/tickets', {});
    expect((await fetch(`${server.url}/api/sessions?ticket=${t3.ticket}`)).status).toBe(401);
  });

  it('refuses a state change from a foreign Origin, even with the token; its own Origin passes', async () => {
    server = await startTestServer();
    const foreign = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp }, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('FORBIDDEN_ORIGIN');
    expect((await server.api('GET', '/api/sessions')).body.sessions).toEqual([]);
    const own = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp }, { origin: server.url });
    expect(own.status).toBe(201);
    // No CORS unless configured.
    const preflight = await fetch(`${server.url}/api/sessions`, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('the printed URL trades the token for a page cookie; the cookie alone cannot change state without an Origin', async () => {
    server = await startTestServer();
    expect((await fetch(`${server.url}/?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    const login = await fetch(server.pageUrl, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const jar = { cookie: cookie.split(';')[0]! };
    const page = await fetch(`${server.url}/`, { headers: jar });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'nonce-");
    const html = await page.text();
    // Self-contained: every script is the server's own (/assets/, markdown-it from node_modules), each with the page's nonce.
    const nonce = /script-src 'nonce-([^']+)'/.exec(page.headers.get('content-security-policy')!)![1]!;
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toMatch(new RegExp(`^ nonce="${nonce}" src="/assets/[a-z-]+\\.js"$`));
    for (const src of scripts.map((attrs) => /src="([^"]+)"/.exec(attrs)![1]!)) {
      const asset = await fetch(`${server.url}${src}`, { headers: jar });
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await asset.text()).length).toBeGreaterThan(100);
      expect((await fetch(`${server.url}${src}`, { headers: { ...jar, 'if-none-match': asset.headers.get('etag')! } })).status).toBe(304);
      expect((await fetch(`${server.url}${src}`)).status).toBe(401);
    }
    expect((await fetch(`${server.url}/assets/..%2Fpackage.json`, { headers: jar })).status).toBe(404);
    expect((await fetch(`${server.url}/assets/constructor`, { headers: jar })).status).toBe(404);
    expect(html).not.toContain(server.token);
    expect((await fetch(`${server.url}/api/sessions`, { headers: jar })).status).toBe(200);
    const noOrigin = await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { ...jar, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'fake', workDir: server.tmp }) });
    expect(noOrigin.status).toBe(403);
    const withOrigin = await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { ...jar, origin: server.url, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'fake', workDir: server.tmp }) });
    expect(withOrigin.status).toBe(201);
    expect((await fetch(`${server.url}/api/sessions`, { headers: { cookie: 'ase_page=forged' } })).status).toBe(401);
  });

  it('will not bind a non-loopback address without a token file', async () => {
    const error = await rejection(startServer({ hostname: '0.0.0.0', port: 0, dataDir: '/nonexistent' }));
    expect(isAseError(error, 'INVALID_OPTIONS')).toBe(true);
    expect((error as Error).message).toContain('--token-file');
  });
});

describe('requests', () => {
  it('answers bad JSON, bad bodies and bad ids with 400, unknown sessions with 404, big bodies with 413', async () => {
    server = await startTestServer({}, { maxBodyBytes: 2048 });
    const badJson = await server.api('POST', '/api/sessions', '{"agent": ');
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe('BAD_JSON');
    expect(badJson.body.error.message).toMatch(/not valid JSON/);
    const badBody = await server.api('POST', '/api/sessions', { agent: 'fake' });
    expect(badBody.status).toBe(400);
    expect(badBody.body.error.message).toContain('workDir');
    expect((await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp, extra: 1 })).status).toBe(400);
    expect((await server.api('POST', '/api/sessions', { agent: 'nope', workDir: server.tmp })).status).toBe(400);
    expect((await server.api('GET', '/api/sessions/..%2F..%2Fetc')).status).toBe(400);
    expect((await server.api('GET', '/api/sessions/unknown-id')).status).toBe(404);
    expect((await server.api('POST', '/api/sessions/unknown-id/messages', { text: 'x', localId: 'a' })).status).toBe(404);
    expect((await server.api('GET', '/api/sessions/unknown-id/events')).status).toBe(404);
    expect((await server.api('GET', '/api/sessions/unknown-id/transcript')).status).toBe(404);
    const big = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: 'x'.repeat(4096) });
    expect(big.status).toBe(413);
    const id = await server.newSession();
    expect((await server.api('GET', `/api/sessions/${id}/transcript?after_seq=-1`)).status).toBe(400);
    expect((await server.api('GET', `/api/sessions/${id}/transcript?limit=0`)).status).toBe(400);
    expect((await server.api('POST', `/api/sessions/${id}/messages`, { text: 'x', localId: 'has space' })).status).toBe(400);
    expect((await server.api('GET', '/api/nothing-here')).status).toBe(404);
  });

  it('a message retried with the same localId gets the same answer and reaches the agent once', async () => {
    server = await startTestServer();
    const id = await server.newSession();
    const first = await server.api('POST', `/api/sessions/${id}/messages`, { text: 'hello', localId: 'L-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ localId: 'L-1', seq: expect.any(Number), status: 'delivered' });
    const again = await Promise.all([1, 2, 3].map(() => server!.api('POST', `/api/sessions/${id}/messages`, { text: 'hello', localId: 'L-1' })));
    for (const r of again) expect(r.body).toEqual(first.body);
    await until(async () => (await transcriptTypes(id)).includes('turn_complete'));
    await new Promise((r) => setTimeout(r, 100));
    const types = await transcriptTypes(id);
    expect(types.filter((t) => t === 'user_message')).toHaveLength(1);
    expect(types.filter((t) => t === 'turn_complete')).toHaveLength(1);
    const entries = (await server.api('GET', `/api/sessions/${id}/transcript`)).body.entries;
    expect(entries.find((e: { seq: number }) => e.seq === first.body.seq)).toMatchObject({ type: 'user_message', payload: { localId: 'L-1', text: 'hello' } });
  });

  it('a permission: the first answer wins, a later one is 409 with the recorded outcome; unknown is 404', async () => {
    server = await startTestServer(ASK_TURN);
    const id = await server.newSession();
    await server.api('POST', `/api/sessions/${id}/messages`, { text: 'go', localId: 'L1' });
    let requestId = '';
    await until(async () => {
      const snap = (await server!.api('GET', `/api/sessions/${id}`)).body;
      requestId = Object.keys(snap.requests ?? {})[0] ?? '';
      return requestId !== '';
    });
    const answers = await Promise.all([
      server.api('POST', `/api/sessions/${id}/permissions/${requestId}`, { decision: 'allow' }),
      server.api('POST', `/api/sessions/${id}/permissions/${requestId}`, { decision: 'deny', message: 'no' }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const won = answers.find((a) => a.status === 200)!;
    const lost = answers.find((a) => a.status === 409)!;
    expect(lost.body.error.code).toBe('PERMISSION_ALREADY_DECIDED');
    expect(lost.body.outcome).toEqual(won.body.outcome);
    expect((await server.api('POST', `/api/sessions/${id}/permissions/${requestId}`, { decision: 'allow' })).status).toBe(409);
    expect((await server.api('POST', `/api/sessions/${id}/permissions/nope`, { decision: 'allow' })).status).toBe(404);
    expect((await server.api('POST', `/api/sessions/${id}/permissions/${requestId}`, { decision: 'maybe' })).status).toBe(400);
  });

  it('abort with nothing running is 409; mode switches; stop ends the session', async () => {
    server = await startTestServer();
    const id = await server.newSession();
    await until(async () => (await server!.api('GET', `/api/sessions/${id}`)).body.phase === 'idle');
    const abort = await server.api('POST', `/api/sessions/${id}/abort`, {});
    expect(abort.status).toBe(409);
    expect(abort.body.error.code).toBe('NOTHING_TO_ABORT');
    expect((await server.api('POST', `/api/sessions/${id}/mode`, { to: 'sideways' })).status).toBe(400);
    expect((await server.api('POST', `/api/sessions/${id}/mode`, { to: 'local' })).status).toBe(200);
    await until(async () => (await server!.api('GET', `/api/sessions/${id}`)).body.mode === 'local');
    const stopped = await server.api('POST', `/api/sessions/${id}/stop`, {});
    expect(stopped.status).toBe(200);
    expect(stopped.body.snapshot.phase).toBe('stopped');
    const list = (await server.api('GET', '/api/sessions')).body.sessions;
    expect(list).toEqual([expect.objectContaining({ sessionId: id, agent: 'fake', phase: 'stopped' })]);
  });

  it('pages the transcript forward and backward with hasMore', async () => {
    server = await startTestServer();
    const id = await server.newSession();
    for (let i = 0; i < 3; i++) {
      await server.api('POST', `/api/sessions/${id}/messages`, { text: `m${i}`, localId: `L${i}` });
      await until(async () => (await transcriptTypes(id)).filter((t) => t === 'turn_complete').length === i + 1);
    }
    const all = (await server.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body;
    expect(all.hasMore).toBe(false);
    const seqs = all.entries.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
    const n = seqs.length;
    const fwd = (await server.api('GET', `/api/sessions/${id}/transcript?after_seq=2&limit=3`)).body;
    expect(fwd.entries.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5]);
    expect(fwd.hasMore).toBe(true);
    const back = (await server.api('GET', `/api/sessions/${id}/transcript?before_seq=${n}&limit=2`)).body;
    expect(back.entries.map((e: { seq: number }) => e.seq)).toEqual([n - 2, n - 1]);
    expect(back.hasMore).toBe(true);
    const end = (await server.api('GET', `/api/sessions/${id}/transcript?after_seq=${n - 1}&limit=5`)).body;
    expect(end).toEqual({ entries: [expect.objectContaining({ seq: n })], hasMore: false });
    expect((await server.api('GET', `/api/sessions/${id}/transcript?after_seq=1&before_seq=3`)).status).toBe(400);
  });

  it('serves an OpenAPI document naming every route', async () => {
    server = await startTestServer();
    const doc = (await server.api('GET', '/api/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    for (const route of ['/api/sessions', '/api/sessions/{id}', '/api/sessions/{id}/stop', '/api/sessions/{id}/messages', '/api/sessions/{id}/events', '/api/sessions/{id}/transcript', '/api/sessions/{id}/permissions/{requestId}', '/api/sessions/{id}/abort', '/api/sessions/{id}/mode']) {
      expect(Object.keys(doc.paths)).toContain(route);
    }
  });
});

describe('the event stream', () => {
  it('sends durable entries with id = seq, replays from Last-Event-ID and after_seq, and ephemeral frames without ids', async () => {
    server = await startTestServer(ASK_TURN);
    const id = await server.newSession();
    const live = await sse(`/api/sessions/${id}/events`);
    expect(live.status).toBe(200);
    await server.api('POST', `/api/sessions/${id}/messages`, { text: 'go', localId: 'L1' });
    const prompt = await live.waitFor((f) => f.event === 'permission_prompt');
    expect(prompt.id).toBeUndefined();
    await server.api('POST', `/api/sessions/${id}/permissions/${JSON.parse(prompt.data).requestId}`, { decision: 'allow' });
    await live.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete');
    const got = entriesOf(live.frames);
    expect(got.map((e) => e.seq)).toEqual(got.map((_, i) => i + 1));
    for (const f of live.frames.filter((f) => f.event === 'entry')) expect(f.id).toBe(String(JSON.parse(f.data).seq));
    for (const f of live.frames.filter((f) => f.event !== 'entry')) expect(f.id).toBeUndefined();
    expect(live.frames.some((f) => f.event === 'agent' && JSON.parse(f.data).type === 'text_delta')).toBe(true);
    expect(live.frames.some((f) => f.event === 'status')).toBe(true);
    // What the journal holds, entry for entry.
    const journal = (await server.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries;
    expect(got.map((e) => e.eventId)).toEqual(journal.map((e: { eventId: string }) => e.eventId));

    const resumed = await sse(`/api/sessions/${id}/events`, { ...server.headers, 'last-event-id': '3' });
    await resumed.waitFor((f) => f.event === 'live');
    expect(entriesOf(resumed.frames).map((e) => e.seq)).toEqual(journal.slice(3).map((e: { seq: number }) => e.seq));
    const byQuery = await sse(`/api/sessions/${id}/events?after_seq=${journal.length - 1}`);
    await byQuery.waitFor((f) => f.event === 'live');
    expect(entriesOf(byQuery.frames).map((e) => e.seq)).toEqual([journal.length]);
    expect((await sse(`/api/sessions/${id}/events`, { ...server.headers, 'last-event-id': 'abc' })).status).toBe(400);
  });

  it('sends a heartbeat frame on its interval', async () => {
    server = await startTestServer({}, { heartbeatMs: 100 });
    const id = await server.newSession();
    const stream = await sse(`/api/sessions/${id}/events`);
    const beat = await stream.waitFor((f) => f.event === 'heartbeat', 2000);
    expect(beat.id).toBeUndefined();
  });

  it('reports a gap when the cursor is older than what is kept, or ahead of the journal', async () => {
    server = await startTestServer({}, { journal: new MemoryJournal({ maxEntriesPerSession: 3 }) });
    const id = await server.newSession();
    for (let i = 0; i < 2; i++) {
      await server.api('POST', `/api/sessions/${id}/messages`, { text: `m${i}`, localId: `L${i}` });
      await until(async () => (await server!.api('GET', `/api/sessions/${id}`)).body.usage.turns === i + 1);
    }
    const kept = (await server.api('GET', `/api/sessions/${id}/transcript`)).body.entries.map((e: { seq: number }) => e.seq);
    expect(kept).toHaveLength(3);
    const old = await sse(`/api/sessions/${id}/events`, { ...server.headers, 'last-event-id': '1' });
    const gap = await old.waitFor((f) => f.event === 'gap');
    expect(gap.id).toBeUndefined();
    expect(JSON.parse(gap.data)).toMatchObject({ reason: 'trimmed', afterSeq: 1, firstSeq: kept[0] });
    await old.waitFor((f) => f.event === 'live');
    expect(entriesOf(old.frames).map((e) => e.seq)).toEqual(kept);
    const ahead = await sse(`/api/sessions/${id}/events`, { ...server.headers, 'last-event-id': '999' });
    expect(JSON.parse((await ahead.waitFor((f) => f.event === 'gap')).data)).toMatchObject({ reason: 'ahead', afterSeq: 999 });
    const current = await sse(`/api/sessions/${id}/events`, { ...server.headers, 'last-event-id': String(kept.at(-1)) });
    await current.waitFor((f) => f.event === 'live');
    expect(current.frames.some((f) => f.event === 'gap')).toBe(false);
  });

  it('presence: the first stream brings the session online, the last one closing takes it offline after the grace', async () => {
    server = await startTestServer({}, { presenceGraceMs: 300 });
    const id = await server.newSession();
    const online = async () => (await server!.api('GET', `/api/sessions/${id}`)).body.online as boolean;
    // No stream yet: offline once the grace after creation passed.
    await until(async () => !(await online()), 3000);
    const a = await sse(`/api/sessions/${id}/events`);
    await until(online);
    const b = await sse(`/api/sessions/${id}/events`);
    a.cut();
    await new Promise((r) => setTimeout(r, 450));
    expect(await online()).toBe(true); // b is still there
    b.cut();
    await new Promise((r) => setTimeout(r, 100));
    const c = await sse(`/api/sessions/${id}/events`); // back within the grace: never offline
    await new Promise((r) => setTimeout(r, 450));
    expect(await online()).toBe(true);
    c.cut();
    await until(async () => !(await online()), 3000);
  });

  it('re-sends an open prompt to a client that reconnects', async () => {
    server = await startTestServer(ASK_TURN, { presenceGraceMs: 50 });
    const id = await server.newSession();
    const first = await sse(`/api/sessions/${id}/events`);
    await server.api('POST', `/api/sessions/${id}/messages`, { text: 'go', localId: 'L1' });
    const prompt = JSON.parse((await first.waitFor((f) => f.event === 'permission_prompt')).data);
    first.cut();
    await until(async () => !(await server!.api('GET', `/api/sessions/${id}`)).body.online, 3000);
    const second = await sse(`/api/sessions/${id}/events`);
    const again = await second.waitFor((f) => f.event === 'permission_prompt');
    expect(JSON.parse(again.data).requestId).toBe(prompt.requestId);
    // A client joining while another is connected (the session stays online) gets it too.
    const third = await sse(`/api/sessions/${id}/events`);
    expect(JSON.parse((await third.waitFor((f) => f.event === 'permission_prompt')).data)).toMatchObject({ requestId: prompt.requestId, toolName: 'Bash', input: { command: 'ls' } });
  });
});

describe('across a server restart', () => {
  it('a stored session is listed, replays with the same seqs, continues on the next message, and its seqs keep growing', async () => {
    const { FileJournal, FileStore } = await import('../../src/index.js');
    const fsm = await import('node:fs/promises');
    const osm = await import('node:os');
    const pathm = await import('node:path');
    const dataDir = await fsm.mkdtemp(pathm.join(osm.tmpdir(), 'ase-serve-restart-'));
    const files = () => ({ journal: new FileJournal({ dir: pathm.join(dataDir, 'transcripts') }), store: new FileStore({ dir: pathm.join(dataDir, 'sessions') }) });
    try {
      server = await startTestServer({}, files());
      // The agent works in dataDir: the test server's own temp dir goes with it.
      const id = (await server.api('POST', '/api/sessions', { agent: 'fake', workDir: dataDir })).body.sessionId as string;
      await server.api('POST', `/api/sessions/${id}/messages`, { text: 'one', localId: 'L1' });
      await until(async () => (await server!.api('GET', `/api/sessions/${id}`)).body.usage?.turns === 1);
      const before = (await server.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries as { seq: number; eventId: string }[];
      await server.stop();
      server = undefined;

      server = await startTestServer({}, files());
      const listed = (await server.api('GET', '/api/sessions')).body.sessions;
      expect(listed).toEqual([expect.objectContaining({ sessionId: id, status: 'stored', phase: 'stopped' })]);
      expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, sessionId: id, phase: 'stopped' });
      const replay = await sse(`/api/sessions/${id}/events`);
      await replay.waitFor((f) => f.event === 'live');
      const replayed = entriesOf(replay.frames);
      // The stop was journaled after the first read: the replay has those entries and then some.
      expect(replayed.slice(0, before.length).map((e) => [e.seq, e.eventId])).toEqual(before.map((e) => [e.seq, e.eventId]));
      const lastSeq = replayed.at(-1)!.seq;
      // A retried message from before the restart is not sent again.
      const retry = await server.api('POST', `/api/sessions/${id}/messages`, { text: 'one', localId: 'L1' });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body.seq).toBe(before.find((e) => (e as { type?: string }).type === 'user_message')?.seq);
      const next = await server.api('POST', `/api/sessions/${id}/messages`, { text: 'two', localId: 'L2' });
      expect(next.status).toBe(200);
      expect(next.body.seq).toBeGreaterThan(lastSeq);
      await replay.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).seq === next.body.seq);
      const all = (await server.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries as { seq: number; type: string }[];
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
      expect(all.filter((e) => e.type === 'user_message')).toHaveLength(2);
    } finally {
      await server?.stop();
      server = undefined;
      await fsm.rm(dataDir, { recursive: true, force: true });
    }
  });
});
