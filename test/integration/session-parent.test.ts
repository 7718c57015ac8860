/**
 * `parentId` on sessions (sub-agent sessions), end to end with the fake engine and the default file
 * store in a temp data dir: set through `create`, stored in the session's own state, kept across a
 * supervisor restart (list, subscribe snapshots, open), fixed at creation, refused when malformed
 * (nothing created); `openSessionTree().spawn()` sets it on the child; `ase sessions` draws the
 * tree and `--json` carries it; `ase show` names the parent (and an orphan's missing one); a state
 * file written before it existed still loads.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSessions } from '../../src/cli/sessions.js';
import { runShow } from '../../src/cli/show.js';
import { createSupervisor, fakeEngine, FileStore, isAseError, openSessionTree, PersistedSessionSchema, type Supervisor, type SupervisedNotice } from '../../src/index.js';

let dir: string;
let dataDir: string;
let workDir: string;
const supervisors: Supervisor[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-parent-'));
  dataDir = path.join(dir, 'data');
  workDir = path.join(dir, 'work');
  await fs.mkdir(workDir);
});
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.shutdown()));
  await fs.rm(dir, { recursive: true, force: true });
});

function supervisor(): Supervisor {
  const created = createSupervisor({ dataDir, engines: [fakeEngine({ startDelayMs: 0 })] });
  supervisors.push(created);
  return created;
}

const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (isAseError(e) ? e.code : String(e)));
const storedState = async (id: string) => PersistedSessionSchema.parse((JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state: unknown }).state);
const storedIds = async () => (await fs.readdir(path.join(dataDir, 'sessions')).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();

/** `ase sessions` in this process, its output captured. */
async function sessionsCommand(json: boolean): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runSessions({ dataDir, json }, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** `ase show ID` in this process, its output captured. */
async function showCommand(sessionId: string, json: boolean): Promise<string> {
  let out = '';
  await runShow({ dataDir, sessionId, json }, { out: (t) => (out += t), err: () => undefined });
  return out;
}

describe('parentId on sessions', () => {
  it('is stored with the child, and list / subscribe / snapshot / open carry it across a supervisor restart', async () => {
    let sup = supervisor();
    const root = await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const child = await sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'root', parentCallId: 'call-1' });
    await child.run('hi');
    expect(child.snapshot()).toMatchObject({ parentId: 'root', parentCallId: 'call-1' });
    expect(root.snapshot()).not.toHaveProperty('parentId');
    const live = await sup.list();
    expect(live.find((i) => i.sessionId === 'child')).toMatchObject({ status: 'running', parentId: 'root', parentCallId: 'call-1' });
    expect(live.find((i) => i.sessionId === 'root')).not.toHaveProperty('parentId');
    const liveSnapshot: SupervisedNotice[] = [];
    sup.subscribe('child', (n) => liveSnapshot.push(n))();
    expect(liveSnapshot[0]).toMatchObject({ type: 'snapshot', session: { parentId: 'root' } });
    await sup.shutdown();
    expect(await storedState('child')).toMatchObject({ sessionId: 'child', parentId: 'root', parentCallId: 'call-1' });

    // Host restart: a new supervisor on the same data dir.
    sup = supervisor();
    const stored = await sup.list();
    expect(stored.find((i) => i.sessionId === 'child')).toMatchObject({ status: 'stored', parentId: 'root', parentCallId: 'call-1' });
    const snapshots: SupervisedNotice[] = [];
    const off = sup.subscribe('child', (n) => snapshots.push(n));
    await expect.poll(() => snapshots.length).toBe(1);
    off();
    expect(snapshots[0]).toMatchObject({ type: 'snapshot', session: { status: 'stored', parentId: 'root' } });
    const reopened = await sup.open('child');
    expect(reopened.snapshot()).toMatchObject({ parentId: 'root', parentCallId: 'call-1' });
    expect((await sup.list()).find((i) => i.sessionId === 'child')).toMatchObject({ status: 'running', parentId: 'root' });
    await sup.stop('child');
    // Continued without naming the parent: the stored one stays.
    const continued = await sup.create({ agent: 'fake', workDir, sessionId: 'child' });
    expect(continued.snapshot().parentId).toBe('root');
    await sup.shutdown();
    expect((await storedState('child')).parentId).toBe('root');
  });

  it.each([
    ['its own id', { sessionId: 'me', parentId: 'me' }, /parentId: a session is not its own parent/],
    ['not a string', { parentId: 42 }, /parentId: /],
    ['empty', { parentId: '' }, /parentId: /],
    ['a path', { parentId: '../etc' }, /parentId: use letters, digits/],
    ['a call without a parent', { parentCallId: 'call-1' }, /parentCallId: needs parentId/],
  ])('a parentId that is %s is refused with INVALID_OPTIONS, nothing created', async (_what, bad, message) => {
    const sup = supervisor();
    const error = await sup.create({ agent: 'fake', workDir, ...(bad as object) }).catch((e: unknown) => e);
    expect(isAseError(error, 'INVALID_OPTIONS')).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(sup.size).toBe(0);
    expect(await storedIds()).toEqual([]);
  });

  it('is no supervisor default: defaults.parentId is refused', () => {
    // Not in the type: a JavaScript caller could still pass it.
    expect(() => createSupervisor({ dataDir, defaults: { parentId: 'p1' } as never })).toThrow(/defaults\.parentId: a parent is given per session/);
  });

  it('is fixed at creation: continuing a stored session under another parent is refused, the state unchanged', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'p1' });
    await sup.create({ agent: 'fake', workDir, sessionId: 'top' });
    await sup.stop('child');
    await sup.stop('top');
    const before = await storedState('child');
    expect(await codeOf(sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'p2' }))).toBe('INVALID_OPTIONS');
    expect(await codeOf(sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'p1', parentCallId: 'other' }))).toBe('INVALID_OPTIONS');
    expect(await codeOf(sup.create({ agent: 'fake', workDir, sessionId: 'top', parentId: 'p1' }))).toBe('INVALID_OPTIONS');
    expect(await storedState('child')).toEqual(before);
    expect(sup.size).toBe(0);
    // Repeating the same parent is fine.
    expect((await sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'p1' })).snapshot().parentId).toBe('p1');
  });

  it('openSessionTree().spawn() records the parent in the child own state; a spawn the tree refuses creates nothing', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: path.join(dir, 'tree.json'), rootId: 'root' });
    const child = await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'kid', parentCallId: 'call-9' });
    const grandchild = await tree.spawn('kid', { agent: 'fake', workDir });
    expect(child.snapshot()).toMatchObject({ parentId: 'root', parentCallId: 'call-9' });
    expect(grandchild.snapshot().parentId).toBe('kid');
    expect(tree.record().nodes[grandchild.id]).toMatchObject({ parentId: 'kid', state: 'active' });
    expect(await codeOf(tree.spawn('nobody', { agent: 'fake', workDir, sessionId: 'stray' }))).toBe('INVALID_INPUT');
    expect(sup.get('stray')).toBeUndefined();
    await sup.shutdown();
    expect(await storedState('kid')).toMatchObject({ parentId: 'root', parentCallId: 'call-9' });
    expect((await storedState(grandchild.id)).parentId).toBe('kid');
    expect(await storedIds()).not.toContain('stray.json');
  });

  it('ase sessions indents children under their parent, marks orphans; --json carries parentId', async () => {
    const sup = supervisor();
    // Created oldest first: newest activity first lists them in reverse, children under their parent.
    for (const [sessionId, parentId] of [['root', undefined], ['kid-a', 'root'], ['grandkid', 'kid-a'], ['kid-b', 'root'], ['stray', 'gone'], ['solo', undefined]] as const) {
      await sup.create({ agent: 'fake', workDir, sessionId, ...(parentId && { parentId }) });
      await sup.stop(sessionId);
      await new Promise((r) => setTimeout(r, 5)); // distinct write times
    }
    const table = await sessionsCommand(false);
    expect(table).toMatchObject({ code: 0, err: '' });
    const [head, ...lines] = table.out.trimEnd().split('\n');
    const ids = lines.map((line) => line.slice(0, head!.indexOf('AGENT')).trimEnd());
    expect(ids).toEqual(['solo', 'stray (orphan of gone)', 'root', '└ kid-b', '└ kid-a', '  └ grandkid']);

    const json = await sessionsCommand(true);
    const rows = json.out.trimEnd().split('\n').map((l) => JSON.parse(l) as { sessionId: string; parentId?: string });
    expect(rows.map((r) => [r.sessionId, r.parentId ?? null])).toEqual([
      ['solo', null],
      ['stray', 'gone'],
      ['kid-b', 'root'],
      ['grandkid', 'kid-a'],
      ['kid-a', 'root'],
      ['root', null],
    ]);
  });

  it('a state file written before parentId existed loads as "no parent" (schema, list, open)', async () => {
    const old = {
      schemaVersion: 1,
      sessionId: 'old',
      agent: 'fake',
      workDir,
      mode: 'remote',
      phase: 'stopped',
      gen: 1,
      queue: [],
      requests: {},
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
      deliveredIds: [],
      updatedAt: 1_700_000_000_000,
    };
    expect(PersistedSessionSchema.parse(old)).not.toHaveProperty('parentId');
    await fs.mkdir(path.join(dataDir, 'sessions'), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'sessions', 'old.json'), JSON.stringify({ version: 3, state: old }));
    expect((await new FileStore({ dir: path.join(dataDir, 'sessions') }).load('old'))?.state).toMatchObject({ sessionId: 'old', phase: 'stopped' });
    const sup = supervisor();
    const [info] = await sup.list();
    expect(info).toMatchObject({ sessionId: 'old', status: 'stored' });
    expect(info).not.toHaveProperty('parentId');
    const session = await sup.open('old');
    expect(session.snapshot()).not.toHaveProperty('parentId');
    await sup.shutdown();
    expect(await storedState('old')).not.toHaveProperty('parentId');
  });

  it('ase show prints the parent (and its call); --json has parentId, parentCallId and whether the parent is stored', async () => {
    const sup = supervisor();
    await (await sup.create({ agent: 'fake', workDir, sessionId: 'root' })).run('hi');
    await (await sup.create({ agent: 'fake', workDir, sessionId: 'child', parentId: 'root', parentCallId: 'call-4' })).run('hi');
    await (await sup.create({ agent: 'fake', workDir, sessionId: 'orphan', parentId: 'gone' })).run('hi');
    await sup.shutdown();

    expect(await showCommand('child', false)).toContain('session  child\nparent   root (call call-4)\nagent    fake in ');
    expect(await showCommand('orphan', false)).toContain('session  orphan\nparent   gone (not stored: an orphan)\n');
    expect(await showCommand('root', false)).not.toMatch(/^parent /m);
    expect(JSON.parse(await showCommand('child', true))).toMatchObject({ sessionId: 'child', parentId: 'root', parentCallId: 'call-4', parentStored: true, state: { parentId: 'root' } });
    expect(JSON.parse(await showCommand('orphan', true))).toMatchObject({ parentId: 'gone', parentCallId: null, parentStored: false });
    expect(JSON.parse(await showCommand('root', true))).toMatchObject({ parentId: null });
    expect(JSON.parse(await showCommand('root', true))).not.toHaveProperty('parentStored');
  });
});
