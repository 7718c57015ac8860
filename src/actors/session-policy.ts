/**
 * The SessionActor's policy as small pure functions over a Step. The machine (session.ts) decides
 * *when* each runs (states, guards); these decide *what* happens (context changes and effects).
 */
import type { AgentEventOf, TurnUsage } from '../events/agent-event.js';
import type { RuntimeEvent } from '../events/runtime-event.js';
import { permissionPromptOf } from '../events/ephemeral.js';
import type { CompletedPermission, PersistedSession, PermissionStatus, SessionPhase } from '../events/session-state.js';
import type { ControlMode, SessionInput } from '../events/session-input.js';
import type { EngineSettings } from '../events/engine-input.js';
import type { SessionContext } from './session-context.js';
import type { Step } from './session-step.js';

type Input<T extends SessionInput['type']> = Extract<SessionInput, { type: T }>;

export const TIMER = {
  stall: 'stall',
  interrupt: 'interrupt',
  stop: 'stop',
  restart: 'restart',
  thinking: 'thinking',
  persist: 'persist',
  handoff: 'handoff',
  hibernate: 'hibernate',
  permission: (requestId: string) => `perm:${requestId}`,
} as const;

export function permissionIdOfTimer(timerId: string): string | undefined {
  return timerId.startsWith('perm:') ? timerId.slice('perm:'.length) : undefined;
}

// ---------------------------------------------------------------- phases and lifecycle

export function enterPhase(s: Step, phase: SessionPhase, detail?: string): void {
  s.ctx.phase = phase;
  s.status(detail);
  s.persist(false);
}

/** Starts the next generation in `ctx.mode`, resuming the agent's own session when a token is known. */
export function launchEngine(s: Step): void {
  const gen = s.ctx.gen + 1;
  s.ctx.gen = gen;
  s.ctx.liveGen = gen;
  s.ctx.stopSentFor = null;
  s.ctx.turn = null;
  s.ctx.lastActivityAt = s.at;
  s.ctx.expectedResumeToken = s.ctx.resumeToken;
  s.emit({
    type: 'engine.start',
    gen,
    mode: s.ctx.mode,
    agent: s.ctx.agent,
    workDir: s.ctx.workDir,
    ...(s.ctx.resumeToken !== undefined && { resumeToken: s.ctx.resumeToken }),
    options: s.ctx.options,
    // The runtime choices go with every start: a restarted, resumed or mode-switched engine keeps them.
    ...(s.ctx.model !== null && { model: s.ctx.model }),
    ...(s.ctx.permissionMode !== null && { permissionMode: s.ctx.permissionMode }),
  });
  // The new generation is stored at once: a host that dies now must not start this number again.
  s.persist(true);
}

/** Tells the live engine to stop (once) and bounds the wait for its exit. */
export function stopEngine(s: Step): void {
  const gen = s.ctx.liveGen;
  if (gen === null) return;
  if (s.ctx.stopSentFor !== gen) {
    s.ctx.stopSentFor = gen;
    s.emit({ type: 'engine.stop', gen });
  }
  if (!(TIMER.stop in s.ctx.timers)) s.setTimer(TIMER.stop, s.at + s.ctx.config.stopTimeoutMs);
}

/**
 * Ends everything that belongs to the live generation: its turn, its requests, its timers.
 * A turn that was aborted or interrupted (or ends because the session is stopped) ends `cancelled`;
 * otherwise losing its engine means it `failed`.
 */
export function endGeneration(s: Step, reason: string, turnStatus: 'failed' | 'cancelled' = 'failed'): void {
  for (const id of [TIMER.stall, TIMER.interrupt, TIMER.thinking]) s.cancelTimer(id);
  if (s.ctx.thinking) {
    s.ctx.thinking = false;
    s.ephemeral({ kind: 'thinking', active: false });
  }
  s.ctx.localTurn = false;
  if (s.ctx.turn) {
    const status = s.ctx.turn.aborted || s.ctx.turn.stalled ? 'cancelled' : turnStatus;
    s.transcript('turn_ended', { localId: s.ctx.turn.localId, status, reason });
    s.ctx.turn = null;
  }
  cancelOpenRequests(s, reason);
}

