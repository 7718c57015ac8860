/**
 * Spawning a session into its parent's session tree, for whoever starts sub-agents on a supervisor
 * whose trees live under a data dir (`sessionTreeFile(dataDir, rootId)`): the server's
 * `POST /api/sessions {parentId}` (supervisorHost) and the agent's own `spawn_session` host tool
 * (sub-agent-tools.ts). Both go through here, so a child is a node of the same tree whoever made it,
 * and changes to one tree made in this process run one after another (tree focus moves too).
 */
import { rm } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { SessionStore } from '../effects/store/session-store.js';
import { AseError } from '../errors.js';
import type { Session } from './session.js';
import { openSessionTree, type SessionTree, type SpawnSessionOptions } from './session-tree.js';
import { findSessionTree, readSessionTree, sessionTreeFile } from './session-tree-file.js';
import { newTree, type TreeRecord } from './session-tree-state.js';
import type { Supervisor } from './supervisor.js';

/** Where a supervisor's trees are found: its data dir (`trees/<rootId>.json`) and its store (the parents). */
export interface TreePlace {
  dataDir: string;
  store: SessionStore;
}

/** Per supervisor, per tree root: the change running or queued last. */
const changes = new WeakMap<Supervisor, Map<string, Promise<unknown>>>();

/** Runs `work` after every change to tree `root` queued before it in this process (for this supervisor). */
export function inSessionTree<T>(supervisor: Supervisor, root: string, work: () => Promise<T>): Promise<T> {
  let queue = changes.get(supervisor);
  if (!queue) changes.set(supervisor, (queue = new Map()));
  const next = (queue.get(root) ?? Promise.resolve()).then(work, work);
  const settled = next.catch(() => undefined);
  queue.set(root, settled);
  void settled.then(() => {
    if (queue.get(root) === settled) queue.delete(root);
  });
  return next;
}

/** Opens the tree rooted at `root` under `dataDir`, runs `change` on it, and closes it. */
export async function withSessionTree<T>(supervisor: Supervisor, dataDir: string, root: string, change: (tree: SessionTree) => Promise<T>): Promise<T> {
  const tree = await openSessionTree({ supervisor, file: sessionTreeFile(dataDir, root), rootId: root });
  try {
    return await change(tree);
  } finally {
    await tree.close();
  }
}

/** The tree under the data dir that holds `sessionId`; a session open in the supervisor names its parent before it is stored. */
export function findTreeOf(supervisor: Supervisor, place: TreePlace, sessionId: string): Promise<TreeRecord | undefined> {
  return findSessionTree({ dataDir: place.dataDir, store: place.store, sessionId, parentOf: (id) => supervisor.get(id)?.snapshot().parentId });
}

/**
 * A session under `parentId`, made a node of the parent's tree:
 * - a tree under the data dir holds the parent: spawned into it (its rules first: a completed
 *   parent is `TREE_CONFLICT` and nothing is created);
 * - the parent is a root session (stored or open, no `parentId`) of no tree: a tree rooted at it
 *   is started (`newTree`: its focus is the root, the session the person drives already) and the
 *   child spawned into it; if the spawn fails the new tree file is removed again;
 * - the parent is a sub-agent session no tree holds: `TREE_CONFLICT`. A tree rooted at its root
 *   would have to list the ancestors in between, which no rule adds (`addChild` needs the parent
 *   in the tree), and would claim the focus is at the root while a client drives the parent;
 * - the parent is no session known here: created with the `parentId` alone, an orphan (a parent
 *   need not exist, as for `createSession`).
 */
export async function spawnIntoTree(supervisor: Supervisor, place: TreePlace, options: SpawnSessionOptions & { parentId: string }): Promise<Session> {
  const { parentId, ...rest } = options;
  const plainCreate = () => supervisor.create({ ...rest, parentId });
  const spawn = (tree: SessionTree) => tree.spawn(parentId, rest);
  const found = await findTreeOf(supervisor, place, parentId);
  // Continuing a session the tree holds already: nothing to add.
  if (found && rest.sessionId !== undefined && found.nodes[rest.sessionId]) return plainCreate();
  if (found) return inSessionTree(supervisor, found.rootId, () => withSessionTree(supervisor, place.dataDir, found.rootId, spawn));
  const live = supervisor.get(parentId);
  const parent = live ? { parentId: live.snapshot().parentId } : (await place.store.load(parentId))?.state;
  if (!parent) return plainCreate();
  if (parent.parentId !== undefined) {
    throw new AseError('TREE_CONFLICT', `session tree: "${parentId}" is a sub-agent session of "${parent.parentId}" that no session tree under this data dir holds: spawn under a session of a tree, or under a root session`, {
      details: { sessionId: parentId, parentId: parent.parentId },
    });
  }
  return inSessionTree(supervisor, parentId, async () => {
    const file = sessionTreeFile(place.dataDir, parentId);
    const existed = (await readSessionTree(file)) !== undefined;
    try {
      return await withSessionTree(supervisor, place.dataDir, parentId, spawn);
    } catch (error) {
      // A refused or failed first spawn leaves no tree behind (unless another change came meanwhile).
      if (!existed && isDeepStrictEqual(await readSessionTree(file).catch(() => undefined), newTree(parentId))) await rm(file, { force: true });
      throw error;
    }
  });
}

/**
 * Runs `change` on the session tree under the supervisor's data dir that holds `sessionId`, after
 * the changes to that tree this process queued before it (a sub-agent's completion, a focus move of
 * the server's): what a host that moves the focus itself (`ase run --mode local --sub-agents`) uses.
 * Resolves with undefined when no tree holds the session.
 */
export async function changeTreeOf<T>(supervisor: Supervisor, sessionId: string, change: (tree: SessionTree) => Promise<T>): Promise<T | undefined> {
  const found = await findTreeOf(supervisor, { dataDir: supervisor.dataDir, store: supervisor.store }, sessionId);
  if (!found) return undefined;
  return inSessionTree(supervisor, found.rootId, () => withSessionTree(supervisor, supervisor.dataDir, found.rootId, change));
}
