/**
 * What the server needs from whatever runs its sessions, kept small: `supervisorHost` adapts a
 * supervisor (`createSupervisor`) to it, and `createSessionHost` makes the default one.
 */
import path from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { EngineFactory } from '../engines/core/engine.js';
import type { ResumeCheck } from '../engines/core/resume-check.js';
import type { ControlMode } from '../events/session-input.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import { FileStore } from '../effects/store/file-store.js';
import type { SessionOwnerInfo, SessionStore } from '../effects/store/session-store.js';
import { AseError, isAseError } from '../errors.js';
import { createSupervisor, type Supervisor } from '../session/supervisor.js';
import { subAgentTools } from '../session/sub-agent-tools.js';
import { typedResultDelivery } from '../session/typed-result.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';
import type { ResultDelivery, SpawnSessionOptions } from '../session/session-tree.js';
import type { TreeRecord } from '../session/session-tree-state.js';
import { findTreeOf, inSessionTree, spawnIntoTree, withSessionTree } from '../session/tree-spawn.js';
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
  /** Who holds the session's lease, when another host does (a store shared by hosts): status `elsewhere`, or `orphaned` once its lease expired. */
  owner?: SessionOwnerInfo;
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
   * For a stop of a session stored in a phase without an agent (`stopped`, `hibernated`, `failed`)
   * and open nowhere here: proves that no live process holds it either, by taking its lease (the
   * next fence) and giving it up at once, so `stopped` is never said of a session another process
   * still drives. Rejects with `SESSION_OWNED` while one does (nothing changes); resolves with the
   * stored phase, undefined when none is stored. Optional: a host without it answers from the
   * stored phase alone.
   */
  settleStored?(id: string): Promise<{ phase: string } | undefined>;
  /**
   * Whether a stored session could continue on this host (`Supervisor.checkResume`): its work
   * directory and, where its engine can tell, the agent's own session files are here. Asked before
   * adopting a session another host ran; undefined when none is stored under that id. Optional: a
   * host without it is checked for the work directory only.
   */
  checkResume?(id: string): Promise<ResumeCheck | undefined>;
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
   * Completes the sub-agent `id` in the tree that holds it (it must not have the focus: exit first)
   * with `result`, and delivers it to the parent once, by `deliver` (default: sent as a queued
   * message). Resolves with the tree after it, undefined when no tree holds `id`.
   */
  completeTreeChild?(id: string, result: string, deliver?: ResultDelivery): Promise<TreeRecord | undefined>;
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
  /** Each session's ownership lease, in ms (the supervisor's `leaseTtlMs`). */
  leaseTtlMs?: number;
  /**
   * Offer every session `spawn_session` and `session_status` (`subAgentTools`): the agent starts
   * sub-agents itself, in its session tree; a child's answer reaches its parent once, typed into the
   * parent's terminal UI when a desk has it attached in local mode, else sent (`ase serve --sub-agents`).
   */
  subAgents?: boolean;
}

/** The lease `settleStored` takes for a moment, in ms. */
const SETTLE_LEASE_MS = 5_000;

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
  let supervisor!: Supervisor;
  const tools = options.subAgents
    ? subAgentTools({
        get supervisor() {
          return supervisor;
        },
        deliverResult: typedResultDelivery(),
      })
    : undefined;
  supervisor = createSupervisor({
    ...(tools && { defaults: { tools } }),
    dataDir: options.dataDir,
    store,
    journal: options.journal,
    ...(options.engines && { engines: options.engines }),
    ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
    ...(options.hibernateAfterMs !== undefined && { hibernateAfterMs: options.hibernateAfterMs }),
    ...(options.bins && { bins: options.bins }),
    ...(options.leaseTtlMs !== undefined && { leaseTtlMs: options.leaseTtlMs }),
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
  const place = { dataDir: dataDir!, store };
  const findTree = (sessionId: string) => findTreeOf(supervisor, place, sessionId);
  const moveTreeFocus = (root: string, sessionId: string, move: 'enter' | 'exit'): Promise<TreeRecord> =>
    inSessionTree(supervisor, root, () =>
      withSessionTree(supervisor, dataDir!, root, async (tree) => {
        if (move === 'enter') await tree.enter(sessionId);
        else await tree.exit(sessionId);
        return tree.record();
      }),
    );
  const plainCreate = (o: HostCreateOptions) => supervisor.create({ ...spawnOptions(o), ...(o.parentId !== undefined && { parentId: o.parentId }) });
  /** A session under `parentId`, made a node of the parent's tree (tree-spawn.ts has the rules). */
  const spawnIntoParentTree = (o: HostCreateOptions & { parentId: string }): Promise<Session> => {
    const { parentId, ...rest } = o;
    return spawnIntoTree(supervisor, place, { ...spawnOptions(rest), parentId });
  };
  return {
    create: (o) => (dataDir !== undefined && o.parentId !== undefined ? spawnIntoParentTree({ ...o, parentId: o.parentId }) : plainCreate(o)),
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
      const infos = await supervisor.list();
      // A store shared by several hosts names who holds the sessions this host does not run.
      const notHere = infos.filter((info) => info.status === 'stored').map((info) => info.sessionId);
      const owners = notHere.length > 0 && store.owners ? await store.owners(notHere) : new Map<string, SessionOwnerInfo>();
      return infos.map((info) => {
        const owner = owners.get(info.sessionId);
        return {
          sessionId: info.sessionId,
          agent: info.agent,
          workDir: info.workDir,
          phase: info.phase,
          status: owner ? (owner.live ? 'elsewhere' : 'orphaned') : info.status,
          lastActivityAt: info.lastActivityAt,
          costUsd: info.costUsd,
          ...(info.parentId !== undefined && { parentId: info.parentId }),
          ...(owner && { owner }),
        };
      });
    },
    stop: (id) => supervisor.stop(id),
    async settleStored(id) {
      // Short: it is given up at once; a host that dies between the two leaves it for seconds only.
      const lease = await store.acquire(id, { ttlMs: SETTLE_LEASE_MS });
      try {
        const saved = await store.load(id);
        return saved && { phase: saved.state.phase };
      } finally {
        await store.release(lease).catch(() => undefined);
      }
    },
    checkResume: (id) => supervisor.checkResume(id),
    ...(dataDir !== undefined && {
      tree: findTree,
      async moveTreeFocus(sessionId: string, move: 'enter' | 'exit') {
        const found = await findTree(sessionId);
        return found && moveTreeFocus(found.rootId, sessionId, move);
      },
      async completeTreeChild(sessionId: string, result: string, deliver?: ResultDelivery) {
        const found = await findTree(sessionId);
        if (!found) return undefined;
        return inSessionTree(supervisor, found.rootId, () =>
          withSessionTree(supervisor, dataDir, found.rootId, async (tree) => {
            await tree.complete(sessionId, result, { ...(deliver && { deliver }) });
            return tree.record();
          }),
        );
      },
      watchTrees: (onChange: () => void) => watchSessionTrees({ dataDir, onChange }),
    }),
    shutdown: () => supervisor.shutdown(),
  };
}