/** The engine of the live generation exited (expected or not). */
export function engineGone(s: Step, exit: AgentEventOf<'exited'>): void {
  s.transcript('exited', { code: exit.code, signal: exit.signal, reason: exit.reason }, exit.gen);
  endGeneration(s, exit.reason ?? 'engine exited');
  s.cancelTimer(TIMER.stop);
  s.ctx.liveGen = null;
}

/**
 * The stop timeout fired: stop waiting. The old engine's own stop ladder (SIGTERM, then SIGKILL of
 * its process group) still runs; the runtime starts the next generation only after it settles.
 */
export function abandonEngine(s: Step): void {
  endGeneration(s, 'engine did not exit in time');
  s.ctx.liveGen = null;
}

export function countCrash(s: Step): void {
  s.ctx.restartAttempts += 1;
}

/** Backoff before the next start: base, 2x base, 4x base, ... capped; none when the session will fail. */
export function scheduleRestart(s: Step): void {
  if (restartsExhausted(s.ctx)) return;
  const delay = Math.min(s.ctx.config.restartBaseMs * 2 ** (s.ctx.restartAttempts - 1), s.ctx.config.restartMaxMs);
  s.setTimer(TIMER.restart, s.at + delay);
}

export function restartsExhausted(ctx: SessionContext): boolean {
  if (ctx.lastError && !ctx.lastError.retryable && ctx.lastError.gen === ctx.gen) return true;
  return ctx.restartAttempts > ctx.config.maxRestarts;
}

export function surfaceFailure(s: Step): void {
  const why = s.ctx.lastError?.message ?? `engine crashed ${s.ctx.restartAttempts} times in a row`;
  s.clientError('SESSION_FAILED', `session failed: ${why}`);
}

export function beginStop(s: Step): void {
  for (const id of Object.keys(s.ctx.timers)) if (id !== TIMER.persist) s.cancelTimer(id);
  endGeneration(s, 'session stopped', 'cancelled');
  stopEngine(s);
}

/** Entering the final state: nothing stays armed, and the final state is written. */
export function finish(s: Step): void {
  endGeneration(s, 'session stopped', 'cancelled');
  for (const id of Object.keys(s.ctx.timers)) s.cancelTimer(id);
  s.ctx.phase = 'stopped';
  s.status();
  // Written unconditionally: a final state processes no more persist results, so if a write is in
  // flight this one expects the version that write will produce (the runtime serializes writes).
  const expected = s.ctx.version + (s.ctx.persist.inFlight ? 1 : 0);
  s.writeNow(expected);
}

export function setMode(s: Step, to: ControlMode): void {
  s.ctx.mode = to;
  s.transcript('mode_changed', { to });
  s.persist(true); // So `switchMode()` resolves once the switch is on record.
}

/**
 * `set_model` / `set_permission_mode`: the choice is stored (at once, so the promise resolves once
 * it is on record) and handed to the live engine if one can still be reached; an engine started
 * later gets it with its start. When it takes effect mid-turn is the engine's (docs/engines.md).
 */
export function changeSettings(s: Step, settings: EngineSettings): void {
  if (settings.model !== undefined) s.ctx.model = settings.model;
  if (settings.permissionMode !== undefined) s.ctx.permissionMode = settings.permissionMode;
  s.transcript('settings_changed', settings);
  const gen = s.ctx.liveGen;
  if (gen !== null && s.canReach(gen)) s.emit({ type: 'engine.configure', gen, settings });
  s.persist(true);
}

/** After `failed`, a new send or mode switch is the user asking to try again: start the count over. */
export function resetRestarts(s: Step): void {
  s.ctx.restartAttempts = 0;
  s.ctx.lastError = null;
}

// ---------------------------------------------------------------- hibernation

