/**
 * `createSupervisor()`: many sessions in one host, over one store, one journal and one engine
 * registry. It opens sessions (new or stored) through `createSession`, keeps the open ones by id,
 * lists open and stored ones alike, fans every session's notices out to per-session and
 * all-session subscribers (each starting with a snapshot, so a late client knows what runs), and
 * stops them all in parallel on `shutdown()`. A limit (`maxSessions`) refuses more with
 * `SUPERVISOR_FULL`. Idle sessions hibernate (`hibernateAfterMs`): the statechart stops their agent
 * and the next send resumes it.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { defaultRegistry } from '../engines/default-registry.js';
import type { EngineFactory } from '../engines/core/engine.js';
import type { EngineRegistry } from '../engines/core/registry.js';
import type { ResumeCheck } from '../engines/core/resume-check.js';
import type { ControlMode } from '../events/session-input.js';
import type { PersistedSession, SessionPhase, SessionUsage } from '../events/session-state.js';
import { AseError, isAseError, toAseError } from '../errors.js';
import { FileJournal } from '../effects/journal/file-journal.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import { FileStore } from '../effects/store/file-store.js';
import type { SessionStore } from '../effects/store/session-store.js';
import { resolveLocator } from './agent-location.js';
import { createSession } from './create-session.js';
import type { SessionNotice } from './notices.js';
import { checkResumeHere } from './resume-here.js';
import { defaultDataDir, type SessionOptions } from './options.js';
import type { Session } from './session.js';
import type { SessionSnapshot } from './snapshot.js';

/** What `create()` takes: `createSession`'s options but those the supervisor owns. */
export type SupervisedSessionOptions<A extends string = string> = Omit<SessionOptions<A>, 'store' | 'journal' | 'dataDir' | 'registry' | 'engines' | 'leaseTtlMs'>;

/** What `open()` takes: the stored session names its agent, directory, id and parent. */
export type OpenSessionOptions = Omit<SupervisedSessionOptions, 'agent' | 'workDir' | 'sessionId' | 'parentId' | 'parentCallId'>;

export interface SupervisorOptions {
  /**
   * Where the default file store and journal live, and the process registry (`processes/`).
   * Default: $ASE_DATA_DIR or ~/.agent-session-engine.
   */
  dataDir?: string;
  /** Every session's store (default: a FileStore under `dataDir/sessions`). */
  store?: SessionStore;
  /** Every session's journal (default: a FileJournal under `dataDir/transcripts`); `shutdown()` closes only a default one. */
  journal?: TranscriptJournal;
  /** The engines (default: `defaultRegistry()`); `engines` are registered in it. */
  registry?: EngineRegistry;
  engines?: EngineFactory[];
  /** Open sessions allowed at once (counting those being opened); one more is refused with `SUPERVISOR_FULL`. Default: no limit. */
  maxSessions?: number;
  /**
   * An idle session (remote, no turn, no open request) stops its agent after this long and is
   * `hibernated`; the next send resumes the agent by its resume token. Sets every session's
   * `config.hibernateAfterMs` unless `create()` says otherwise. Default 0: never.
   */
  hibernateAfterMs?: number;
  /** Every session's ownership lease (createSession's `leaseTtlMs`). */
  leaseTtlMs?: number;
  /** Options every `create()` and `open()` starts from (its own options win; `config` is merged key by key). A parent is each session's own: not here. */
  defaults?: Partial<Omit<SupervisedSessionOptions, 'parentId' | 'parentCallId'>>;
  /** Aborting it shuts the supervisor down (`shutdown()`). */
  signal?: AbortSignal;
  /**
   * The agent executable per engine name (`{ claude: '/opt/claude' }`) for a `create()` that names
   * no `bin` (`ase serve --bin claude=PATH`). Stored with each session, so `open()` later runs it too.
   */
  bins?: Readonly<Record<string, string>>;
}

