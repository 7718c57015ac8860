/**
 * Where session trees are kept, and how one is found from any of its sessions. A tree's file may be
 * anywhere (`openSessionTree({file})`), but one kept at `sessionTreeFile(dataDir, rootId)` (the
 * data dir's `trees/<rootId>.json`) can be found by others on that data dir, e.g. `ase serve`'s
 * `GET /api/sessions/:id/tree`, which shows remote clients the tree's focus. The way up is the
 * sessions' own stored `parentId`, so no index has to be kept in step.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AseError } from '../errors.js';
import type { SessionStore } from '../effects/store/session-store.js';
import { SessionIdSchema } from './options.js';
import { TreeRecordSchema, type TreeRecord } from './session-tree-state.js';

/** The file a tree rooted at `rootId` is kept in under a data dir, where `findSessionTree` looks. */
export function sessionTreeFile(dataDir: string, rootId: string): string {
  if (!isSessionId(rootId)) throw new AseError('INVALID_INPUT', `sessionTreeFile: not a session id: ${JSON.stringify(rootId)}`);
  return path.join(path.resolve(dataDir), 'trees', `${rootId}.json`);
}

/** Ids name files here: only what a session id may be, never a path. */
const isSessionId = (id: string) => SessionIdSchema.safeParse(id).success;

/** The tree record in `file`; undefined when there is none. Rejects with `STORE_CORRUPT` when it cannot be read or is not a tree. */
export async function readSessionTree(file: string): Promise<TreeRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AseError('STORE_CORRUPT', `session tree ${file} cannot be read: ${String(error)}`, { cause: error });
  }
  let parsed: ReturnType<typeof TreeRecordSchema.safeParse>;
  try {
    parsed = TreeRecordSchema.safeParse(JSON.parse(text));
  } catch (error) {
    throw new AseError('STORE_CORRUPT', `session tree ${file} is not JSON: ${String(error)}`, { cause: error });
  }
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'tree'}: ${i.message}`).join('; ');
    throw new AseError('STORE_CORRUPT', `session tree ${file} is not a session tree: ${problems}`);
  }
  return parsed.data;
}

/** Ancestors `findSessionTree` climbs at most: parent links are stored data, and may loop. */
const MAX_DEPTH = 64;

/**
 * The tree under `dataDir` that holds `sessionId`: the session's own tree file, or the nearest
 * ancestor's (climbing the stored `parentId`s) whose tree lists it. Undefined when none does
 * (a session of no tree, or one whose tree is kept elsewhere). A corrupt tree file rejects with
 * `STORE_CORRUPT`. `parentOf` answers first where it knows (a session just created may not be
 * stored yet: its live snapshot names its parent); undefined from it falls back to the store.
 */
export async function findSessionTree(options: {
  dataDir: string;
  store: SessionStore;
  sessionId: string;
  parentOf?: (sessionId: string) => string | undefined;
}): Promise<TreeRecord | undefined> {
  const seen = new Set<string>();
  let id: string | undefined = options.sessionId;
  // A stored parent id is data: one that is no session id (a hand-edited file) ends the climb.
  while (id !== undefined && isSessionId(id) && !seen.has(id) && seen.size < MAX_DEPTH) {
    seen.add(id);
    const record = await readSessionTree(sessionTreeFile(options.dataDir, id));
    if (record?.nodes[options.sessionId]) return record;
    id = options.parentOf?.(id) ?? (await options.store.load(id))?.state.parentId;
  }
  return undefined;
}
