/**
 * Remote clients and sub-agent sessions over real HTTP on loopback (fake engine, file store and
 * journal in a temp data dir): `GET /api/sessions` carries `parentId`; `GET /api/sessions/:id/tree`
 * answers the tree that holds a session (kept at `sessionTreeFile(dataDir, rootId)`) with its
 * focus, so a client follows `enter` / `exit` of a tree run in the server's process; a server
 * started later on the data dir finds a tree from any of its sessions by their stored parents.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSupervisor, fakeEngine, FileJournal, FileStore, openSessionTree, sessionTreeFile, type Supervisor } from '../../src/index.js';
import { startServer, supervisorHost, type RunningServer } from '../../src/server.js';

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

const files = () => ({ store: new FileStore({ dir: path.join(dataDir, 'sessions') }), journal: new FileJournal({ dir: path.join(dataDir, 'transcripts') }) });

function supervisor(parts = files()): Supervisor {
  const created = createSupervisor({ dataDir, ...parts, engines: [fakeEngine({ startDelayMs: 0 })] });
  cleanups.push(() => created.shutdown());
  return created;
}

async function get(server: RunningServer, route: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${server.token}` } });
  return { status: response.status, body: await response.json() };
}

describe('session trees over HTTP', () => {
  it('a client follows the focus of a tree run in the server process; sessions list their parent', async () => {
    const parts = files();
    const sup = supervisor(parts);
    const server = await startServer({ port: 0, dataDir, journal: parts.journal, host: supervisorHost(sup, parts.store, { dataDir }) });
    cleanups.push(() => server.close());
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
});
