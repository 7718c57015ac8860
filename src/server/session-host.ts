/**
 * What the server needs from whatever runs its sessions, kept small: `supervisorHost` adapts a
 * supervisor (`createSupervisor`) to it, and `createSessionHost` makes the default one.
 */
import path from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { EngineFactory } from '../engines/core/engine.js';
import type { ControlMode } from '../events/session-input.js';
import type { TranscriptJournal } from '../runtime/journal/transcript-journal.js';
import { FileStore } from '../runtime/store/file-store.js';
import type { SessionStore } from '../runtime/store/session-store.js';
import { isAseError } from '../errors.js';
import { createSupervisor, type Supervisor } from '../session/supervisor.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';
import { findSessionTree } from '../session/session-tree-file.js';
import type { TreeRecord } from '../session/session-tree-state.js';

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
  });
  return supervisorHost(supervisor, store, { dataDir: options.dataDir });
}

/**
 * A SessionHost on a supervisor you made (its store is where `stored()` looks). With `dataDir`,
 * `tree()` finds the trees kept under it (`sessionTreeFile(dataDir, rootId)`).
 */
export function supervisorHost(supervisor: Supervisor, store: SessionStore, options: { dataDir?: string } = {}): SessionHost {
  const { dataDir } = options;
  return {
    create: (o) =>
      supervisor.create({
        agent: o.agent,
        workDir: o.workDir,
        ...(o.mode && { mode: o.mode }),
        ...(o.engineOptions && { engineOptions: o.engineOptions }),
        ...(o.sessionId && { sessionId: o.sessionId }),
        ...(o.onNotice && { onNotice: o.onNotice }),
        ...(o.inspect && { inspect: o.inspect }),
      }),
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
    ...(dataDir !== undefined && { tree: (sessionId: string) => findSessionTree({ dataDir, store, sessionId }) }),
    shutdown: () => supervisor.shutdown(),
  };
}