/** Entering `idle`: with `hibernateAfterMs`, the agent is stopped after that long without activity. */
export function armHibernate(s: Step): void {
  if (s.ctx.config.hibernateAfterMs > 0) s.setTimer(TIMER.hibernate, s.at + s.ctx.config.hibernateAfterMs);
}

/** Idle long enough, measured from the engine's last sign of life, and no request waits for a human. */
export function isHibernateDue(ctx: SessionContext, at: number): boolean {
  return !hasOpenRequests(ctx) && at - ctx.lastActivityAt >= ctx.config.hibernateAfterMs;
}

/** The timer fired too early (activity since, or a request open): wait the rest of the window. */
export function rearmHibernate(s: Step): void {
  const from = hasOpenRequests(s.ctx) ? s.at : Math.max(s.ctx.lastActivityAt, s.at - s.ctx.config.hibernateAfterMs + 1);
  s.setTimer(TIMER.hibernate, from + s.ctx.config.hibernateAfterMs);
}

/**
 * A session stored while hibernated (and with nothing to send or settle) comes back hibernated: its
 * agent starts with the next send, not on restore.
 */
export function restoresHibernated(ctx: SessionContext): boolean {
  return (
    ctx.phase === 'hibernated' &&
    ctx.mode === 'remote' &&
    ctx.queue.length === 0 &&
    ctx.unconfirmed === null &&
    !ctx.recovery?.turn &&
    !hasOpenRequests(ctx)
  );
}

// ---------------------------------------------------------------- sends and turns

export function isDuplicateSend(ctx: SessionContext, localId: string): boolean {
  return (
    ctx.queue.some((q) => q.localId === localId) ||
    ctx.deliveredIds.includes(localId) ||
    ctx.turn?.localId === localId ||
    ctx.unconfirmed?.localId === localId
  );
}

export function rejectDuplicateSend(s: Step, e: Input<'send'>): void {
  s.clientError('DUPLICATE_SEND', `a message with localId "${e.localId}" was already accepted`, { localId: e.localId });
}

export function enqueueSend(s: Step, e: Input<'send'>): void {
  s.ctx.queue = [...s.ctx.queue, { localId: e.localId, text: e.text, queuedAt: s.at }];
  s.persist(true); // An accepted message must survive a host crash.
}

/**
 * A new send outside the states that handle it themselves. In local mode (switching to local, or
 * recovering a local engine) a send asks for remote control, as it does in `local`: otherwise it
 * would wait in the queue of a local engine that never takes queued messages.
 */
export function acceptSend(s: Step, e: Input<'send'>): void {
  enqueueSend(s, e);
  if (s.ctx.mode === 'local') setMode(s, 'remote');
}

/**
 * Hands the oldest queued message to the live engine: it leaves the queue exactly when it is sent.
 * The delivery is written at once, and the runtime performs `engine.send` only after that write is
 * stored (write-ahead): a restore never sends it a second time, and finds the turn in flight.
 */
export function deliverNext(s: Step): void {
  const [next, ...rest] = s.ctx.queue;
  const gen = s.ctx.liveGen;
  if (!next || gen === null) return;
  s.ctx.queue = rest;
  s.ctx.deliveredIds = [...s.ctx.deliveredIds.filter((id) => id !== next.localId), next.localId].slice(-s.ctx.config.deliveredIdsLimit);
  s.ctx.lastActivityAt = s.at;
  const eventId = s.transcript('user_message', { localId: next.localId, text: next.text });
  s.ctx.turn = { gen, localId: next.localId, text: next.text, eventId, startedAt: s.at, aborted: false, stalled: false };
  s.emit({ type: 'engine.send', gen, message: { localId: next.localId, text: next.text } });
  s.persist(true);
}

export function completeTurn(s: Step, e: AgentEventOf<'turn_complete'>): void {
  const turn = s.ctx.turn;
  const status = turn?.aborted || turn?.stalled ? 'cancelled' : e.status;
  s.ctx.usage = addUsage(s.ctx.usage, e.usage);
  s.transcript('turn_complete', {
    localId: turn?.localId,
    status,
    stopReason: e.stopReason,
    usage: e.usage,
  });
  s.ctx.turn = null;
  s.ctx.localTurn = false;
  cancelOpenRequests(s, 'turn ended', e.gen);
  setThinking(s, false);
  s.cancelTimer(TIMER.thinking);
  if (status === 'completed') s.ctx.restartAttempts = 0;
  s.persist(false);
}

