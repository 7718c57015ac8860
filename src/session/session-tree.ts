/**
 * `openSessionTree()`: sub-agent sessions entered without forking, on a supervisor. The tree
 * (session-tree-state.ts) is kept in one JSON file, written durably on every change, so the tree,
 * the states and the focus survive a host restart; the sessions themselves are the supervisor's
 * (opened again on demand from its store).
 *
 * - `spawn(parentId, options)`: a new session under `parentId` (the supervisor creates it).
 * - `enter(childId)`: the child becomes the interactive session; the one that had the focus is
 *   `suspended`: not stopped, not forked. It may hibernate meanwhile (the supervisor's
 *   `hibernateAfterMs`), and later resumes by the same token: its resume token is noted here.
 * - `exit()`: the focus returns to the parent; its resume token is checked (a changed one is
 *   `RESUME_FORKED`, and the focus stays).
 * - `complete(childId, result?)`: the child is done; its result (by default its last assistant
 *   text) is delivered to the parent exactly once, as a queued message whose `localId` is derived
 *   from the child (a repeat after a crash is refused by the parent as a duplicate).
 *
 * The file is the truth: every change reads it again first, so a change made meanwhile by another
 * handle on the same file (another process, `ase serve`'s `POST /api/sessions/:id/tree/enter`)
 * is built on, not overwritten.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AseError, isAseError } from '../errors.js';
import { writeFileDurable } from '../effects/fs-durable.js';
import { answerText } from '../events/message-text.js';
import type { Session } from './session.js';
import * as tree from './session-tree-state.js';
import { readSessionTree } from './session-tree-file.js';
import type { SupervisedSessionOptions, Supervisor } from './supervisor.js';
import { storedOrStopped } from './stored-or-stopped.js';

export type { TreeNode, TreeNodeState, TreeRecord } from './session-tree-state.js';

/**
 * How a completed child's result reaches its parent. The default sends it (`parent.send(text,
 * { localId })`): a queued message, which in local mode asks for remote control. A host showing the
 * parent's terminal UI may type it there instead (`ase run --mode local --sub-agents`). It resolves
 * once the parent holds the message; then the tree notes it delivered. A `DUPLICATE_SEND` it throws
 * means delivered before.
 */
export type ResultDelivery = (parent: Session, message: { localId: string; text: string }) => Promise<void>;

const sendResult: ResultDelivery = async (parent, { localId, text }) => {
  await parent.send(text, { localId });
};

export interface SessionTreeOptions {
  supervisor: Supervisor;
  /**
   * The tree's file (JSON, written durably). An existing one is continued; `rootId` must match.
   * At `sessionTreeFile(dataDir, rootId)` others on the data dir find it (`ase serve` shows remote
   * clients its focus: `GET /api/sessions/:id/tree`).
   */
  file: string;
  /** The root session (created by the caller, e.g. `supervisor.create`, or stored). */
  rootId: string;
}

/** `spawn()`'s options: the supervisor's, the parent named by `spawn` itself. */
export type SpawnSessionOptions = Omit<SupervisedSessionOptions, 'parentId'> & { parentCallId?: string };

export interface SessionTree {
  readonly rootId: string;
  /** The session that is interactive now (at most one per tree). */
  readonly focus: string;
  /** A copy of the tree's record. */
  record(): tree.TreeRecord;
  /** The focused session, opened from the store when needed. */
  focused(): Promise<Session>;
  /**
   * Creates a session under `parentId` (the supervisor's `create`, with `parentId` and
   * `parentCallId` set, so the child's own stored state names its parent). Refused with
   * `INVALID_INPUT`, before anything is created, when the parent is not in the tree or is completed.
   */
  spawn(parentId: string, options: SpawnSessionOptions): Promise<Session>;
  /** The focus moves to `childId`, a sub-agent of the focused session; the focused one is suspended. */
  enter(childId: string): Promise<Session>;
  /**
   * The focus returns to the focused session's parent. With `from`, that session must be the
   * focus (`TREE_CONFLICT` otherwise): a caller that saw an older tree exits nothing else.
   */
  exit(from?: string): Promise<Session>;
  /** `deliver`: how the result reaches the parent (default: sent, `ResultDelivery`). */
  complete(childId: string, result?: string, options?: { deliver?: ResultDelivery }): Promise<void>;
  /** Stops following the tree's sessions (their last assistant texts); the tree and its file stay. Further changes are refused. */
  close(): Promise<void>;
}

export async function openSessionTree(options: SessionTreeOptions): Promise<SessionTree> {
  const record = (await readSessionTree(options.file)) ?? tree.newTree(options.rootId);
  await mkdir(path.dirname(options.file), { recursive: true });
  if (record.rootId !== options.rootId) throw new AseError('INVALID_OPTIONS', `session tree ${options.file} belongs to root "${record.rootId}", not "${options.rootId}"`);
  const opened = new SessionTreeHandle(options, record);
  await opened.save();
  // A host that died after a child completed may not have delivered its result yet.
  await opened.deliverPending();
  return opened;
}

