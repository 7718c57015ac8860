/**
 * The SessionActor's context, its configuration, and the pure conversions to and from the
 * durable `PersistedSession`. Everything the policy needs lives here as plain JSON, so a
 * snapshot can be persisted and the machine walked by the model-based harness.
 */
import type { ErrorKind, TurnUsage } from '../events/agent-event.js';
import type { ControlMode } from '../events/session-input.js';
import type {
  AgentLocator,
  CompletedPermission,
  InFlightTurn,
  OpenPermission,
  PersistedSession,
  QueuedSend,
  SessionPhase,
  SessionUsage,
  UnconfirmedSend,
  VersionedSession,
} from '../events/session-state.js';

export interface SessionConfig {
  /** How long a permission request may wait for a human; 0 = forever. Expiry answers deny+interrupt. */
  permissionTimeoutMs: number;
  /** No engine event for this long while a turn runs (and no permission is pending) = stalled; 0 = off. */
  stallTimeoutMs: number;
  /** After an interrupt (abort or stall), how long to wait for the turn to end before restarting the engine. */
  interruptGraceMs: number;
  /** How long to wait for an engine to report `exited` after `engine.stop` before moving on. */
  stopTimeoutMs: number;
  /** First restart delay after a crash; doubles per consecutive crash up to `restartMaxMs`. */
  restartBaseMs: number;
  restartMaxMs: number;
  /** Consecutive crashes tolerated before the session is `failed`. */
  maxRestarts: number;
  /** The `thinking` indicator clears itself after this long without engine activity. */
  thinkingClearMs: number;
  /** Non-urgent state changes are persisted at most this often. Permission changes persist at once. */
  persistDebounceMs: number;
  /** Compare-and-set conflicts retried before giving up (and reporting PERSIST_FAILED). */
  maxPersistRetries: number;
  /** How many delivered local ids are remembered to reject retried sends. */
  deliveredIdsLimit: number;
  /** How many decided permission requests the ledger keeps (the newest). */
  completedLimit: number;
  /**
   * A mode switch waits this long for a running turn (remote, or typed in the local terminal) to
   * end before the engine is stopped anyway (stopping interrupts the turn).
   */
  handoffWaitMs: number;
  /**
   * A remote session idle this long (no turn, no open request, no engine event) stops its agent and
   * is `hibernated` until the next send resumes it by its resume token. 0 = never.
   */
  hibernateAfterMs: number;
}

export const DEFAULT_SESSION_CONFIG: Readonly<SessionConfig> = Object.freeze({
  permissionTimeoutMs: 10 * 60_000,
  stallTimeoutMs: 180_000,
  interruptGraceMs: 10_000,
  stopTimeoutMs: 10_000,
  restartBaseMs: 1_000,
  restartMaxMs: 30_000,
  maxRestarts: 5,
  thinkingClearMs: 3_000,
  persistDebounceMs: 250,
  maxPersistRetries: 3,
  deliveredIdsLimit: 256,
  completedLimit: 1_000,
  handoffWaitMs: 15_000,
  hibernateAfterMs: 0,
});

export interface TurnState {
  gen: number;
  localId: string;
  /** Kept (and persisted) so a restore can tell the agent's transcript about it and ask whether it arrived. */
  text: string;
  /** The transcript id of the turn's `user_message` entry. */
  eventId: string;
  startedAt: number;
  /** A client asked to abort: the turn ends `cancelled` whatever the engine reports. */
  aborted: boolean;
  /** The stall watchdog interrupted it. */
  stalled: boolean;
}

export interface EngineErrorInfo {
  kind: ErrorKind;
  message: string;
  retryable: boolean;
  gen: number;
  at: number;
}

/**
 * What the transcript journal says happened after the restored state was written: a host can die
 * between a journal append and the state write that follows it. Read by the runtime from the
 * journal when a session is restored after a crash (the stored phase is not `stopped`).
 */