export function addUsage(total: SessionContext['usage'], turn: TurnUsage): SessionContext['usage'] {
  return {
    inputTokens: total.inputTokens + turn.inputTokens,
    outputTokens: total.outputTokens + turn.outputTokens,
    cacheReadTokens: total.cacheReadTokens + turn.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + turn.cacheWriteTokens,
    costUsd: total.costUsd + (turn.costUsd ?? 0),
    turns: total.turns + 1,
  };
}

/** Asks the engine to stop the turn; used by `abort` and by the stall watchdog. */
export function interruptTurn(s: Step, why: 'aborted' | 'stalled'): void {
  const gen = s.ctx.liveGen;
  if (s.ctx.turn) s.ctx.turn = { ...s.ctx.turn, [why]: true };
  cancelOpenRequests(s, why === 'aborted' ? 'turn aborted' : 'turn stalled');
  if (gen !== null && s.canReach(gen)) s.emit({ type: 'engine.abort', gen });
  s.setTimer(TIMER.interrupt, s.at + s.ctx.config.interruptGraceMs);
  s.persist(true); // So `abort()` resolves once the abort is on record.
}

export function armStall(s: Step): void {
  if (s.ctx.config.stallTimeoutMs > 0) s.setTimer(TIMER.stall, s.at + s.ctx.config.stallTimeoutMs);
}

/** The stall timer fired too early to call the turn stalled: wait the rest of the window. */
export function rearmStall(s: Step): void {
  const waitingOnHuman = hasOpenRequests(s.ctx);
  const from = waitingOnHuman ? s.at : Math.max(s.ctx.lastActivityAt, s.at - s.ctx.config.stallTimeoutMs + 1);
  s.setTimer(TIMER.stall, from + s.ctx.config.stallTimeoutMs);
}

export function isStallDue(ctx: SessionContext, at: number): boolean {
  return !hasOpenRequests(ctx) && at - ctx.lastActivityAt >= ctx.config.stallTimeoutMs;
}

export function rejectAbort(s: Step): void {
  s.clientError('NOTHING_TO_ABORT', 'no turn is running');
}

// ---------------------------------------------------------------- permissions

export function hasOpenRequests(ctx: SessionContext): boolean {
  return Object.keys(ctx.requests).length > 0;
}

export function isNewRequest(ctx: SessionContext, requestId: string): boolean {
  return !(requestId in ctx.requests) && !(requestId in ctx.completed);
}

/**
 * Adds an outcome to the ledger, keeping only the newest `completedLimit` outcomes: the ledger is
 * written with every state write, so an unbounded one makes every turn of a long session slower.
 * (A decision on a pruned id is then refused as not found rather than as already decided.)
 */
function recordCompleted(s: Step, requestId: string, outcome: CompletedPermission): void {
  const entries = Object.entries({ ...s.ctx.completed, [requestId]: outcome });
  s.ctx.completed = Object.fromEntries(entries.slice(-s.ctx.config.completedLimit));
}

function closeRequest(s: Step, requestId: string, status: PermissionStatus, reason?: string): void {
  const open = s.ctx.requests[requestId];
  if (!open) return;
  const { [requestId]: _closed, ...rest } = s.ctx.requests;
  s.ctx.requests = rest;
  // The engine was (possibly) waiting on this answer: the stall watchdog measures quiet from now,
  // not from the request, so the time a human took to decide never counts as a stall.
  s.ctx.lastActivityAt = Math.max(s.ctx.lastActivityAt, s.at);
  recordCompleted(s, requestId, { status, decidedAt: s.at, gen: open.gen, ...(reason !== undefined && { reason }) });
  s.cancelTimer(TIMER.permission(requestId));
  s.transcript('permission_resolved', { requestId, status, reason }, open.gen);
  s.ephemeral({ kind: 'permission_resolved', requestId, status });
  s.persist(true);
}

