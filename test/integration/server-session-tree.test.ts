/**
 * Remote clients and sub-agent sessions over real HTTP on loopback (fake engine, file store and
 * journal in a temp data dir): `GET /api/sessions` carries `parentId`; `GET /api/sessions/:id/tree`
 * answers the tree that holds a session (kept at `sessionTreeFile(dataDir, rootId)`) with its
 * focus, so a client follows `enter` / `exit` of a tree run in the server's process; a server
 * started later on the data dir finds a tree from any of its sessions by their stored parents.
 * Event streams are told the tree (`tree` frames) at connect and on every change, also one made
 * by another process on the tree file (a second supervisor and `openSessionTree` here); a corrupt
 * file is one `error` frame; the watch is gone once the server closed. Remote clients move the
 * focus (`POST .../tree/enter`, `.../tree/exit`) with 404 / 409 refusals, and create sessions
 * with a `parentId`: spawned into the parent's tree (a root parent of no tree starts one), 409
 * under a completed parent or a sub-agent no tree holds, an orphan under an unknown parent.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSupervisor, fakeEngine, FileJournal, FileStore, openSessionTree, sessionTreeFile, type Supervisor } from '../../src/index.js';
import { startServer as startBareServer, supervisorHost, type RunningServer, type ServerOptions } from '../../src/server.js';
import { main } from '../../src/cli/main.js';
import { watchContract } from '../support/response-contract.js';
import { openSse, type SseConnection, type SseFrame } from '../support/sse-client.js';

let dir: string;
let dataDir: string;
let workDir: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-serve-tree-'));
  dataDir = path.join(dir, 'data');
  workDir = path.join(dir, 'work');
  await fs.mkdir(workDir);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await fs.rm(dir, { recursive: true, force: true });
});

/** `startServer` with the OpenAPI contract tap: the test fails on a response the document does not declare. */
async function startServer(options: ServerOptions): Promise<RunningServer> {
  const server = await startBareServer(options);
  const contract = watchContract(server);
  cleanups.push(async () => {
    await new Promise((resolve) => setImmediate(resolve)); // after the close: the responses it cut are checked
    contract.assertKept();
  });
  return server;
}

const files = () => ({ store: new FileStore({ dir: path.join(dataDir, 'sessions') }), journal: new FileJournal({ dir: path.join(dataDir, 'transcripts') }) });

function supervisor(parts = files()): Supervisor {
  const created = createSupervisor({ dataDir, ...parts, engines: [fakeEngine({ startDelayMs: 0 })] });
  cleanups.push(() => created.shutdown());
  return created;
}

/** A supervisor on the data dir and `ase serve`'s app over it (closed after the test). */
async function serveSupervisor(): Promise<{ sup: Supervisor; server: RunningServer; parts: ReturnType<typeof files> }> {
  const parts = files();
  const sup = supervisor(parts);
  const server = await startServer({ port: 0, dataDir, journal: parts.journal, host: supervisorHost(sup, parts.store, { dataDir }) });
  cleanups.push(() => server.close());
  return { sup, server, parts };
}

