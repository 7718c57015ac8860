/**
 * The session tree on a supervisor (fake engine, file store and journal in a temp data dir):
 * spawn, enter, exit, complete; the parent is never stopped or forked while suspended (same
 * session, same resume token, its agent not restarted); a child's result reaches the parent
 * exactly once, also when the host dies between the send and noting it; the tree, states and focus
 * survive a host restart. Two handles on one file build on each other's changes (the file is the
 * truth); `exit(from)` exits only that session; a closed handle refuses changes.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSupervisor, fakeEngine, FileJournal, isAseError, openSessionTree, type Supervisor } from '../../src/index.js';
import { GatedStore } from '../support/gated-store.js';
import { writeFileDurable } from '../../src/effects/fs-durable.js';
import { typedResultDelivery } from '../../src/session/typed-result.js';

let dir: string;
let dataDir: string;
let workDir: string;
let treeFile: string;
const supervisors: Supervisor[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-tree-'));
  dataDir = path.join(dir, 'data');
  workDir = path.join(dir, 'work');
  treeFile = path.join(dir, 'tree.json');
  await fs.mkdir(workDir);
});
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.shutdown()));
  await fs.rm(dir, { recursive: true, force: true });
});

function supervisor(): Supervisor {
  const created = createSupervisor({ dataDir, engines: [fakeEngine()] });
  supervisors.push(created);
  return created;
}

const userMessages = async (sessionId: string) =>
  (await new FileJournal({ dir: path.join(dataDir, 'transcripts') }).read(sessionId)).filter((e) => e.type === 'user_message').map((e) => (e.payload as { localId: string; text: string }));

describe('session tree', () => {
  it('enter/exit moves the focus without stopping or forking the parent; the result is delivered once', async () => {
    const sup = supervisor();
    const root = await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    await root.run('plan', { localId: 'r1' });
    const token = root.snapshot().resumeToken;
    const tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    const child = await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'child', parentCallId: 'call-7' });
    expect(tree.focus).toBe('root');

    const entered = await tree.enter('child');
    expect(entered).toBe(child);
    expect(tree.focus).toBe('child');
    expect(tree.record().nodes['root']).toMatchObject({ state: 'suspended', resumeTokenAtSuspend: token });
    expect(sup.get('root')).toBe(root); // still open: not stopped
    expect(root.snapshot().gen).toBe(1); // its agent was not restarted
    await child.run('do the part', { localId: 'c1' });

    const back = await tree.exit();
    expect(back).toBe(root);
    expect(tree.focus).toBe('root');
    expect(root.snapshot().resumeToken).toBe(token);
    expect(tree.record().nodes['root']!.state).toBe('active');

    await tree.complete('child');
    await tree.complete('child'); // a second completion changes nothing and sends nothing
    const rec = tree.record();
    expect(rec.nodes['child']).toMatchObject({ state: 'completed', result: 'echo: do the part', delivered: true });
    await sup.shutdown();
    const delivered = (await userMessages('root')).filter((m) => m.localId === 'subagent-result-child');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.text).toBe('[sub-agent child (call call-7) finished]\necho: do the part');
  });

  it('complete({ deliver }): the host delivers the result its own way, noted once it resolves; one that fails leaves it for the next opening, which sends it', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'a', parentCallId: 'call-1' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'b' });
    const typed: { parent: string; localId: string; text: string }[] = [];
    await tree.complete('a', 'typed result', { deliver: async (parent, message) => void typed.push({ parent: parent.id, ...message }) });
    expect(typed).toEqual([{ parent: 'root', localId: 'subagent-result-a', text: '[sub-agent a (call call-1) finished]\ntyped result' }]);
    expect(tree.record().nodes['a']).toMatchObject({ state: 'completed', delivered: true });
    // Delivered the host's way: nothing was sent to the parent as well.
    expect(await userMessages('root')).toEqual([]);

    // A delivery that fails (the UI never took it): completed, not delivered; the error reaches the caller.
    const failed = tree.complete('b', 'lost?', { deliver: async () => { throw new Error('the terminal UI did not take it'); } });
    await expect(failed).rejects.toThrow('the terminal UI did not take it');
    expect(tree.record().nodes['b']).toMatchObject({ state: 'completed', result: 'lost?' });
    expect(tree.record().nodes['b']!.delivered).toBeUndefined();
    await tree.close();
    // The next opening delivers it the default way (sent, once), and only it.
    const reopened = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    expect(reopened.record().nodes['b']).toMatchObject({ delivered: true });
    await sup.shutdown();
    expect((await userMessages('root')).map((m) => m.localId)).toEqual(['subagent-result-b']);
    expect(typed).toHaveLength(1);
  });

  it("the desk's typed delivery sends the result to a parent not in local mode (no terminal UI to type into), once", async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'a' });
    await tree.complete('a', 'sent instead', { deliver: typedResultDelivery() });
    expect(tree.record().nodes['a']).toMatchObject({ state: 'completed', delivered: true });
    await sup.shutdown();
    expect(await userMessages('root')).toEqual([{ localId: 'subagent-result-a', text: '[sub-agent a finished]\nsent instead' }]);
  });

  it('refuses what would break the tree: entering a non-child, exiting the root, completing the focused child', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'a' });
    await tree.spawn('a', { agent: 'fake', workDir, sessionId: 'a1' });
    const code = (p: Promise<unknown>) => p.then(() => 'ok', (e) => (isAseError(e) ? e.code : String(e)));
    expect(await code(tree.enter('a1'))).toBe('TREE_CONFLICT'); // a grandchild: enter 'a' first
    expect(await code(tree.exit())).toBe('TREE_CONFLICT');
    expect(await code(tree.enter('nobody'))).toBe('INVALID_INPUT');
    await tree.enter('a');
    expect(await code(tree.complete('a'))).toBe('TREE_CONFLICT');
    expect(tree.focus).toBe('a');
  });

  it('the tree, states and focus survive a host restart; a result sent but not noted is not sent again', async () => {
    let sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    let tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    const child = await tree.spawn('root', { agent: 'fake', workDir, sessionId: 'child' });
    await tree.enter('child');
    await child.run('work', { localId: 'c1' });
    await sup.shutdown();

    // Host restart: a new supervisor on the same data dir, the same tree file.
    sup = supervisor();
    tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    expect(tree.focus).toBe('child');
    expect(tree.record().nodes['root']!.state).toBe('suspended');
    const parent = await tree.exit();
    expect(parent.id).toBe('root');
    await tree.complete('child', 'the result');
    await sup.shutdown();

    // A host that died after the send and before noting it: the record says not delivered.
    const record = JSON.parse(await fs.readFile(treeFile, 'utf8'));
    record.nodes.child.delivered = false;
    await writeFileDurable(treeFile, JSON.stringify(record));
    sup = supervisor();
    tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    expect(tree.record().nodes['child']!.delivered).toBe(true);
    await sup.shutdown();
    expect((await userMessages('root')).filter((m) => m.localId === 'subagent-result-child')).toHaveLength(1);
  });

  it('two handles on one file build on each other (each change reads the file first); exit(from) exits only that focus; close() refuses more', async () => {
    const sup = supervisor();
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const first = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    await first.spawn('root', { agent: 'fake', workDir, sessionId: 'a' });
    const second = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    await second.spawn('root', { agent: 'fake', workDir, sessionId: 'b' });
    await first.enter('b'); // 'b' was added by the other handle
    expect(first.record()).toMatchObject({ focus: 'b', nodes: { a: { state: 'active' }, b: { state: 'active' }, root: { state: 'suspended' } } });
    const code = (p: Promise<unknown>) => p.then(() => 'ok', (e) => (isAseError(e) ? e.code : String(e)));
    expect(await code(second.exit('a'))).toBe('TREE_CONFLICT'); // 'a' is not the focus (the file says 'b')
    expect(await code(second.exit('nobody'))).toBe('INVALID_INPUT');
    expect((await second.exit('b')).id).toBe('root');
    expect(JSON.parse(await fs.readFile(treeFile, 'utf8'))).toMatchObject({ focus: 'root', nodes: { root: { state: 'active' } } });
    await first.complete('a', 'first result'); // on the file as the second left it: focus back at the root
    expect(second.record().nodes['a']?.state).toBe('active'); // a handle's copy is as of its last change...
    await second.spawn('root', { agent: 'fake', workDir, sessionId: 'c' }); // ...and the next change reads the file
    expect(second.record().nodes).toMatchObject({ a: { state: 'completed', result: 'first result', delivered: true }, c: { state: 'active' } });
    await first.close();
    expect(await code(first.enter('c'))).toBe('SESSION_STOPPED');
    await second.close();
  });

  it('spawn resolves only once the child is stored: the tree never names a session a crash would lose', async () => {
    const store = new GatedStore('child');
    const sup = createSupervisor({ dataDir, engines: [fakeEngine()], store });
    supervisors.push(sup);
    await sup.create({ agent: 'fake', workDir, sessionId: 'root' });
    const tree = await openSessionTree({ supervisor: sup, file: treeFile, rootId: 'root' });
    let spawned = false;
    const spawning = tree.spawn('root', { agent: 'fake', workDir, sessionId: 'child' }).then((s) => {
      spawned = true;
      return s;
    });
    for (let i = 0; i < 400 && store.saves === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(store.saves).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(spawned).toBe(false);
    expect(tree.record().nodes['child']).toBeUndefined();
    store.open();
    await spawning;
    expect((await store.load('child'))?.state).toMatchObject({ sessionId: 'child', parentId: 'root' });
    expect(tree.record().nodes['child']).toBeDefined();
  });
});
