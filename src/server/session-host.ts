/**
 * What the server needs from whatever runs its sessions, kept small: `supervisorHost` adapts a
 * supervisor (`createSupervisor`) to it, and `createSessionHost` makes the default one.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { InspectionEvent } from 'xstate';
import type { EngineFactory } from '../engines/core/engine.js';
import type { ControlMode } from '../events/session-input.js';
import type { TranscriptJournal } from '../runtime/journal/transcript-journal.js';
import { FileStore } from '../runtime/store/file-store.js';
import type { SessionStore } from '../runtime/store/session-store.js';
import { AseError, isAseError } from '../errors.js';
import { createSupervisor, type Supervisor } from '../session/supervisor.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';
import { openSessionTree, type SessionTree, type SpawnSessionOptions } from '../session/session-tree.js';
import { findSessionTree, readSessionTree, sessionTreeFile } from '../session/session-tree-file.js';
import { newTree, type TreeRecord } from '../session/session-tree-state.js';
import { watchSessionTrees, type SessionTreeWatch } from '../session/session-tree-watch.js';

/** What `POST /api/sessions` asks for. */
export interface HostCreateOptions {
  agent: string;
  workDir: string;
  mode?: ControlMode;
  engineOptions?: Record<string, unknown>;
  /** Receives every notice from the start (the server's fan-out). */
  onNotice?: (notice: SessionNotice) => void;
  /** The SessionActor's inspection hook (the inspector). */
  inspect?: (event: InspectionEvent) => void;
  /** Continue this stored session instead of starting a new one. */
  sessionId?: string;
  /**
   * The session that started this one (a sub-agent session), stored with it. `supervisorHost` with
   * a `dataDir` also makes it a node of the parent's tree (or refuses with `TREE_CONFLICT`).
   */
  parentId?: string;
  /** The parent's tool call that started it; needs `parentId`. */
  parentCallId?: string;
}

/** One row of `GET /api/sessions`. */
export interface HostSessionInfo {
  sessionId: string;
  agent: string;
  workDir: string;
  phase: string;
  /** The supervisor's: `running` (open here), `hibernated` (open, agent stopped until the next send), `stored` (only on disk). */
  status: string;
  lastActivityAt?: number;
  costUsd?: number;
  /** The session that started this one (a sub-agent session). */
  parentId?: string;
}

export interface SessionHost {
  /**
   * Starts a session. With a `parentId`, a host that knows trees (`tree`) creates it through the
   * parent's tree (`openSessionTree().spawn`), so it is a node of it: see `supervisorHost`.
   */
  create(options: HostCreateOptions): Promise<Session>;
  /** The live session, if this host drives it. */
  get(id: string): Session | undefined;
  /** Continues a stored session (undefined: none stored under that id). */
  open(id: string, options: Pick<HostCreateOptions, 'onNotice' | 'inspect'>): Promise<Session | undefined>;
  list(): Promise<HostSessionInfo[]>;
  /** The stored state of a session that is not live (undefined: unknown). */
  stored(id: string): Promise<{ sessionId: string; agent: string; workDir: string; phase: string; parentId?: string } | undefined>;
  stop(id: string): Promise<unknown>;
  /**
   * The session tree (`openSessionTree`) that holds this session, if the host can find one
   * (`GET /api/sessions/:id/tree`: remote clients follow its focus). Optional: a host without it
   * knows no trees.
   */
  tree?(id: string): Promise<TreeRecord | undefined>;
  /**
   * Moves the focus of the tree that holds `id` (`openSessionTree`, one change at a time per tree):
   * `enter` makes `id` the focus (a sub-agent of the focused session), `exit` returns the focus
   * from `id` (which must be the focus) to its parent. Resolves with the tree after the move,
   * undefined when no tree holds `id`; a move the tree's rules forbid rejects with `TREE_CONFLICT`.
   */
  moveTreeFocus?(id: string, move: 'enter' | 'exit'): Promise<TreeRecord | undefined>;
  /**
   * Calls `onChange` (debounced) when a tree the host can find may have changed, whoever changed
   * it; the caller re-reads (`tree()`) and compares. Close what it returns.
   */
  watchTrees?(onChange: () => void): SessionTreeWatch;
  shutdown(): Promise<void>;
}