export interface JournalFacts {
  /** The stored turn's `user_message` entry is in the journal. */
  turnJournaled: boolean;
  /**
   * The journal shows the stored turn ended (its end was not written to the state yet). `interrupted`:
   * ended by an earlier recovery whose own state write did not land (its delivery question is open still).
   */
  turnEnded: null | { type: 'turn_complete'; usage: TurnUsage } | { type: 'turn_ended'; interrupted: boolean };
  /** The journal shows agent output during the stored turn: the agent had the message. */
  agentResponded: boolean;
  /** Turns the journal opened and never closed, other than the stored one (earlier crashes). */
  openTurns: { localId: string; gen: number }[];
  /** Permission requests the journal opened and never closed, that the stored ledger does not hold. */
  openRequests: { requestId: string; gen: number }[];
  /**
   * A turn typed in the local terminal (the agent's `message` of role user, no `user_message`)
   * that no `turn_complete`/`turn_ended` closed: the host died while the terminal UI answered it.
   * It has no localId and no queue entry; the restore only closes it in the transcript.
   */
  openLocalTurn?: { gen: number };
  /**
   * The newest generation the journal shows. A host can start a generation and die before the write
   * recording it lands; its entries (and the ids its engine handed out) must not be reused, so the
   * restore continues after the newer of this and the stored generation.
   */
  lastGen: number;
}

/** What `init` has to clean up after a restore: the stored turn in flight and the journal's facts. */
export interface PendingRecovery {
  turn?: InFlightTurn;
  facts?: JournalFacts;
}

export interface SessionContext {
  sessionId: string;
  agent: string;
  workDir: string;
  /** The session that started this one (sub-agent sessions): fixed at creation, persisted, never changed. */
  parentId?: string;
  /** The parent's tool call that started it (AgentEvent `parentCallId`). */
  parentCallId?: string;
  /** Passed through to the engine in `engine.start`. */
  options: Record<string, unknown>;
  /** What locates the agent CLI (bin, locating engine options): persisted, so a later open runs the same agent. */
  agentLocator?: AgentLocator;
  config: SessionConfig;
  /** The control mode of the current engine, or of the next one while switching or recovering. */
  mode: ControlMode;
  phase: SessionPhase;
  /** The newest runner generation ever started (0 = none yet). */
  gen: number;
  /** The generation whose engine is running (started, not yet exited), or null. */
  liveGen: number | null;
  /** The generation that was told to stop (so nothing more is sent to it), or null. */
  stopSentFor: number | null;
  resumeToken?: string;
  /** The token the current generation was started with; a different identified token is a fork. */
  expectedResumeToken?: string;
  transcriptPath?: string;
  queue: QueuedSend[];
  deliveredIds: string[];
  turn: TurnState | null;
  /** A turn typed in the local terminal runs (its prompt was reported, its `turn_complete` not yet). */
  localTurn: boolean;
  /** A message a host crash left maybe-delivered: the next remote engine is asked before anything else goes out. */
  unconfirmed: UnconfirmedSend | null;
  /** The model chosen with `set_model` (null: none; the engine options' one applies). Persisted, carried by every start. */
  model: string | null;
  /** The permission mode chosen with `set_permission_mode`, in the engine's words (null: none). Persisted, carried by every start. */
  permissionMode: string | null;
  /** Set on restore, consumed by `init`. */
  recovery: PendingRecovery | null;
  requests: Record<string, OpenPermission>;
  completed: Record<string, CompletedPermission>;
  usage: SessionUsage;
  online: boolean;
  thinking: boolean;
  lastActivityAt: number;
  /** Time of the last event the machine handled (epoch ms): the machine's own notion of "now". */
  now: number;
  /**
   * Armed timers and their deadlines (epoch ms), mirrored by the runtime. They are not persisted:
   * a restored session starts a new generation, so the old generation's timers mean nothing.
   */
  timers: Record<string, number>;
  restartAttempts: number;
  lastError: EngineErrorInfo | null;
  /** Version of the stored state this context was last persisted as (compare-and-set). */
  version: number;
  /** `urgent`: a change waiting behind an in-flight write must be written as soon as it lands. */
  persist: { inFlight: boolean; dirty: boolean; urgent: boolean; retries: number };
  /** Counter for transcript event ids. */
  seq: number;
  /** Distinguishes this run's transcript event ids from other runs of the same session. */
  instance: string;
}