/** Remote mode: record the request in the durable ledger, persist it, then prompt the clients. */
export function openPermission(s: Step, e: AgentEventOf<'permission_request'>): void {
  const ms = s.ctx.config.permissionTimeoutMs;
  const deadline = ms > 0 ? s.at + ms : undefined;
  recordRequest(s, e, { deadline });
  if (deadline !== undefined) s.setTimer(TIMER.permission(e.requestId), deadline);
  promptFor(s, e.requestId);
}

/** The request into the ledger and the transcript, written ahead of any prompt. */
function recordRequest(s: Step, e: AgentEventOf<'permission_request'>, how: { deadline?: number | undefined; local?: true }): void {
  const open = {
    toolName: e.toolName,
    input: e.input,
    gen: e.gen,
    createdAt: s.at,
    ...(e.callId !== undefined && { callId: e.callId }),
    ...(e.parentCallId !== undefined && { parentCallId: e.parentCallId }),
    ...(e.suggestions !== undefined && { suggestions: e.suggestions }),
    ...(how.deadline !== undefined && { deadline: how.deadline }),
  };
  s.ctx.requests = { ...s.ctx.requests, [e.requestId]: open };
  s.transcript('permission_request', { requestId: e.requestId, toolName: e.toolName, input: e.input, callId: e.callId, ...(e.parentCallId !== undefined && { parentCallId: e.parentCallId }), ...(how.local && { local: true }) }, e.gen);
  s.persist(true);
}

function promptFor(s: Step, requestId: string): void {
  const open = s.ctx.requests[requestId];
  if (!open) return;
  s.ephemeral({ kind: 'permission_prompt', ...permissionPromptOf(requestId, open) });
}

/**
 * Local mode: the dialog is on the local screen and in the durable ledger at once. Remote clients
 * are prompted and may answer (`decide`); the person at the terminal may answer first, which the
 * engine reports as `permission_cancelled` (closed `local`). First answer wins. No deadline: the
 * dialog belongs to the person at the terminal, and expiring it would answer for them.
 */
export function openLocalPermission(s: Step, e: AgentEventOf<'permission_request'>): void {
  recordRequest(s, e, { local: true });
  promptFor(s, e.requestId);
}

/** Local mode: the person at the terminal answered the dialog before any remote client did. */
export function answeredLocally(s: Step, e: AgentEventOf<'permission_cancelled'>): void {
  const open = s.ctx.requests[e.requestId];
  if (!open || open.gen !== e.gen) return;
  closeRequest(s, e.requestId, 'local', e.reason ?? 'answered in the local terminal');
}

/** A prompt typed in the local terminal reached the agent: a local turn runs until its `turn_complete`. */
export function noteLocalPrompt(s: Step, e: AgentEventOf<'message'>): void {
  recordOutput(s, e);
  s.ctx.localTurn = true;
}

/** Whether a turn runs that a handoff should let finish: a remote one, or one typed locally. */
export function agentBusy(ctx: SessionContext): boolean {
  return ctx.turn !== null || ctx.localTurn;
}

/**
 * A mode switch begins: with a turn running, wait (bounded by `handoffWaitMs`) for it to end, so
 * the agent is idle when its engine stops. Stopping a busy engine interrupts the turn.
 */
export function beginHandoff(s: Step): void {
  if (!agentBusy(s.ctx)) return;
  s.setTimer(TIMER.handoff, s.at + s.ctx.config.handoffWaitMs);
  s.transcript('handoff_waiting', { for: s.ctx.turn ? 'remote turn' : 'local turn', waitMs: s.ctx.config.handoffWaitMs });
}

/** A request arriving while its turn is being aborted or its engine stopped: refused at once. */
export function refusePermission(s: Step, e: AgentEventOf<'permission_request'>): void {
  recordCompleted(s, e.requestId, { status: 'cancelled', decidedAt: s.at, gen: e.gen, reason: 'no turn to continue' });
  s.transcript('permission_request', { requestId: e.requestId, toolName: e.toolName, input: e.input, refused: true }, e.gen);
  s.answer(e.gen, e.requestId, { behavior: 'deny', message: 'The turn is being stopped.', interrupt: true });
  s.persist(true);
}