async function get(server: RunningServer, route: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${server.token}` } });
  return { status: response.status, body: await response.json() };
}

async function post(server: RunningServer, route: string, body: unknown = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function stream(server: RunningServer, id: string): Promise<SseConnection> {
  const connection = await openSse(`${server.url}/api/sessions/${id}/events`, { authorization: `Bearer ${server.token}` });
  cleanups.push(async () => connection.cut());
  expect(connection.status).toBe(200);
  return connection;
}

const trees = (c: SseConnection) => c.frames.filter((f) => f.event === 'tree').map((f) => JSON.parse(f.data) as { focus: string; nodes: Record<string, { state: string }> } | null);
const focusIs = (focus: string) => (f: SseFrame) => f.event === 'tree' && (JSON.parse(f.data) as { focus?: string } | null)?.focus === focus;
/** fs.watch handles open in this process. */
const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await settle(10);
  }
}

describe('session trees over HTTP', () => {
  it('a client follows the focus of a tree run in the server process; sessions list their parent', async () => {
    const { sup, server } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    await sup.create({ agent: 'fake', workDir, sessionId: 'solo' });
    const tree = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'child', parentCallId: 'call-3' });

    const listed = (await get(server, '/api/sessions')).body.sessions as { sessionId: string; parentId?: string }[];
    expect(Object.fromEntries(listed.map((s) => [s.sessionId, s.parentId ?? null]))).toEqual({ root: null, solo: null, child: 'root' });
    expect((await get(server, '/api/sessions/child')).body).toMatchObject({ live: true, parentId: 'root', parentCallId: 'call-3' });

    const before = await get(server, '/api/sessions/child/tree');
    expect(before).toMatchObject({ status: 200, body: { sessionId: 'child', rootId: 'root', focus: 'root', nodes: { root: { state: 'active' }, child: { parentId: 'root', state: 'active' } } } });
    await tree.enter('child');
    expect((await get(server, '/api/sessions/root/tree')).body).toMatchObject({ focus: 'child', nodes: { root: { state: 'suspended' }, child: { state: 'active' } } });
    await tree.exit();
    expect((await get(server, '/api/sessions/child/tree')).body.focus).toBe('root');

    expect(await get(server, '/api/sessions/solo/tree')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(await get(server, '/api/sessions/nobody/tree')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'no session nobody' } } });
    expect((await get(server, '/api/sessions/..%2Fx/tree')).status).toBe(400);

    const doc = (await get(server, '/api/openapi.json')).body;
    expect(doc.paths['/api/sessions/{id}/tree'].get.responses['200']).toBeDefined();
    expect(doc.components.schemas.SessionInfo.properties.parentId).toMatchObject({ type: 'string' });
  });

  it('a server started later finds the tree from a grandchild by the stored parents; a corrupt tree file is STORE_CORRUPT', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'kid' });
    await tree.spawn('kid', { agent: 'fake', workDir, sessionId: 'grandkid' });
    await tree.enter('kid');
    await sup.shutdown();

    const server = await startServer({ port: 0, dataDir, engines: [fakeEngine({ startDelayMs: 0 })] });
    cleanups.push(() => server.close());
    const found = await get(server, '/api/sessions/grandkid/tree');
    expect(found).toMatchObject({ status: 200, body: { sessionId: 'grandkid', rootId: 'root', focus: 'kid', nodes: { grandkid: { parentId: 'kid' }, root: { state: 'suspended' } } } });
    const listed = (await get(server, '/api/sessions')).body.sessions as { sessionId: string; parentId?: string; status: string }[];
    expect(listed.find((s) => s.sessionId === 'grandkid')).toMatchObject({ parentId: 'kid', status: 'stored' });
    expect((await get(server, '/api/sessions/grandkid')).body).toMatchObject({ live: false, parentId: 'kid' });

    await fs.writeFile(sessionTreeFile(dataDir, 'root'), '{"rootId":"root","focus":"elsewhere","nodes":{}}');
    expect(await get(server, '/api/sessions/kid/tree')).toMatchObject({ status: 500, body: { error: { code: 'STORE_CORRUPT' } } });
  });

  it('a stream is told the tree at connect and each change made by another process on the file, once per change; no watch is left after close', async () => {
    const other = supervisor(); // "another process": its own supervisor, store and journal on the data dir
    const root = await other.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: other, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    const kid = await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'child' });
    const solo = await other.create({ agent: 'fake', workDir, sessionId: 'solo' });
    // A turn each: their state is stored, which is all the server knows of them.
    await Promise.all([root.run('hi'), kid.run('hi'), solo.run('hi')]);

    const watchersBefore = watchers();
    const server = await startServer({ port: 0, dataDir, engines: [fakeEngine({ startDelayMs: 0 })] });
    cleanups.push(() => server.close());
    const child = await stream(server, 'child');
    const soloStream = await stream(server, 'solo');
    const first = await child.waitFor((f) => f.event === 'tree');
    expect(JSON.parse(first.data)).toMatchObject({ sessionId: 'child', rootId: 'root', focus: 'root', nodes: { child: { parentId: 'root', state: 'active' } } });
    expect(watchers()).toBeGreaterThan(watchersBefore);

    await tree.enter('child');
    await child.waitFor(focusIs('child'));
    expect(trees(child).at(-1)).toMatchObject({ focus: 'child', nodes: { root: { state: 'suspended' }, child: { state: 'active' } } });
    await tree.exit();
    await child.waitFor((f) => f.event === 'tree' && trees(child).length === 3);
    expect(trees(child).map((t) => t?.focus)).toEqual(['root', 'child', 'root']);
    // A rewrite with the same content is no change; a session of no tree hears nothing of it.
    const again = await openSessionTree({ supervisor: other, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await again.close();
    await settle(800);
    expect(trees(child)).toHaveLength(3);
    expect(trees(soloStream)).toEqual([]);

    // A second stream of the same session gets the tree as it is now, once.
    const late = await stream(server, 'root');
    await late.waitFor((f) => f.event === 'tree');
    await tree.complete('child', 'done');
    await late.waitFor((f) => f.event === 'tree' && trees(late).length === 2);
    expect(trees(late).at(-1)).toMatchObject({ focus: 'root', nodes: { child: { state: 'completed', result: 'done' } } });
    await child.waitFor((f) => f.event === 'tree' && trees(child).length === 4);
    await tree.close();

    // A corrupt file: one error frame per stream, not one per look.
    await fs.writeFile(sessionTreeFile(dataDir, 'root'), '{"rootId":"root","focus":"elsewhere","nodes":{}}');
    await child.waitFor((f) => f.event === 'error');
    await settle(800);
    expect(child.frames.filter((f) => f.event === 'error').map((f) => JSON.parse(f.data).code)).toEqual(['STORE_CORRUPT']);
    // No tree holds it any more: a null tree.
    await fs.rm(sessionTreeFile(dataDir, 'root'));
    await child.waitFor((f) => f.event === 'tree' && f.data === 'null');

    // The watch runs while a stream is open: the last one closing stops it, the next starts it.
    for (const connection of [child, soloStream, late]) connection.cut();
    await until(() => watchers() === watchersBefore);
    const again2 = await stream(server, 'root');
    await until(() => watchers() > watchersBefore);
    await settle(200);
    expect(trees(again2)).toEqual([]); // in no tree now: nothing to say
    await server.close();
    await settle(50);
    expect(watchers()).toBe(watchersBefore);
  });

  it('remote clients move the focus: enter a sub-agent of the focus, exit the focus; refusals are 404 / 409 / 403 and change nothing', async () => {
    const { sup, server } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    await sup.create({ agent: 'fake', workDir, sessionId: 'solo' });
    const tree = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'a' });
    await tree.spawn('a', { agent: 'fake', workDir, sessionId: 'a1' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'done' });
    await tree.complete('done', 'finished');
    await tree.close();
    const rootStream = await stream(server, 'root');
    await rootStream.waitFor(focusIs('root'));

    expect(await post(server, '/api/sessions/a1/tree/enter')).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT' } } }); // a grandchild
    expect(await post(server, '/api/sessions/done/tree/enter')).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT', message: expect.stringContaining('completed') } } });
    expect(await post(server, '/api/sessions/root/tree/exit')).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT' } } }); // the root
    expect(await post(server, '/api/sessions/solo/tree/enter')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(await post(server, '/api/sessions/nobody/tree/enter')).toMatchObject({ status: 404 });
    expect(await post(server, '/api/sessions/a/tree/enter', { extra: 1 })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    expect(await post(server, '/api/sessions/a/tree/enter', {}, { origin: 'https://evil.example' })).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN_ORIGIN' } } });
    const unauthorized = await fetch(`${server.url}/api/sessions/a/tree/enter`, { method: 'POST', body: '{}' });
    expect(unauthorized.status).toBe(401);
    expect((await get(server, '/api/sessions/a/tree')).body.focus).toBe('root');

    const entered = await post(server, '/api/sessions/a/tree/enter');
    expect(entered).toMatchObject({ status: 200, body: { sessionId: 'a', rootId: 'root', focus: 'a', nodes: { root: { state: 'suspended' }, a: { state: 'active' } } } });
    await rootStream.waitFor(focusIs('a'));
    expect(await post(server, '/api/sessions/root/tree/exit')).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT', message: expect.stringContaining('not the focused session') } } });
    expect(await post(server, '/api/sessions/a1/tree/enter')).toMatchObject({ status: 200, body: { focus: 'a1', nodes: { a: { state: 'suspended' } } } });
    expect(await post(server, '/api/sessions/a1/tree/exit')).toMatchObject({ status: 200, body: { focus: 'a', nodes: { a: { state: 'active' }, a1: { state: 'active' } } } });
    expect(await post(server, '/api/sessions/a/tree/exit')).toMatchObject({ status: 200, body: { sessionId: 'a', focus: 'root', nodes: { root: { state: 'active' } } } });
    await rootStream.waitFor((f) => f.event === 'tree' && trees(rootStream).length >= 5);
    expect(trees(rootStream).map((t) => t?.focus)).toEqual(['root', 'a', 'a1', 'a', 'root']);
    // The file holds it: a handle opened now sees the same tree, the suspended sessions never stopped.
    const reopened = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    expect(reopened.record()).toMatchObject({ focus: 'root', nodes: { root: { state: 'active' }, a: { state: 'active' }, done: { state: 'completed', delivered: true } } });
    await reopened.close();
    expect(sup.get('root')?.snapshot().phase).not.toBe('stopped');

    const doc = (await get(server, '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/sessions/{id}/tree/enter'].post.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
    expect(Object.keys(doc.paths['/api/sessions/{id}/tree/exit'].post.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
  });

  it('a remote client spawns a sub-agent into the parent\'s tree (POST /api/sessions with parentId), enters it, talks to it and exits', async () => {
    const { sup, server } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'a' });
    await tree.close();
    const rootStream = await stream(server, 'root');
    await rootStream.waitFor(focusIs('root'));

    const created = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'root', parentCallId: 'call-1' });
    expect(created.status).toBe(201);
    const kid = created.body.sessionId as string;
    expect(await get(server, `/api/sessions/${kid}/tree`)).toMatchObject({
      status: 200,
      body: { sessionId: kid, rootId: 'root', focus: 'root', nodes: { root: { state: 'active' }, a: { parentId: 'root' }, [kid]: { sessionId: kid, parentId: 'root', parentCallId: 'call-1', state: 'active' } } },
    });
    // The parent's stream hears the new node.
    await rootStream.waitFor((f) => f.event === 'tree' && kid in (JSON.parse(f.data) as { nodes: object }).nodes);
    expect((await get(server, `/api/sessions/${kid}`)).body).toMatchObject({ live: true, parentId: 'root', parentCallId: 'call-1' });

    const kidStream = await stream(server, kid);
    await kidStream.waitFor(focusIs('root'));
    expect(await post(server, `/api/sessions/${kid}/tree/enter`)).toMatchObject({ status: 200, body: { focus: kid, nodes: { root: { state: 'suspended' }, [kid]: { state: 'active' } } } });
    await rootStream.waitFor(focusIs(kid));
    await kidStream.waitFor(focusIs(kid));
    expect(await post(server, `/api/sessions/${kid}/messages`, { text: 'hello child', localId: 'm1' })).toMatchObject({ status: 200, body: { localId: 'm1' } });
    await kidStream.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete');
    expect(JSON.stringify((await get(server, `/api/sessions/${kid}/transcript`)).body.entries)).toContain('echo: hello child');
    expect(await post(server, `/api/sessions/${kid}/tree/exit`)).toMatchObject({ status: 200, body: { focus: 'root', nodes: { root: { state: 'active' }, [kid]: { state: 'active' } } } });
    await kidStream.waitFor((f) => f.event === 'tree' && trees(kidStream).at(-1)?.focus === 'root' && trees(kidStream).length === 3);
    expect(trees(kidStream).map((t) => t?.focus)).toEqual(['root', kid, 'root']);
    expect(sup.get('root')?.snapshot().phase).not.toBe('stopped');

    // Under a sub-agent of the tree (found by climbing its stored parent): a grandchild node.
    const grand = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'a' });
    expect(grand.status).toBe(201);
    expect((await get(server, `/api/sessions/${grand.body.sessionId}/tree`)).body).toMatchObject({ rootId: 'root', nodes: { [grand.body.sessionId]: { parentId: 'a', state: 'active' } } });
    // Under a session created a moment ago (open here, maybe not stored yet): found by its live parent.
    const kid2 = (await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'root' })).body.sessionId as string;
    const kid2child = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: kid2 });
    expect(kid2child.status).toBe(201);
    expect((await get(server, `/api/sessions/${kid2child.body.sessionId}/tree`)).body).toMatchObject({ rootId: 'root', nodes: { [kid2]: { parentId: 'root' }, [kid2child.body.sessionId]: { parentId: kid2 } } });
    // The file holds all of it.
    const reopened = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    expect(Object.keys(reopened.record().nodes).sort()).toEqual(['a', 'root', kid, grand.body.sessionId, kid2, kid2child.body.sessionId].sort());
    await reopened.close();
  });

  it('a client leaves a sub-agent it entered: exit, then POST .../tree/complete: its last answer reaches the parent once, the sub-agent is stopped; refusals change nothing', async () => {
    const { sup, server } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const kid = (await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'root' })).body.sessionId as string;
    const kidStream = await stream(server, kid);
    expect(await post(server, `/api/sessions/${kid}/tree/enter`)).toMatchObject({ status: 200, body: { focus: kid } });
    expect(await post(server, `/api/sessions/${kid}/messages`, { text: 'first', localId: 'm1' })).toMatchObject({ status: 200 });
    await kidStream.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete');
    expect(await post(server, `/api/sessions/${kid}/messages`, { text: 'the answer is 42', localId: 'm2' })).toMatchObject({ status: 200 });
    await kidStream.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete' && JSON.parse(f.data).payload.localId === 'm2');

    // Refused while it has the focus, for the root, for garbage and unknown sessions: nothing changes.
    expect(await post(server, `/api/sessions/${kid}/tree/complete`)).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT', message: expect.stringContaining('focus') } } });
    expect(await post(server, '/api/sessions/root/tree/complete')).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT' } } });
    expect(await post(server, `/api/sessions/${kid}/tree/complete`, { result: 7 })).toMatchObject({ status: 400 });
    expect(await post(server, `/api/sessions/${kid}/tree/complete`, { extra: true })).toMatchObject({ status: 400 });
    expect(await post(server, '/api/sessions/nobody/tree/complete')).toMatchObject({ status: 404 });
    expect((await get(server, `/api/sessions/${kid}/tree`)).body).toMatchObject({ focus: kid, nodes: { [kid]: { state: 'active' } } });

    expect(await post(server, `/api/sessions/${kid}/tree/exit`)).toMatchObject({ status: 200, body: { focus: 'root' } });
    const rootStream = await stream(server, 'root');
    // Two clients at once (a double press): one completion, one delivery.
    const [completed, twice] = await Promise.all([post(server, `/api/sessions/${kid}/tree/complete`), post(server, `/api/sessions/${kid}/tree/complete`)]);
    expect(twice).toMatchObject({ status: 200, body: { nodes: { [kid]: { state: 'completed', result: 'echo: the answer is 42' } } } });
    expect(completed).toMatchObject({ status: 200, body: { focus: 'root', nodes: { [kid]: { state: 'completed', result: 'echo: the answer is 42', delivered: true } } } });
    await rootStream.waitFor((f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete');
    const said = async () => ((await get(server, '/api/sessions/root/transcript?limit=500')).body.entries as { type: string; payload: { text?: string } }[]).filter((e) => e.type === 'user_message' && e.payload.text?.includes('echo: the answer is 42'));
    expect(await said()).toHaveLength(1);
    expect((await said())[0]!.payload.text).toBe(`[sub-agent ${kid} finished]\necho: the answer is 42`);
    await until(() => sup.get(kid) === undefined || sup.get(kid)!.snapshot().phase === 'stopped', 10_000);
    // Again: the tree as it is, nothing delivered twice; a completed one is not entered.
    expect(await post(server, `/api/sessions/${kid}/tree/complete`, { result: 'other' })).toMatchObject({ status: 200, body: { nodes: { [kid]: { state: 'completed', result: 'echo: the answer is 42' } } } });
    expect(await said()).toHaveLength(1);
    expect(await post(server, `/api/sessions/${kid}/tree/enter`)).toMatchObject({ status: 409 });
  });

  it('POST /api/sessions under a completed parent is 409 TREE_CONFLICT and nothing is created', async () => {
    const { sup, server, parts } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: sessionTreeFile(dataDir, 'root'), rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'done' });
    await tree.complete('done', 'finished');
    await tree.close();
    const fileBefore = await fs.readFile(sessionTreeFile(dataDir, 'root'), 'utf8');
    const stored = async () => (await parts.store.list()).length;
    const before = await stored();

    const refused = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'done', parentCallId: 'call-2' });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT', message: expect.stringContaining('completed') } } });
    expect(await stored()).toBe(before);
    expect((await get(server, '/api/sessions')).body.sessions).toHaveLength(before);
    expect(await fs.readFile(sessionTreeFile(dataDir, 'root'), 'utf8')).toBe(fileBefore);
    expect(server.app.hubs.size).toBe(0);
    const doc = (await get(server, '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/sessions'].post.responses)).toContain('409');
  });

  it('a root parent of no tree starts one (focus at the root); a sub-agent parent no tree holds is 409; an unknown parent leaves an orphan', async () => {
    const { sup, server, parts } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'lone' });
    await sup.create({ agent: 'fake', workDir, sessionId: 'stray', parentId: 'lone' }); // a sub-agent made outside any tree
    await sup.create({ agent: 'fake', workDir, sessionId: 'other' });
    expect((await get(server, '/api/sessions/lone/tree')).status).toBe(404);
    const stored = async () => (await parts.store.list()).length;

    // Three at once: the spawns into the new tree run one at a time, none is lost.
    const made = await Promise.all([1, 2, 3].map(() => post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'lone' })));
    expect(made.map((m) => m.status)).toEqual([201, 201, 201]);
    const ids = made.map((m) => m.body.sessionId as string);
    const grown = await get(server, '/api/sessions/lone/tree');
    expect(grown.body).toMatchObject({ rootId: 'lone', focus: 'lone', nodes: { lone: { state: 'active' } } });
    expect(Object.keys(grown.body.nodes).sort()).toEqual(['lone', ...ids].sort());
    expect(await post(server, `/api/sessions/${ids[0]}/tree/enter`)).toMatchObject({ status: 200, body: { focus: ids[0] } });

    const before = await stored();
    const conflict = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'stray' });
    expect(conflict).toMatchObject({ status: 409, body: { error: { code: 'TREE_CONFLICT', message: expect.stringContaining('no session tree') } } });
    expect(await stored()).toBe(before);
    await expect(fs.stat(sessionTreeFile(dataDir, 'stray'))).rejects.toMatchObject({ code: 'ENOENT' });

    // A failed first spawn leaves no tree behind.
    const unknownAgent = await post(server, '/api/sessions', { agent: 'no-such-engine', workDir, parentId: 'other' });
    expect(unknownAgent.status).toBe(400);
    expect(await stored()).toBe(before);
    await expect(fs.stat(sessionTreeFile(dataDir, 'other'))).rejects.toMatchObject({ code: 'ENOENT' });

    const orphan = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'ghost' });
    expect(orphan.status).toBe(201);
    expect((await get(server, `/api/sessions/${orphan.body.sessionId}`)).body).toMatchObject({ parentId: 'ghost' });
    expect((await get(server, `/api/sessions/${orphan.body.sessionId}/tree`)).status).toBe(404);
    await expect(fs.stat(sessionTreeFile(dataDir, 'ghost'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('POST /api/sessions takes a parentId (and parentCallId); bad ones are 400 with nothing created', async () => {
    const { sup, server, parts } = await serveSupervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const created = await post(server, '/api/sessions', { agent: 'fake', workDir, parentId: 'root', parentCallId: 'call-9' });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    expect((await get(server, `/api/sessions/${id}`)).body).toMatchObject({ parentId: 'root', parentCallId: 'call-9' });
    await post(server, `/api/sessions/${id}/stop`);
    expect((await parts.store.load(id))?.state).toMatchObject({ parentId: 'root', parentCallId: 'call-9', phase: 'stopped' });

    const count = async () => (await get(server, '/api/sessions')).body.sessions.length as number;
    const before = await count();
    for (const bad of [{ parentId: '..' }, { parentId: 'a/b' }, { parentId: '' }, { parentCallId: 'call-1' }, { parentId: 'root', parentCallId: '' }, { parentId: 7 }]) {
      const refused = await post(server, '/api/sessions', { agent: 'fake', workDir, ...bad });
      expect(refused, JSON.stringify(bad)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    }
    expect(await count()).toBe(before);
    expect(server.app.hubs.size).toBe(0); // the stopped one's is forgotten; the refusals made none
    const doc = (await get(server, '/api/openapi.json')).body;
    expect(doc.components.schemas.CreateSession.properties).toMatchObject({ parentId: { type: 'string' }, parentCallId: { type: 'string' } });
  });
});

describe('ase serve --sub-agents (ServerOptions.subAgents)', () => {
  it('the agent spawns a child itself; the child runs its task, its answer reaches the parent once, and the tree shows it completed', async () => {
    const parts = files();
    const server = await startServer({ port: 0, dataDir, ...parts, engines: [fakeEngine({ startDelayMs: 0 })], subAgents: true });
    cleanups.push(() => server.close());
    // The parent's agent calls spawn_session in its first turn; the child (the engine's default script) echoes its task.
    const script = { turns: [[{ callTool: { name: 'spawn_session', input: { agent: 'fake', prompt: 'child task' } } }, { text: 'spawned' }], [{ text: 'parent read it' }]] };
    const created = await post(server, '/api/sessions', { agent: 'fake', workDir, engineOptions: { script } });
    expect(created.status).toBe(201);
    const parentId = created.body.sessionId as string;
    expect((await post(server, `/api/sessions/${parentId}/messages`, { text: 'go', localId: 'go-1' })).status).toBe(200);

    const userTexts = async () =>
      (await parts.journal.read(parentId)).filter((e) => e.type === 'user_message').map((e) => (e.payload as { text: string }).text);
    const end = Date.now() + 20_000;
    while (!(await userTexts()).some((t) => t.startsWith('[sub-agent '))) {
      if (Date.now() > end) throw new Error(`the child's answer never reached the parent: ${JSON.stringify(await userTexts())}`);
      await settle(50);
    }
    const results = (await userTexts()).filter((t) => t.startsWith('[sub-agent '));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/^\[sub-agent (\S+) \(call [^)]+\) finished\]\necho: child task$/);
    const childId = /^\[sub-agent (\S+)/.exec(results[0]!)![1]!;
    const tree = await get(server, `/api/sessions/${parentId}/tree`);
    expect(tree.body).toMatchObject({ rootId: parentId, focus: parentId, nodes: { [childId]: { parentId, state: 'completed' } } });
    expect((await get(server, `/api/sessions/${childId}`)).body).toMatchObject({ parentId });
    // `ase sessions` on the data dir lists the child under its parent, like a child a host spawned.
    let listed = '';
    expect(await main(['sessions', '--json', '--data-dir', dataDir], { out: (t) => void (listed += t), err: () => {} })).toBe(0);
    const rows = listed.trim().split('\n').map((line) => JSON.parse(line) as { sessionId: string; parentId?: string; parentCallId?: string });
    expect(rows.find((r) => r.sessionId === childId)).toMatchObject({ parentId, parentCallId: expect.any(String) });
    let table = '';
    await main(['sessions', '--data-dir', dataDir], { out: (t) => void (table += t), err: () => {} });
    const lines = table.split('\n');
    const parentLine = lines.findIndex((l) => l.includes(parentId.slice(0, 8)));
    expect(lines[parentLine + 1]).toMatch(new RegExp(`^\\s*└ ${childId.slice(0, 8)}`)); // indented under it (long ids are cut in the table)
    // Once: a later tree change does not deliver it again.
    await settle(300);
    expect((await userTexts()).filter((t) => t.startsWith('[sub-agent '))).toHaveLength(1);
  });

  it('without it, sessions are offered no sub-agent tools', async () => {
    const parts = files();
    const server = await startServer({ port: 0, dataDir, ...parts, engines: [fakeEngine({ startDelayMs: 0 })] });
    cleanups.push(() => server.close());
    const script = { turns: [[{ callTool: { name: 'spawn_session', input: { agent: 'fake', prompt: 'child task' } } }]] };
    const parentId = (await post(server, '/api/sessions', { agent: 'fake', workDir, engineOptions: { script } })).body.sessionId as string;
    await post(server, `/api/sessions/${parentId}/messages`, { text: 'go', localId: 'go-1' });
    const end = Date.now() + 20_000;
    let result: { isError?: boolean } | undefined;
    while (!result) {
      if (Date.now() > end) throw new Error('no tool_result');
      result = (await parts.journal.read(parentId)).find((e) => e.type === 'tool_result')?.payload as { isError?: boolean } | undefined;
      await settle(50);
    }
    expect(JSON.stringify(result)).toMatch(/no host tools|not offered|unknown tool/i);
    expect((await get(server, '/api/sessions')).body.sessions).toHaveLength(1);
  });
});