export interface SessionMachineInput {
  sessionId: string;
  agent: string;
  workDir: string;
  /** A new session's parent (sub-agent sessions); a restored one keeps its stored parent. */
  parentId?: string;
  parentCallId?: string;
  mode: ControlMode;
  now: number;
  options?: Record<string, unknown>;
  /** What locates the agent CLI; `createSession` passes the given one over the stored one. */
  agentLocator?: AgentLocator;
  config?: Partial<SessionConfig>;
  /**
   * Tags this run's transcript event ids (`<instance>.<gen>-<seq>`), so a restored session never
   * repeats an id an earlier run wrote. `createSession` passes a random one; default: no tag.
   */
  instance?: string;
  /** A previously persisted session to continue (resume token, queue, ledger). */
  restored?: VersionedSession;
  /** What the journal says about the restored session's last moments (see JournalFacts). */
  journal?: JournalFacts;
}

export const ZERO_SESSION_USAGE: SessionUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  turns: 0,
});

export function createSessionContext(input: SessionMachineInput): SessionContext {
  const restored = input.restored?.state;
  return {
    sessionId: input.sessionId,
    agent: input.agent,
    workDir: input.workDir,
    ...parentOf(input),
    options: input.options ?? {},
    ...(input.agentLocator && { agentLocator: input.agentLocator }),
    config: { ...DEFAULT_SESSION_CONFIG, ...input.config },
    mode: input.mode,
    // A hibernated session stays so on restore (`init` decides whether it can); anything else starts.
    phase: restored?.phase === 'hibernated' ? 'hibernated' : 'starting',
    gen: Math.max(restored?.gen ?? 0, input.journal?.lastGen ?? 0),
    liveGen: null,
    stopSentFor: null,
    resumeToken: restored?.resumeToken,
    transcriptPath: restored?.transcriptPath,
    queue: restored?.queue ?? [],
    deliveredIds: restored?.deliveredIds ?? [],
    turn: null,
    localTurn: false,
    unconfirmed: restored?.unconfirmed ?? null,
    model: restored?.model ?? null,
    permissionMode: restored?.permissionMode ?? null,
    recovery: restored && (restored.turn || input.journal) ? { ...(restored.turn && { turn: restored.turn }), ...(input.journal && { facts: input.journal }) } : null,
    requests: restored?.requests ?? {},
    completed: restored?.completed ?? {},
    usage: restored?.usage ?? ZERO_SESSION_USAGE,
    online: true,
    thinking: false,
    lastActivityAt: input.now,
    now: input.now,
    timers: {},
    restartAttempts: 0,
    lastError: null,
    version: input.restored?.version ?? 0,
    persist: { inFlight: false, dirty: false, urgent: false, retries: 0 },
    seq: 0,
    instance: input.instance ?? '',
  };
}

/** The stored parent wins (it is fixed at creation); a new session takes the input's. */
function parentOf(input: SessionMachineInput): Pick<SessionContext, 'parentId' | 'parentCallId'> {
  const from = input.restored ? input.restored.state : input;
  return {
    ...(from.parentId !== undefined && { parentId: from.parentId }),
    ...(from.parentCallId !== undefined && { parentCallId: from.parentCallId }),
  };
}

export function toPersisted(context: SessionContext, now: number): PersistedSession {
  return {
    schemaVersion: 1,
    sessionId: context.sessionId,
    agent: context.agent,
    workDir: context.workDir,
    ...(context.parentId !== undefined && { parentId: context.parentId }),
    ...(context.parentCallId !== undefined && { parentCallId: context.parentCallId }),
    mode: context.mode,
    phase: context.phase,
    gen: context.gen,
    ...(context.resumeToken !== undefined && { resumeToken: context.resumeToken }),
    ...(context.transcriptPath !== undefined && { transcriptPath: context.transcriptPath }),
    queue: context.queue,
    requests: context.requests,
    completed: context.completed,
    usage: context.usage,
    deliveredIds: context.deliveredIds,
    ...(context.turn && {
      turn: { localId: context.turn.localId, text: context.turn.text, gen: context.turn.gen, startedAt: context.turn.startedAt, eventId: context.turn.eventId },
    }),
    ...(context.unconfirmed && { unconfirmed: context.unconfirmed }),
    ...(context.model !== null && { model: context.model }),
    ...(context.permissionMode !== null && { permissionMode: context.permissionMode }),
    ...(context.agentLocator && { agentLocator: context.agentLocator }),
    updatedAt: now,
  };
}