export function decisionIsValid(ctx: SessionContext, e: Input<'decide'>): boolean {
  return e.requestId in ctx.requests;
}

export function applyDecision(s: Step, e: Input<'decide'>): void {
  const open = s.ctx.requests[e.requestId];
  if (!open) return;
  const decision =
    e.decision === 'allow'
      ? {
          behavior: 'allow' as const,
          ...(e.updatedInput !== undefined && { updatedInput: e.updatedInput }),
          ...(e.updatedPermissions !== undefined && { updatedPermissions: e.updatedPermissions }),
        }
      : { behavior: 'deny' as const, ...(e.message !== undefined && { message: e.message }), interrupt: false };
  s.answer(open.gen, e.requestId, decision);
  closeRequest(s, e.requestId, e.decision === 'allow' ? 'approved' : 'denied');
}

export function rejectDecision(s: Step, e: Input<'decide'>): void {
  const done = s.ctx.completed[e.requestId];
  if (done) {
    const where = done.status === 'local' ? ' (it was answered in the local terminal)' : '';
    s.clientError('PERMISSION_ALREADY_DECIDED', `permission request "${e.requestId}" already ended as ${done.status}${where}`, { requestId: e.requestId });
  } else {
    s.clientError('PERMISSION_NOT_FOUND', `no permission request "${e.requestId}" is known`, { requestId: e.requestId });
  }
}

/** The human did not answer in time: deny and interrupt, recorded as `timed_out` (not `denied`). */
export function expirePermission(s: Step, requestId: string): void {
  const open = s.ctx.requests[requestId];
  if (!open) return;
  s.answer(open.gen, requestId, { behavior: 'deny', message: 'No decision was made in time.', interrupt: true });
  closeRequest(s, requestId, 'timed_out');
}

/**
 * The agent withdrew its own request: close it `cancelled` without answering (nothing waits for
 * an answer any more), so a client cannot decide a prompt that no longer means anything.
 */
export function withdrawPermission(s: Step, e: AgentEventOf<'permission_cancelled'>): void {
  const open = s.ctx.requests[e.requestId];
  if (!open || open.gen !== e.gen) return;
  closeRequest(s, e.requestId, 'cancelled', e.reason ?? 'withdrawn by the agent');
}

/** Ends the open requests of `gen` (default: all) as `cancelled`. */
export function cancelOpenRequests(s: Step, reason: string, gen?: number): void {
  for (const [id, open] of Object.entries(s.ctx.requests)) {
    if (gen === undefined || open.gen === gen) closeRequest(s, id, 'cancelled', reason);
  }
}

/**
 * On restore after the host stopped (crashed, was killed, or lost its lease): close what the dead
 * host left open, so every turn and request ends exactly once.
 * - Requests of a generation that no longer exists can never be answered: `cancelled`.
 * - The turn in flight ends `interrupted`, unless the journal shows it ended after the state was
 *   written (its usage is then added). If the journal lacks its `user_message` (the host died between
 *   the state write and the journal append), that entry is written first. Unless the journal shows the
 *   agent answering, nobody knows whether the message reached the agent: it becomes `unconfirmed`
 *   and the next remote engine is asked before anything else is sent.
 * - Turns and requests the journal opened and never closed (earlier crashes) are closed too, and a
 *   turn typed in the local terminal that the dead host's terminal UI was answering.
 */