class SessionTreeHandle implements SessionTree {
  readonly #options: SessionTreeOptions;
  #record: tree.TreeRecord;
  /** Each child's last assistant text seen here: the default result of `complete()`. */
  readonly #lastText = new Map<string, string>();
  readonly #unsubscribe = new Map<string, () => void>();
  /** Changes run one at a time: the record is read-modify-written. */
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: SessionTreeOptions, record: tree.TreeRecord) {
    this.#options = options;
    this.#record = record;
    for (const id of Object.keys(record.nodes)) this.#watch(id);
  }

  get rootId(): string {
    return this.#record.rootId;
  }

  get focus(): string {
    return this.#record.focus;
  }

  record(): tree.TreeRecord {
    return structuredClone(this.#record);
  }

  focused(): Promise<Session> {
    return this.#open(this.#record.focus);
  }

  spawn(parentId: string, options: SpawnSessionOptions): Promise<Session> {
    return this.#serial(async () => {
      const sessionId = options.sessionId ?? randomUUID();
      // The tree's rules are checked first: a refused spawn leaves no session behind.
      const next = tree.addChild(this.#record, parentId, sessionId, options.parentCallId);
      // The tree names only stored sessions: a crash right after this spawn finds the child again.
      const session = await storedOrStopped(await this.#options.supervisor.create({ ...options, sessionId, parentId }));
      this.#record = next;
      this.#watch(session.id);
      await this.save();
      return session;
    });
  }

  enter(childId: string): Promise<Session> {
    return this.#serial(async () => {
      const token = (await this.#open(this.#record.focus)).snapshot().resumeToken;
      this.#record = tree.enter(this.#record, childId, token);
      await this.save();
      return this.#open(childId);
    });
  }

  exit(from?: string): Promise<Session> {
    return this.#serial(async () => {
      const focused = this.#record.nodes[this.#record.focus];
      if (focused?.parentId === undefined || (from !== undefined && from !== this.#record.focus)) return tree.exit(this.#record, undefined, from) as never; // throws
      const parent = await this.#open(focused.parentId);
      this.#record = tree.exit(this.#record, parent.snapshot().resumeToken, from);
      await this.save();
      return parent;
    });
  }

  complete(childId: string, result?: string, options: { deliver?: ResultDelivery } = {}): Promise<void> {
    return this.#serial(async () => {
      this.#record = tree.complete(this.#record, childId, result ?? this.#lastText.get(childId) ?? '');
      await this.save();
      await this.deliverPending(options.deliver);
    });
  }

  async close(): Promise<void> {
    this.#closed = true; // refuses what is asked from now on; what runs already ends first
    await this.#chain;
    for (const off of this.#unsubscribe.values()) off();
    this.#unsubscribe.clear();
  }

  async save(): Promise<void> {
    await writeFileDurable(this.#options.file, `${JSON.stringify(this.#record, null, 2)}\n`);
  }

  /** Sends each completed child's result to its parent, then notes it delivered (a resend is a refused duplicate). */
  async deliverPending(deliver: ResultDelivery = sendResult): Promise<void> {
    for (const child of tree.undelivered(this.#record)) {
      const parent = await this.#open(child.parentId!);
      try {
        await deliver(parent, tree.resultMessage(child));
      } catch (error) {
        // Delivered before a crash, not yet noted: the parent already holds it.
        if (!(isAseError(error) && error.code === 'DUPLICATE_SEND')) throw error;
      }
      this.#record = tree.markDelivered(this.#record, child.sessionId);
      await this.save();
    }
  }

  async #open(sessionId: string): Promise<Session> {
    return this.#options.supervisor.get(sessionId) ?? this.#options.supervisor.open(sessionId);
  }

  #watch(sessionId: string): void {
    if (this.#unsubscribe.has(sessionId)) return;
    const off = this.#options.supervisor.subscribe(sessionId, (notice) => {
      if (notice.type !== 'agent' || notice.event.type !== 'message') return;
      const text = answerText(notice.event);
      if (text !== '') this.#lastText.set(sessionId, text);
    });
    this.#unsubscribe.set(sessionId, off);
  }

  /** Runs `work` after the changes before it, on the record as the file holds it now. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new AseError('SESSION_STOPPED', `session tree ${this.#options.file} was closed`));
    const run = async (): Promise<T> => {
      const current = await readSessionTree(this.#options.file);
      if (current && current.rootId !== this.#record.rootId) throw new AseError('STORE_CORRUPT', `session tree ${this.#options.file} now belongs to root "${current.rootId}", not "${this.#record.rootId}"`);
      if (current) {
        this.#record = current;
        for (const id of Object.keys(current.nodes)) this.#watch(id);
      }
      return work();
    };
    const next = this.#chain.then(run, run);
    this.#chain = next.catch(() => undefined);
    return next;
  }
}
