/**
 * What the server needs from whatever runs its sessions: the supervisor satisfies it, and so does
 * `createSessionHost` below (plain `createSession` calls, one per session), which the server uses
 * when it is given no host. Kept small on purpose, so tests can drive the server with either.
 */
import path from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { EngineFactory } from '../engines/core/engine.js';
import type { ControlMode } from '../events/session-input.js';
import type { TranscriptJournal } from '../runtime/journal/transcript-journal.js';
import { FileStore } from '../runtime/store/file-store.js';
import type { SessionStore } from '../runtime/store/session-store.js';
import { createSession } from '../session/create-session.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';

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
  /** `live`: driven by this server now; `stored`: only on disk. */
  status: string;
  lastActivityAt?: number;
  costUsd?: number;
}

export interface SessionHost {
  create(options: HostCreateOptions): Promise<Session>;
  /** The live session, if this host drives it. */
  get(id: string): Session | undefined;
  /** Continues a stored session (undefined: none stored under that id). */
  open(id: string, options: Pick<HostCreateOptions, 'onNotice' | 'inspect'>): Promise<Session | undefined>;
  list(): Promise<HostSessionInfo[]>;
  /** The stored state of a session that is not live (undefined: unknown). */
  stored(id: string): Promise<{ sessionId: string; agent: string; workDir: string; phase: string } | undefined>;
  stop(id: string): Promise<unknown>;
  shutdown(): Promise<void>;
}

export interface SessionHostOptions {
  dataDir: string;
  /** Shared by every session: the server replays and watches it. */
  journal: TranscriptJournal;
  store?: SessionStore;
  engines?: EngineFactory[];
}

/** A SessionHost on `createSession`: every session in this process, with one store and one journal. */
export function createSessionHost(options: SessionHostOptions): SessionHost {
  const store = options.store ?? new FileStore({ dir: path.join(options.dataDir, 'sessions') });
  const live = new Map<string, Session>();
  const meta = new Map<string, { workDir: string }>();

  const track = (session: Session, workDir: string): Session => {
    live.set(session.id, session);
    meta.set(session.id, { workDir });
    void session.done.finally(() => {
      if (live.get(session.id) === session) live.delete(session.id);
    });
    return session;
  };

  const start = async (o: HostCreateOptions): Promise<Session> => {
    const session = await createSession({
      agent: o.agent,
      workDir: o.workDir,
      dataDir: options.dataDir,
      store,
      journal: options.journal,
      ...(o.mode && { mode: o.mode }),
      ...(o.engineOptions && { engineOptions: o.engineOptions }),
      ...(o.sessionId && { sessionId: o.sessionId }),
      ...(options.engines && { engines: options.engines }),
      ...(o.onNotice && { onNotice: o.onNotice }),
      ...(o.inspect && { inspect: o.inspect }),
    });
    return track(session, path.resolve(o.workDir));
  };

  return {
    create: start,
    get: (id) => live.get(id),
    async open(id, hooks) {
      const running = live.get(id);
      if (running) return running;
      const saved = await store.load(id);
      if (!saved) return undefined;
      return start({ agent: saved.state.agent, workDir: saved.state.workDir, sessionId: id, ...hooks });
    },
    async stored(id) {
      const saved = await store.load(id);
      if (!saved) return undefined;
      return { sessionId: id, agent: saved.state.agent, workDir: saved.state.workDir, phase: saved.state.phase };
    },
    async list() {
      const rows = new Map<string, HostSessionInfo>();
      for (const id of await store.list()) {
        const saved = await store.load(id).catch(() => undefined);
        if (!saved) continue;
        rows.set(id, {
          sessionId: id,
          agent: saved.state.agent,
          workDir: saved.state.workDir,
          phase: saved.state.phase,
          status: 'stored',
          lastActivityAt: saved.state.updatedAt,
          costUsd: saved.state.usage.costUsd,
        });
      }
      for (const [id, session] of live) {
        const snap = session.snapshot();
        rows.set(id, {
          sessionId: id,
          agent: snap.agent,
          workDir: meta.get(id)?.workDir ?? rows.get(id)?.workDir ?? '',
          phase: snap.phase,
          status: 'live',
          ...(rows.get(id)?.lastActivityAt !== undefined && { lastActivityAt: rows.get(id)!.lastActivityAt! }),
          costUsd: snap.usage.costUsd,
        });
      }
      return [...rows.values()];
    },
    async stop(id) {
      return live.get(id)?.stop();
    },
    async shutdown() {
      await Promise.allSettled([...live.values()].map((s) => s.stop()));
    },
  };
}