export function recoverRestored(s: Step): void {
  const recovery = s.ctx.recovery;
  s.ctx.recovery = null;
  const facts = recovery?.facts;
  const reason = 'session restarted before a decision';
  for (const { requestId, gen } of facts?.openRequests ?? []) {
    if (requestId in s.ctx.requests) continue; // Closed below, like every stored open request.
    const done = s.ctx.completed[requestId];
    if (done) {
      // Decided and stored, but the journal never got the outcome: catch it up.
      s.transcript('permission_resolved', { requestId, status: done.status, reason: done.reason }, gen);
      continue;
    }
    recordCompleted(s, requestId, { status: 'cancelled', decidedAt: s.at, gen, reason });
    s.transcript('permission_resolved', { requestId, status: 'cancelled', reason }, gen);
  }
  for (const { localId, gen } of facts?.openTurns ?? []) {
    s.transcript('turn_ended', { localId, status: 'interrupted', reason: 'the host stopped during the turn' }, gen);
  }
  // A turn typed at the desk (local mode) that the dead host's terminal UI was answering.
  if (facts?.openLocalTurn) s.transcript('turn_ended', { status: 'interrupted', reason: 'the host stopped during the turn', local: true }, facts.openLocalTurn.gen);
  const turn = recovery?.turn;
  if (turn) {
    const ended = facts?.turnEnded;
    if (facts && !facts.turnJournaled) s.transcript('user_message', { localId: turn.localId, text: turn.text, recovered: true }, turn.gen);
    if (ended?.type === 'turn_complete') s.ctx.usage = addUsage(s.ctx.usage, ended.usage);
    else if (!ended) s.transcript('turn_ended', { localId: turn.localId, status: 'interrupted', reason: 'the host stopped during the turn' }, turn.gen);
    // Not known to have reached the agent: ask. (Also when an earlier recovery already ended the
    // turn in the journal but died before storing the question.)
    if ((!ended || (ended.type === 'turn_ended' && ended.interrupted)) && !facts?.agentResponded) {
      s.ctx.unconfirmed = { localId: turn.localId, text: turn.text, gen: turn.gen };
    }
  }
  cancelOpenRequests(s, reason);
  s.persist(true);
}

/** A resumed remote engine is ready and a crash left a message maybe-delivered: ask it first. */
export function checkDelivery(s: Step): void {
  const unconfirmed = s.ctx.unconfirmed;
  const gen = s.ctx.liveGen;
  if (!unconfirmed || gen === null) return;
  s.emit({ type: 'engine.check_delivery', gen, message: { localId: unconfirmed.localId, text: unconfirmed.text } });
}

export function isCheckOfUnconfirmed(ctx: SessionContext, e: Extract<RuntimeEvent, { type: 'delivery_checked' }>): boolean {
  return ctx.unconfirmed?.localId === e.localId;
}

/**
 * The engine answered: a message the agent never got goes out again, first (its `localId` stays
 * refused for new sends); one it got, or one nobody can tell about, is not sent again (at most
 * once: the client saw its turn end `interrupted` and decides).
 */
export function resolveDelivery(s: Step, e: Extract<RuntimeEvent, { type: 'delivery_checked' }>): void {
  const unconfirmed = s.ctx.unconfirmed;
  if (!unconfirmed) return;
  s.ctx.unconfirmed = null;
  s.transcript('delivery_checked', { localId: unconfirmed.localId, received: e.received });
  if (e.received === false) {
    s.ctx.deliveredIds = s.ctx.deliveredIds.filter((id) => id !== unconfirmed.localId);
    s.ctx.queue = [{ localId: unconfirmed.localId, text: unconfirmed.text, queuedAt: s.at }, ...s.ctx.queue];
  }
  s.persist(true);
}

// ---------------------------------------------------------------- presence, activity, identity

export function goOnline(s: Step, online: boolean): void {
  s.ctx.online = online;
  s.ephemeral({ kind: 'presence', online });
  if (online) for (const id of Object.keys(s.ctx.requests)) promptFor(s, id);
}

function setThinking(s: Step, active: boolean): void {
  if (s.ctx.thinking === active) return;
  s.ctx.thinking = active;
  s.ephemeral({ kind: 'thinking', active });
}