export interface SessionHostOptions {
  dataDir: string;
  /** Shared by every session: the server replays and watches it. */
  journal: TranscriptJournal;
  store?: SessionStore;
  engines?: EngineFactory[];
  /** Open sessions allowed at once (`SUPERVISOR_FULL` beyond). */
  maxSessions?: number;
  /** Idle sessions stop their agent after this long (the supervisor's hibernation); 0: never. */
  hibernateAfterMs?: number;
  /** The agent executable per engine name for new sessions (`ase serve --bin claude=PATH`; the supervisor's `bins`). */
  bins?: Readonly<Record<string, string>>;
}

/** `POST /api/sessions`'s options as `SessionTree.spawn` takes them (the parent is spawn's own argument). */
function spawnOptions(o: Omit<HostCreateOptions, 'parentId'>): SpawnSessionOptions {
  return {
    agent: o.agent,
    workDir: o.workDir,
    ...(o.mode && { mode: o.mode }),
    ...(o.engineOptions && { engineOptions: o.engineOptions }),
    ...(o.sessionId && { sessionId: o.sessionId }),
    ...(o.parentCallId !== undefined && { parentCallId: o.parentCallId }),
    ...(o.onNotice && { onNotice: o.onNotice }),
    ...(o.inspect && { inspect: o.inspect }),
  };
}

/**
 * The default host: a supervisor (`createSupervisor`) over one store and the server's journal. The
 * server passes its hooks (notices, inspection) when it creates or continues a session.
 */
export function createSessionHost(options: SessionHostOptions): SessionHost {
  const store = options.store ?? new FileStore({ dir: path.join(options.dataDir, 'sessions') });
  const supervisor = createSupervisor({
    dataDir: options.dataDir,
    store,
    journal: options.journal,
    ...(options.engines && { engines: options.engines }),
    ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
    ...(options.hibernateAfterMs !== undefined && { hibernateAfterMs: options.hibernateAfterMs }),
    ...(options.bins && { bins: options.bins }),
  });
  return supervisorHost(supervisor, store, { dataDir: options.dataDir });
}

/**
 * A SessionHost on a supervisor you made (its store is where `stored()` looks). With `dataDir`,
 * `tree()` finds the trees kept under it (`sessionTreeFile(dataDir, rootId)`), and `create()` with
 * a `parentId` spawns into the parent's tree (`spawnIntoTree`).
 */