/** One session as `list()` and the subscription snapshots describe it. */
export interface SupervisedSessionInfo {
  sessionId: string;
  agent: string;
  workDir: string;
  phase: SessionPhase;
  /** `running`: open here with an agent (or about to have one); `hibernated`: open here, agent stopped until the next send; `stored`: not open in this supervisor. */
  status: 'running' | 'hibernated' | 'stored';
  mode: ControlMode;
  /** Epoch ms: the last notice this supervisor saw from it (open), or its last state write (stored). */
  lastActivityAt: number;
  /** The exact sum of its turns' reported costs (also in `usage`). */
  costUsd: number;
  usage: SessionUsage;
  queued: number;
  openRequests: number;
  resumeToken?: string;
  /** The session that started this one (sub-agent sessions: `create({parentId})`, `openSessionTree().spawn()`); stored with it. */
  parentId?: string;
  /** The parent's tool call that started it, when there is one. */
  parentCallId?: string;
}

/** The first thing a subscriber gets per session: where it stands now. */
export interface SessionSnapshotNotice {
  type: 'snapshot';
  session: SupervisedSessionInfo;
}

/** What subscribers get: a session's notices (and its snapshot), each tagged with its id. */
export type SupervisedNotice = (SessionNotice | SessionSnapshotNotice) & { sessionId: string };

export interface SupervisorListOptions {
  /** Told about each stored session that cannot be read (it is left out of the list). Default: a process warning. */
  onUnreadable?: (sessionId: string, error: AseError) => void;
}

export interface Supervisor {
  /** Creates (or continues, with a stored `sessionId`) a session. Rejects with `SUPERVISOR_FULL`, `SUPERVISOR_CLOSED`, `SESSION_OWNED`, or what `createSession` rejects with. */
  create<A extends string>(options: SupervisedSessionOptions<A>): Promise<Session>;
  /** The open session, or restores a stored one (its agent and directory from the store). Rejects with `SESSION_NOT_FOUND`, `SESSION_OWNED`, `SUPERVISOR_FULL`, `SUPERVISOR_CLOSED`. */
  open(sessionId: string, options?: OpenSessionOptions): Promise<Session>;
  /** An open session of this supervisor. */
  get(sessionId: string): Session | undefined;
  /**
   * Whether a stored session could continue here, before `open()` takes it (adopting a session
   * another host ran): its work directory exists here and, where its engine can tell
   * (`EngineFactory.checkResume`), the agent's own session files do too. Undefined when nothing is
   * stored under that id. Reads only: no lease is taken.
   */
  checkResume(sessionId: string): Promise<ResumeCheck | undefined>;
  /** Open sessions and stored ones, newest activity first. */
  list(options?: SupervisorListOptions): Promise<SupervisedSessionInfo[]>;
  /** Stops an open session; resolves with its final snapshot (undefined when it is not open here). */
  stop(sessionId: string): Promise<SessionSnapshot | undefined>;
  /** A `snapshot` of the session (at once when open, after a store read when stored, none for an unknown id), then its notices, across re-opens. */
  subscribe(sessionId: string, listener: (notice: SupervisedNotice) => void): () => void;
  /** A `snapshot` per open session, then every session's notices (a newly opened one's from its first `status`). */
  subscribeAll(listener: (notice: SupervisedNotice) => void): () => void;
  /** How many sessions are open (or being opened). */
  readonly size: number;
  /** Where its store, journal, process registry and session trees (`sessionTreeFile(dataDir, rootId)`) live. */
  readonly dataDir: string;
  /** Every session's store. */
  readonly store: SessionStore;
  /** Refuses new sessions, stops every open one in parallel, and resolves once all are done (and a default journal closed). */
  shutdown(): Promise<void>;
}

interface Entry {
  session: Session;
  agent: string;
  workDir: string;
  lastActivityAt: number;
}

type Listener = (notice: SupervisedNotice) => void;

export function createSupervisor(options: SupervisorOptions = {}): Supervisor {
  return new SessionSupervisor(options);
}