/** Any engine output: the agent is busy. The indicator clears itself after a quiet period. */
export function noteActivity(s: Step, active = true): void {
  if (!active) {
    setThinking(s, false);
    s.cancelTimer(TIMER.thinking);
    return;
  }
  if (!s.ctx.thinking) {
    setThinking(s, true);
    s.setTimer(TIMER.thinking, s.at + s.ctx.config.thinkingClearMs);
  }
}

export function thinkingTimerFired(s: Step): void {
  const quietFor = s.at - s.ctx.lastActivityAt;
  if (quietFor >= s.ctx.config.thinkingClearMs) setThinking(s, false);
  else s.setTimer(TIMER.thinking, s.ctx.lastActivityAt + s.ctx.config.thinkingClearMs);
}

export function identifySession(s: Step, e: AgentEventOf<'session_identified'>): void {
  const expected = s.ctx.expectedResumeToken;
  if (expected !== undefined && expected !== e.resumeToken) {
    s.clientError('RESUME_FORKED', `resuming "${expected}" started a different agent session "${e.resumeToken}"`);
  }
  s.ctx.resumeToken = e.resumeToken;
  s.ctx.expectedResumeToken = e.resumeToken;
  if (e.transcriptPath !== undefined) s.ctx.transcriptPath = e.transcriptPath;
  s.transcript('session_identified', { resumeToken: e.resumeToken, transcriptPath: e.transcriptPath, forkedFrom: expected !== e.resumeToken ? expected : undefined }, e.gen);
  s.persist(false);
}

export function recordEngineError(s: Step, e: AgentEventOf<'error'>): void {
  s.ctx.lastError = { kind: e.kind, message: e.message, retryable: e.retryable, gen: e.gen, at: e.at };
  s.transcript('error', { kind: e.kind, message: e.message, retryable: e.retryable }, e.gen);
}

/** A warning (an untested agent version) goes into the transcript and changes nothing else. */
export function recordEngineWarning(s: Step, e: AgentEventOf<'warning'>): void {
  s.transcript('warning', { code: e.code, message: e.message }, e.gen);
}

/** The completion backstop's verdict on a finished turn: a durable transcript entry, nothing else changes. */
export function recordVerification(s: Step, e: { localId: string; verdict: 'verified' | 'unverified'; reason: string }): void {
  s.transcript('turn_verified', { localId: e.localId, verdict: e.verdict, reason: e.reason });
}

export function recordOutput(s: Step, e: AgentEventOf<'message' | 'tool_call' | 'tool_result'>): void {
  const { gen, at: _at, type, ...payload } = e;
  s.transcript(type, payload, gen);
  noteActivity(s);
}

/** The agent's plan or mode: kept in the transcript (what it set out to do, how it was allowed to act). */
export function recordAgentState(s: Step, e: AgentEventOf<'plan' | 'agent_mode'>): void {
  const { gen, at: _at, type, ...payload } = e;
  s.transcript(type, payload, gen);
  noteActivity(s);
}

export function engineReady(s: Step): void {
  s.ctx.lastError = null;
  if (s.ctx.mode === 'local') s.ctx.restartAttempts = 0;
}

// ---------------------------------------------------------------- persistence results

export function persistSucceeded(s: Step, version: number): void {
  s.ctx.version = version;
  const { dirty, urgent } = s.ctx.persist;
  s.ctx.persist = { inFlight: false, dirty: false, urgent: false, retries: 0 };
  if (dirty) s.persist(urgent);
}

/**
 * Another writer got there first. Reload = take its version; reapply = our live state wins for what
 * this actor owns, decisions recorded by either side are kept; then retry (bounded by the caller).
 */
export function retryPersist(s: Step, version: number, stored: PersistedSession | undefined): void {
  if (stored) s.ctx.completed = { ...stored.completed, ...s.ctx.completed };
  s.ctx.version = version;
  s.ctx.persist = { ...s.ctx.persist, retries: s.ctx.persist.retries + 1 };
  s.writeNow(version);
}

export function persistGaveUp(s: Step, message: string): void {
  s.ctx.persist = { inFlight: false, dirty: true, urgent: false, retries: 0 };
  s.clientError('PERSIST_FAILED', `could not persist the session: ${message}`);
}