export function supervisorHost(supervisor: Supervisor, store: SessionStore, options: { dataDir?: string } = {}): SessionHost {
  const { dataDir } = options;
  /** A tree under the data dir that holds `sessionId`; a session open here names its parent before it is stored. */
  const findTree = (sessionId: string) => findSessionTree({ dataDir: dataDir!, store, sessionId, parentOf: (id) => supervisor.get(id)?.snapshot().parentId });
  /** Per tree root: the changes made here (moves, spawns) run one after another. */
  const treeChanges = new Map<string, Promise<unknown>>();
  const inTree = <T>(root: string, work: () => Promise<T>): Promise<T> => {
    const next = (treeChanges.get(root) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => undefined);
    treeChanges.set(root, settled);
    void settled.then(() => {
      if (treeChanges.get(root) === settled) treeChanges.delete(root);
    });
    return next;
  };
  const withTree = async <T>(root: string, change: (tree: SessionTree) => Promise<T>): Promise<T> => {
    const tree = await openSessionTree({ supervisor, file: sessionTreeFile(dataDir!, root), rootId: root });
    try {
      return await change(tree);
    } finally {
      await tree.close();
    }
  };
  const moveTreeFocus = (root: string, sessionId: string, move: 'enter' | 'exit'): Promise<TreeRecord> =>
    inTree(root, () =>
      withTree(root, async (tree) => {
        if (move === 'enter') await tree.enter(sessionId);
        else await tree.exit(sessionId);
        return tree.record();
      }),
    );
  const plainCreate = (o: HostCreateOptions) => supervisor.create({ ...spawnOptions(o), ...(o.parentId !== undefined && { parentId: o.parentId }) });
  /**
   * A session under `parentId`, made a node of the parent's tree:
   * - a tree under the data dir holds the parent: spawned into it (its rules first: a completed
   *   parent is `TREE_CONFLICT` and nothing is created);
   * - the parent is a root session (stored or open here, no `parentId`) of no tree: a tree rooted at
   *   it is started (`newTree`: its focus is the root, the session the person drives already) and
   *   the child spawned into it; if the spawn fails the new tree file is removed again;
   * - the parent is a sub-agent session no tree holds: `TREE_CONFLICT`. A tree rooted at its root
   *   would have to list the ancestors in between, which no rule adds (`addChild` needs the parent
   *   in the tree), and would claim the focus is at the root while a client drives the parent;
   * - the parent is no session known here: created with the `parentId` alone, an orphan (a
   *   parent need not exist, as for `createSession`).
   */
  const spawnIntoTree = async (o: HostCreateOptions & { parentId: string }): Promise<Session> => {
    const found = await findTree(o.parentId);
    const { parentId, ...rest } = o;
    const spawn = (tree: SessionTree) => tree.spawn(parentId, spawnOptions(rest));
    // Continuing a session the tree holds already: nothing to add.
    if (found && o.sessionId !== undefined && found.nodes[o.sessionId]) return plainCreate(o);
    if (found) return inTree(found.rootId, () => withTree(found.rootId, spawn));
    const live = supervisor.get(parentId);
    const parent = live ? { parentId: live.snapshot().parentId } : (await store.load(parentId))?.state;
    if (!parent) return plainCreate(o);
    if (parent.parentId !== undefined) {
      throw new AseError('TREE_CONFLICT', `session tree: "${parentId}" is a sub-agent session of "${parent.parentId}" that no session tree under this data dir holds: spawn under a session of a tree, or under a root session`, {
        details: { sessionId: parentId, parentId: parent.parentId },
      });
    }
    return inTree(parentId, async () => {
      const file = sessionTreeFile(dataDir!, parentId);
      const existed = (await readSessionTree(file)) !== undefined;
      try {
        return await withTree(parentId, spawn);
      } catch (error) {
        // A refused or failed first spawn leaves no tree behind (unless another change came meanwhile).
        if (!existed && isDeepStrictEqual(await readSessionTree(file).catch(() => undefined), newTree(parentId))) await rm(file, { force: true });
        throw error;
      }
    });
  };
  return {
    create: (o) => (dataDir !== undefined && o.parentId !== undefined ? spawnIntoTree({ ...o, parentId: o.parentId }) : plainCreate(o)),
    get: (id) => supervisor.get(id),
    async open(id, hooks) {
      try {
        return await supervisor.open(id, { ...(hooks.onNotice && { onNotice: hooks.onNotice }), ...(hooks.inspect && { inspect: hooks.inspect }) });
      } catch (error) {
        if (isAseError(error, 'SESSION_NOT_FOUND')) return undefined;
        throw error;
      }
    },
    async stored(id) {
      const saved = await store.load(id);
      if (!saved) return undefined;
      const { agent, workDir, phase, parentId } = saved.state;
      return { sessionId: id, agent, workDir, phase, ...(parentId !== undefined && { parentId }) };
    },
    async list() {
      return (await supervisor.list()).map((info) => ({
        sessionId: info.sessionId,
        agent: info.agent,
        workDir: info.workDir,
        phase: info.phase,
        status: info.status,
        lastActivityAt: info.lastActivityAt,
        costUsd: info.costUsd,
        ...(info.parentId !== undefined && { parentId: info.parentId }),
      }));
    },
    stop: (id) => supervisor.stop(id),
    ...(dataDir !== undefined && {
      tree: findTree,
      async moveTreeFocus(sessionId: string, move: 'enter' | 'exit') {
        const found = await findTree(sessionId);
        return found && moveTreeFocus(found.rootId, sessionId, move);
      },
      watchTrees: (onChange: () => void) => watchSessionTrees({ dataDir, onChange }),
    }),
    shutdown: () => supervisor.shutdown(),
  };
}