class SessionSupervisor implements Supervisor {
  readonly #dataDir: string;
  readonly #store: SessionStore;
  readonly #journal: TranscriptJournal;
  readonly #ownsJournal: boolean;
  readonly #registry: EngineRegistry;
  readonly #maxSessions: number;
  readonly #hibernateAfterMs: number | undefined;
  readonly #leaseTtlMs: number | undefined;
  readonly #defaults: Partial<Omit<SupervisedSessionOptions, 'parentId' | 'parentCallId'>>;
  readonly #bins: Readonly<Record<string, string>>;
  readonly #open = new Map<string, Entry>();
  /** Ids being created or opened (they count against `maxSessions`). */
  readonly #opening = new Map<string, Promise<Session>>();
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #allListeners = new Set<Listener>();
  #shutdown: Promise<void> | undefined;

  constructor(options: SupervisorOptions) {
    const max = options.maxSessions ?? Infinity;
    if (!(max === Infinity || (Number.isInteger(max) && max > 0))) throw new AseError('INVALID_OPTIONS', `createSupervisor: maxSessions must be a positive integer, got ${String(max)}`);
    const hibernate = options.hibernateAfterMs;
    if (hibernate !== undefined && !(Number.isInteger(hibernate) && hibernate >= 0)) {
      throw new AseError('INVALID_OPTIONS', `createSupervisor: hibernateAfterMs must be a whole number of ms >= 0, got ${String(hibernate)}`);
    }
    // A default parent would be every session's, and would refuse to open any stored one with another.
    for (const key of ['parentId', 'parentCallId']) {
      if (options.defaults && key in options.defaults) throw new AseError('INVALID_OPTIONS', `createSupervisor: defaults.${key}: a parent is given per session (create({${key}}))`);
    }
    this.#dataDir = path.resolve(options.dataDir ?? defaultDataDir());
    this.#store = options.store ?? new FileStore({ dir: path.join(this.#dataDir, 'sessions') });
    this.#journal = options.journal ?? new FileJournal({ dir: path.join(this.#dataDir, 'transcripts') });
    this.#ownsJournal = !options.journal;
    this.#registry = options.registry ?? defaultRegistry();
    for (const factory of options.engines ?? []) this.#registry.register(factory);
    this.#maxSessions = max;
    this.#hibernateAfterMs = hibernate;
    this.#leaseTtlMs = options.leaseTtlMs;
    this.#defaults = options.defaults ?? {};
    this.#bins = options.bins ?? {};
    if (options.signal) {
      if (options.signal.aborted) void this.shutdown();
      else options.signal.addEventListener('abort', () => void this.shutdown(), { once: true });
    }
  }

  get size(): number {
    return this.#open.size + this.#opening.size;
  }

  get dataDir(): string {
    return this.#dataDir;
  }

  get store(): SessionStore {
    return this.#store;
  }

