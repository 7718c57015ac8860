/**
 * Finding a session's tree under a data dir (session-tree-file.ts): the climb by stored parents,
 * its ends (a tree that lists the session, no parent, a parent loop, a parent id that is a path),
 * `parentOf` asked before the store, and tree files that are not trees.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import { findSessionTree, MemoryStore, sessionTreeFile } from '../../src/index.js';
import { readSessionTree } from '../../src/session/session-tree-file.js';
import { addChild, newTree } from '../../src/session/session-tree-state.js';
import { session } from '../support/store-conformance.js';

let dataDir: string;
let store: MemoryStore;
beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-tree-file-'));
  store = new MemoryStore();
});
afterEach(() => fs.rm(dataDir, { recursive: true, force: true }));

const stored = (sessionId: string, parentId?: string) => store.save(sessionId, session({ sessionId, ...(parentId !== undefined && { parentId }) }), 0);
const keep = async (record: object, rootId: string) => {
  await fs.mkdir(path.join(dataDir, 'trees'), { recursive: true });
  await fs.writeFile(sessionTreeFile(dataDir, rootId), JSON.stringify(record));
};
const find = (sessionId: string) => findSessionTree({ dataDir, store, sessionId });

describe('findSessionTree', () => {
  it('climbs the stored parents to the tree that lists the session', async () => {
    await stored('root');
    await stored('kid', 'root');
    await stored('grandkid', 'kid');
    await keep(addChild(addChild(newTree('root'), 'root', 'kid'), 'kid', 'grandkid'), 'root');
    expect((await find('grandkid'))?.rootId).toBe('root');
    expect((await find('root'))?.rootId).toBe('root');
  });

  it('parentOf answers before the store (sessions not stored yet); undefined from it falls back to the store', async () => {
    await stored('root');
    await keep(addChild(addChild(newTree('root'), 'root', 'kid'), 'kid', 'grandkid'), 'root');
    expect(await find('grandkid')).toBeUndefined(); // neither kid nor grandkid is stored
    const live: Record<string, string> = { grandkid: 'kid', kid: 'root' };
    expect((await findSessionTree({ dataDir, store, sessionId: 'grandkid', parentOf: (id) => live[id] }))?.rootId).toBe('root');
    await stored('kid', 'root');
    expect((await findSessionTree({ dataDir, store, sessionId: 'grandkid', parentOf: (id) => (id === 'grandkid' ? 'kid' : undefined) }))?.rootId).toBe('root');
  });

  it('a tree that does not list the session, a session of no tree, an unknown one: none', async () => {
    await stored('root');
    await stored('late', 'root'); // created with a parent, never added to its tree
    await stored('alone');
    await keep(newTree('root'), 'root');
    expect(await find('late')).toBeUndefined();
    expect(await find('alone')).toBeUndefined();
    expect(await find('nobody')).toBeUndefined();
  });

  it('ends on a parent loop and on a stored parent id that is a path', async () => {
    await stored('a', 'b');
    await stored('b', 'a');
    await stored('c', '../../etc/passwd');
    expect(await find('a')).toBeUndefined();
    expect(await find('c')).toBeUndefined();
    expect(() => sessionTreeFile(dataDir, '../x')).toThrow(/not a session id/);
  });

  it('a tree file that is not JSON, or not a tree, is STORE_CORRUPT; a missing one is none', async () => {
    const file = path.join(dataDir, 'tree.json');
    expect(await readSessionTree(file)).toBeUndefined();
    for (const text of ['{nope', '{"rootId":"r","focus":"r"}', '{"rootId":"r","focus":"x","nodes":{"r":{"sessionId":"r","state":"active"}}}']) {
      await fs.writeFile(file, text);
      const error = await readSessionTree(file).catch((e: unknown) => e);
      expect(isAseError(error, 'STORE_CORRUPT'), text).toBe(true);
    }
  });
});