  create<A extends string>(typed: SupervisedSessionOptions<A>): Promise<Session> {
    // The engine options were checked against the engine's type by the caller's compiler; from here on, a record.
    const options = typed as SupervisedSessionOptions;
    const sessionId = options.sessionId ?? randomUUID();
    return this.#start(sessionId, async () => {
      const merged = this.#merged(options);
      const bin = merged.bin ?? this.#bins[merged.agent];
      return { ...merged, ...(bin !== undefined && { bin }), sessionId };
    });
  }

  open(sessionId: string, options: OpenSessionOptions = {}): Promise<Session> {
    const open = this.#open.get(sessionId);
    if (open) return Promise.resolve(open.session);
    const pending = this.#opening.get(sessionId);
    if (pending) return pending;
    return this.#start(sessionId, async () => {
      const stored = await this.#store.load(sessionId);
      if (!stored) throw new AseError('SESSION_NOT_FOUND', `no stored session "${sessionId}"`, { details: { sessionId } });
      // Its parent comes from the store too (createSession keeps the stored one).
      const { agent, workDir } = stored.state;
      // A supervisor's sessions are driven by remote clients: a stored `local` session comes back remote unless asked.
      return { mode: 'remote' as const, ...this.#merged(options), agent, workDir, sessionId };
    });
  }

  get(sessionId: string): Session | undefined {
    return this.#open.get(sessionId)?.session;
  }

  async checkResume(sessionId: string): Promise<ResumeCheck | undefined> {
    const stored = await this.#store.load(sessionId);
    if (!stored) return undefined;
    const { state } = stored;
    // The engine options open() would start it with: the defaults over the stored locating ones.
    const { engineOptions } = resolveLocator({ ...(this.#defaults.engineOptions && { engineOptions: this.#defaults.engineOptions }) }, state.agentLocator);
    return checkResumeHere(state, this.#registry.get(state.agent), { engineOptions });
  }

  async list(options: SupervisorListOptions = {}): Promise<SupervisedSessionInfo[]> {
    const infos = [...this.#open.keys()].map((id) => this.#infoOf(id)!);
    const storedIds = (await this.#store.list()).filter((id) => !this.#open.has(id));
    const loaded = await mapBounded(storedIds, LIST_CONCURRENCY, async (sessionId) => {
      try {
        return (await this.#store.load(sessionId))?.state;
      } catch (error) {
        const failure = toAseError(error, 'STORE_IO');
        if (options.onUnreadable) options.onUnreadable(sessionId, failure);
        else process.emitWarning(`agent-session-engine: stored session ${sessionId} cannot be read: ${failure.code}: ${failure.message}`);
        return undefined;
      }
    });
    for (const state of loaded) if (state && !this.#open.has(state.sessionId)) infos.push(storedInfo(state));
    return infos.sort((a, b) => b.lastActivityAt - a.lastActivityAt || a.sessionId.localeCompare(b.sessionId));
  }

  async stop(sessionId: string): Promise<SessionSnapshot | undefined> {
    const opening = this.#opening.get(sessionId);
    const session = this.#open.get(sessionId)?.session ?? (opening && (await opening.catch(() => undefined)));
    return session?.stop();
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    let listeners = this.#listeners.get(sessionId);
    if (!listeners) this.#listeners.set(sessionId, (listeners = new Set()));
    listeners.add(listener);
    const unsubscribe = () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(sessionId) === listeners) this.#listeners.delete(sessionId);
    };
    const info = this.#infoOf(sessionId);
    if (info) deliver(listener, { type: 'snapshot', sessionId, session: info });
    else if (!this.#opening.has(sessionId)) {
      // Not open: what the store holds (unless it was opened meanwhile, or the listener left).
      void this.#store
        .load(sessionId)
        .then((stored) => {
          if (!stored || !listeners.has(listener) || this.#open.has(sessionId) || this.#opening.has(sessionId)) return;
          deliver(listener, { type: 'snapshot', sessionId, session: storedInfo(stored.state) });
        })
        .catch(() => undefined);
    }
    return unsubscribe;
  }

  subscribeAll(listener: Listener): () => void {
    this.#allListeners.add(listener);
    for (const sessionId of this.#open.keys()) deliver(listener, { type: 'snapshot', sessionId, session: this.#infoOf(sessionId)! });
    return () => this.#allListeners.delete(listener);
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      // Sessions still opening are stopped once they are open.
      const opening = [...this.#opening.values()].map((p) => p.then((s) => s.stop()).catch(() => undefined));
      const open = [...this.#open.values()].map((entry) => entry.session.stop());
      await Promise.allSettled([...open, ...opening]);
      if (this.#ownsJournal) await this.#journal.close?.();
    })();
    return this.#shutdown;
  }

  /** Opens one session: capacity and uniqueness checked first, the session registered once `createSession` resolves. */
  #start(sessionId: string, optionsFor: () => Promise<SessionOptions>): Promise<Session> {
    if (this.#shutdown) return Promise.reject(new AseError('SUPERVISOR_CLOSED', 'the supervisor is shut down'));
    if (this.#open.has(sessionId) || this.#opening.has(sessionId)) {
      return Promise.reject(new AseError('SESSION_OWNED', `session "${sessionId}" is already open in this supervisor (get() returns it)`, { details: { sessionId } }));
    }
    if (this.size >= this.#maxSessions) {
      return Promise.reject(new AseError('SUPERVISOR_FULL', `the supervisor holds its limit of ${this.#maxSessions} open sessions; stop one first`, { details: { maxSessions: this.#maxSessions } }));
    }
    const opened = (async () => {
      const options = await optionsFor();
      const onNotice = options.onNotice;
      const session = await createSession({
        ...options,
        store: this.#store,
        journal: this.#journal,
        dataDir: this.#dataDir,
        registry: this.#registry,
        ...(this.#leaseTtlMs !== undefined && { leaseTtlMs: this.#leaseTtlMs }),
        onNotice: (notice) => {
          onNotice?.(notice);
          this.#route(sessionId, notice);
        },
      });
      const entry: Entry = { session, agent: options.agent, workDir: path.resolve(options.workDir), lastActivityAt: Date.now() };
      this.#open.set(sessionId, entry);
      void session.done.finally(() => {
        if (this.#open.get(sessionId) === entry) this.#open.delete(sessionId);
      });
      if (this.#shutdown) void session.stop();
      return session;
    })();
    this.#opening.set(sessionId, opened);
    const forget = () => {
      if (this.#opening.get(sessionId) === opened) this.#opening.delete(sessionId);
    };
    opened.then(forget, forget);
    return opened;
  }

  /** The supervisor's defaults under the call's options; `config` merged key by key, hibernation from the supervisor unless given. */
  #merged<T extends Partial<SupervisedSessionOptions>>(options: T): T & Partial<SupervisedSessionOptions> {
    const config = { ...(this.#hibernateAfterMs !== undefined && { hibernateAfterMs: this.#hibernateAfterMs }), ...this.#defaults.config, ...options.config };
    return { ...this.#defaults, ...options, ...(Object.keys(config).length > 0 && { config }) };
  }

  #route(sessionId: string, notice: SessionNotice): void {
    const entry = this.#open.get(sessionId);
    if (entry) entry.lastActivityAt = Date.now();
    const own = this.#listeners.get(sessionId);
    if (!own && this.#allListeners.size === 0) return;
    const tagged = { ...notice, sessionId } as SupervisedNotice;
    if (own) for (const listener of [...own]) deliver(listener, tagged);
    for (const listener of [...this.#allListeners]) deliver(listener, tagged);
  }

  #infoOf(sessionId: string): SupervisedSessionInfo | undefined {
    const entry = this.#open.get(sessionId);
    if (!entry) return undefined;
    const snap = entry.session.snapshot();
    return {
      sessionId,
      agent: entry.agent,
      workDir: entry.workDir,
      phase: snap.phase,
      status: snap.phase === 'hibernated' ? 'hibernated' : 'running',
      mode: snap.mode,
      lastActivityAt: entry.lastActivityAt,
      costUsd: snap.usage.costUsd,
      usage: snap.usage,
      queued: snap.queue.length,
      openRequests: Object.keys(snap.requests).length,
      ...(snap.resumeToken !== undefined && { resumeToken: snap.resumeToken }),
      ...(snap.parentId !== undefined && { parentId: snap.parentId }),
      ...(snap.parentCallId !== undefined && { parentCallId: snap.parentCallId }),
    };
  }
}

/** Stored sessions `list()` reads at once: thousands of parallel reads would run a file store out of descriptors. */
const LIST_CONCURRENCY = 32;

/** `items.map(fn)` with at most `limit` calls in flight; results in input order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function storedInfo(state: PersistedSession): SupervisedSessionInfo {
  return {
    sessionId: state.sessionId,
    agent: state.agent,
    workDir: state.workDir,
    phase: state.phase,
    status: 'stored',
    mode: state.mode,
    lastActivityAt: state.updatedAt,
    costUsd: state.usage.costUsd,
    usage: state.usage,
    queued: state.queue.length,
    openRequests: Object.keys(state.requests).length,
    ...(state.resumeToken !== undefined && { resumeToken: state.resumeToken }),
    ...(state.parentId !== undefined && { parentId: state.parentId }),
    ...(state.parentCallId !== undefined && { parentCallId: state.parentCallId }),
  };
}

/** One subscriber's bug must not starve the others or the session. */
function deliver(listener: Listener, notice: SupervisedNotice): void {
  try {
    listener(notice);
  } catch (error) {
    process.emitWarning(`agent-session-engine: a supervisor subscriber threw: ${isAseError(error) || error instanceof Error ? error.message : String(error)}`);
  }
}
