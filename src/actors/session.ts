/**
 * The SessionActor: an XState v5 statechart that owns all session policy and performs no I/O.
 *
 * - No `invoke`, no `after`, no delayed actions: engines and timers are effects it emits
 *   (`engine.*`, `timer.set`) and their outcomes come back as events (`ready`, `timer_fired`, ...).
 *   That keeps the machine pure, walkable by `xstate/graph`, and its snapshots persistable.
 * - Every engine event carries `gen`; only events of the live generation are handled. A stale
 *   event matches no transition, so it changes nothing and emits nothing.
 * - The states say *when*; `session-policy.ts` says *what* (context changes and effects).
 */
import { and, not, setup } from 'xstate';
import type { AgentEvent } from '../events/agent-event.js';
import type { RuntimeEvent } from '../events/runtime-event.js';
import type { SessionInput } from '../events/session-input.js';
import type { SessionPhase } from '../events/session-state.js';
import type { Effect } from '../events/effect.js';
import { createSessionContext, type SessionContext, type SessionMachineInput } from './session-context.js';
import * as policy from './session-policy.js';
import { TIMER } from './session-policy.js';
import { Step } from './session-step.js';
import { applyOutput, type AgentOutputEvent } from './agent-output.js';

/** Client inputs and runtime reports are stamped with the time the runtime received them. */
export type Stamped<T> = T & { at: number };
export type SessionEvent = AgentEvent | Stamped<SessionInput> | Stamped<RuntimeEvent> | AgentOutputEvent;
export type SessionEventType = SessionEvent['type'];
type EventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;

/**
 * A step's effects emitted as one event, in order: what an actor registered with
 * {@link emitEffectsInBatches} (the runtime's) emits instead of one `emit` per effect. XState's
 * machinery per emitted event (an action resolved, executed, deferred and dispatched) cost more
 * than the policy itself on a dense agent stream (issue 24). Pure `transition()` callers and any
 * other actor still get one `xstate.emit` action per effect.
 */
export type EffectBatch = { type: 'effects'; effects: Effect[] };

/** Actors whose steps emit an {@link EffectBatch} (held weakly: an actor that is gone drops out). */
const batching = new WeakSet<object>();

/** Makes `actor` (a running SessionActor) emit each step's effects as one {@link EffectBatch}. */
export function emitEffectsInBatches(actor: object): void {
  batching.add(actor);
}

export function isEffectBatch(emitted: Effect | EffectBatch): emitted is EffectBatch {
  return emitted.type === 'effects';
}

const base = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    emitted: {} as Effect | EffectBatch,
    input: {} as SessionMachineInput,
  },
  guards: {
    fromLiveEngine: ({ context, event }) => 'gen' in event && event.gen === context.liveGen,
    isTimer: ({ context, event }, params: { id: string }) =>
      event.type === 'timer_fired' && event.id === params.id && params.id in context.timers,
    isPermissionTimer: ({ context, event }) => {
      if (event.type !== 'timer_fired' || !(event.id in context.timers)) return false;
      const requestId = policy.permissionIdOfTimer(event.id);
      return requestId !== undefined && requestId in context.requests;
    },
    stallDue: ({ context, event }) => policy.isStallDue(context, event.at),
    hasQueued: ({ context }) => context.queue.length > 0,
    isNewSend: ({ context, event }) => event.type === 'send' && !policy.isDuplicateSend(context, event.localId),
    isDuplicateSend: ({ context, event }) => event.type === 'send' && policy.isDuplicateSend(context, event.localId),
    isNewRequest: ({ context, event }) => event.type === 'permission_request' && policy.isNewRequest(context, event.requestId),
    decisionIsValid: ({ context, event }) => event.type === 'decide' && policy.decisionIsValid(context, event),
    switchesTo: ({ context, event }, params: { mode: 'local' | 'remote' }) =>
      event.type === 'switch_mode' && event.to === params.mode && context.mode !== params.mode,
    changesMode: ({ context, event }) => event.type === 'switch_mode' && event.to !== context.mode,
    inLocalMode: ({ context }) => context.mode === 'local',
    agentIdle: ({ context }) => !policy.agentBusy(context),
    isUserMessage: ({ event }) => event.type === 'message' && event.role === 'user',
    cleanExit: ({ event }) => event.type === 'exited' && event.code === 0 && event.signal === null,
    restartsExhausted: ({ context }) => policy.restartsExhausted(context),
    noLiveEngine: ({ context }) => context.liveGen === null,
    wasRestored: ({ context }) => context.recovery !== null || Object.keys(context.requests).length > 0,
    hasUnconfirmed: ({ context }) => context.unconfirmed !== null,
    isCheckOfUnconfirmed: ({ context, event }) => event.type === 'delivery_checked' && policy.isCheckOfUnconfirmed(context, event),
    /** After the check something goes out: the unconfirmed message itself (never received) or the queue. */
    sendsAfterCheck: ({ context, event }) => event.type === 'delivery_checked' && (event.received === false || context.queue.length > 0),
    hibernateDue: ({ context, event }) => policy.isHibernateDue(context, event.at),
    restoresHibernated: ({ context }) => policy.restoresHibernated(context),
    persistInFlight: ({ context }) => context.persist.inFlight,
    canRetryPersist: ({ context }) => context.persist.retries < context.config.maxPersistRetries,
  },
});

/** Builds an action from a policy function: one `assign` with the new context, then the effects. */
function act<T extends SessionEventType = SessionEventType>(fn: (s: Step, e: EventOf<T>) => void) {
  return base.enqueueActions(({ context, event, enqueue, self }) => {
    // Every event but xstate's own init is stamped; init happens at the session's creation time.
    const step = new Step(context, 'at' in event ? event.at : context.now);
    step.ctx.now = Math.max(context.now, step.at);
    // Any event of the live engine is a sign of life: the stall watchdog and the thinking
    // indicator measure quiet from here.
    if ('gen' in event && event.gen === context.liveGen) step.ctx.lastActivityAt = Math.max(step.ctx.lastActivityAt, step.at);
    if (event.type === 'timer_fired' && event.id in step.ctx.timers) {
      // The runtime has already fired it: forget it without emitting a cancel.
      const { [event.id]: _fired, ...rest } = step.ctx.timers;
      step.ctx.timers = rest;
    }
    fn(step, event as EventOf<T>);
    // The function form: xstate merges what it returns once, instead of copying the object key by key first.
    enqueue.assign(() => step.ctx);
    emitEffects(enqueue, self, step.effects);
  });
}

/** A refused input: the client hears why; the context does not change at all. */
function refuse<T extends SessionEventType = SessionEventType>(fn: (s: Step, e: EventOf<T>) => void) {
  return base.enqueueActions(({ context, event, enqueue, self }) => {
    const step = new Step(context, context.now);
    fn(step, event as EventOf<T>);
    emitEffects(enqueue, self, step.effects);
  });
}

/** One `emit` per effect, or one {@link EffectBatch} for an actor that asked for it. */
function emitEffects(enqueue: { emit(emitted: Effect | EffectBatch): void }, self: object, effects: Effect[]): void {
  if (!batching.has(self)) for (const effect of effects) enqueue.emit(effect);
  else if (effects.length > 0) enqueue.emit({ type: 'effects', effects });
}

const enter = (phase: SessionPhase, detail?: string) => act((s) => policy.enterPhase(s, phase, detail));
const launch = act((s) => policy.launchEngine(s));
const toMode = [
  { guard: 'inLocalMode', target: '#session.local' },
  { target: '#session.remote' },
] as const;

export const sessionMachine = base.createMachine({
  id: 'session',
  context: ({ input }) => createSessionContext(input),
  initial: 'init',
  on: {
    send: [
      { guard: 'isDuplicateSend', actions: refuse<'send'>(policy.rejectDuplicateSend) },
      { actions: act<'send'>(policy.acceptSend) },
    ],
    abort: { actions: refuse(policy.rejectAbort) },
    switch_mode: { guard: 'changesMode', actions: act<'switch_mode'>((s, e) => policy.setMode(s, e.to)) },
    decide: [
      { guard: 'decisionIsValid', actions: act<'decide'>(policy.applyDecision) },
      { actions: refuse<'decide'>(policy.rejectDecision) },
    ],
    set_model: { actions: act<'set_model'>((s, e) => policy.changeSettings(s, { model: e.model })) },
    set_permission_mode: { actions: act<'set_permission_mode'>((s, e) => policy.changeSettings(s, { permissionMode: e.mode })) },
    client_online: { actions: act((s) => policy.goOnline(s, true)) },
    client_offline: { actions: act((s) => policy.goOnline(s, false)) },
    record_verification: { actions: act<'record_verification'>(policy.recordVerification) },
    stop: { target: '#session.stopping' },

    session_identified: { guard: 'fromLiveEngine', actions: act<'session_identified'>(policy.identifySession) },
    // A sign of life and nothing else: `act` moves lastActivityAt, which is all the watchdog needs.
    activity: { guard: 'fromLiveEngine', actions: act(() => undefined) },
    thinking: { guard: 'fromLiveEngine', actions: act<'thinking'>((s, e) => policy.noteActivity(s, e.active)) },
    text_delta: { guard: 'fromLiveEngine', actions: act((s) => policy.noteActivity(s)) },
    message: { guard: 'fromLiveEngine', actions: act<'message'>(policy.recordOutput) },
    tool_call: { guard: 'fromLiveEngine', actions: act<'tool_call'>(policy.recordOutput) },
    tool_result: { guard: 'fromLiveEngine', actions: act<'tool_result'>(policy.recordOutput) },
    error: { guard: 'fromLiveEngine', actions: act<'error'>(policy.recordEngineError) },
    warning: { guard: 'fromLiveEngine', actions: act<'warning'>(policy.recordEngineWarning) },
    // The agent's session state: plan and mode are kept in the transcript, the gauges only count as life.
    plan: { guard: 'fromLiveEngine', actions: act<'plan'>(policy.recordAgentState) },
    agent_mode: { guard: 'fromLiveEngine', actions: act<'agent_mode'>(policy.recordAgentState) },
    available_commands: { guard: 'fromLiveEngine', actions: act((s) => policy.noteActivity(s)) },
    context_usage: { guard: 'fromLiveEngine', actions: act((s) => policy.noteActivity(s)) },
    // Consecutive events of the lines above, handed over together by the runtime (agent-output.ts).
    agent_output: { guard: 'fromLiveEngine', actions: act<'agent_output'>(applyOutput) },
    turn_complete: { guard: 'fromLiveEngine', actions: act<'turn_complete'>(policy.completeTurn) },
    permission_request: {
      guard: and(['fromLiveEngine', 'isNewRequest']),
      actions: act<'permission_request'>(policy.refusePermission),
    },
    permission_cancelled: { guard: 'fromLiveEngine', actions: act<'permission_cancelled'>(policy.withdrawPermission) },

    timer_fired: [
      { guard: 'isPermissionTimer', actions: act<'timer_fired'>((s, e) => policy.expirePermission(s, policy.permissionIdOfTimer(e.id)!)) },
      { guard: { type: 'isTimer', params: { id: TIMER.thinking } }, actions: act(policy.thinkingTimerFired) },
      { guard: { type: 'isTimer', params: { id: TIMER.persist } }, actions: act((s) => s.writeNow()) },
    ],
    persist_ok: { guard: 'persistInFlight', actions: act<'persist_ok'>((s, e) => policy.persistSucceeded(s, e.version)) },
    persist_conflict: [
      {
        guard: and(['persistInFlight', 'canRetryPersist']),
        actions: act<'persist_conflict'>((s, e) => policy.retryPersist(s, e.version, e.stored)),
      },
      {
        guard: 'persistInFlight',
        actions: act<'persist_conflict'>((s, e) => policy.persistGaveUp(s, `version conflict (store is at ${e.version})`)),
      },
    ],
    persist_failed: { guard: 'persistInFlight', actions: act<'persist_failed'>((s, e) => policy.persistGaveUp(s, e.message)) },
  },
  states: {
    /** Resolves the starting mode; a restored session first closes what its dead host left open. */
    init: {
      always: [
        { guard: 'restoresHibernated', target: 'hibernated.asleep', actions: act(policy.recoverRestored) },
        { guard: and(['wasRestored', 'inLocalMode']), target: 'local', actions: act(policy.recoverRestored) },
        { guard: 'wasRestored', target: 'remote', actions: act(policy.recoverRestored) },
        ...toMode,
      ],
    },

    /**
     * The person at the terminal drives the agent's own UI; the session observes. A permission
     * dialog shown there is in the ledger too: a remote client may answer it (first answer wins).
     */
    local: {
      initial: 'launching',
      on: {
        send: {
          guard: 'isNewSend',
          target: '#session.handoff',
          actions: act<'send'>((s, e) => {
            policy.enqueueSend(s, e);
            policy.setMode(s, 'remote');
          }),
        },
        switch_mode: {
          guard: { type: 'switchesTo', params: { mode: 'remote' } },
          target: '#session.handoff',
          actions: act<'switch_mode'>((s, e) => policy.setMode(s, e.to)),
        },
        message: { guard: and(['fromLiveEngine', 'isUserMessage']), actions: act<'message'>(policy.noteLocalPrompt) },
        permission_request: {
          guard: and(['fromLiveEngine', 'isNewRequest']),
          actions: act<'permission_request'>(policy.openLocalPermission),
        },
        permission_cancelled: { guard: 'fromLiveEngine', actions: act<'permission_cancelled'>(policy.answeredLocally) },
        exited: [
          // Quitting the agent's own UI ends the session (documented policy).
          { guard: and(['fromLiveEngine', 'cleanExit']), target: '#session.stopped', actions: act<'exited'>(policy.engineGone) },
          { guard: 'fromLiveEngine', target: '#session.recovering', actions: act<'exited'>(policy.engineGone) },
        ],
      },
      states: {
        launching: {
          entry: [launch, enter('starting')],
          on: { ready: { guard: 'fromLiveEngine', target: 'active', actions: act(policy.engineReady) } },
        },
        active: { entry: enter('local') },
      },
    },

    /** A remote client drives the agent through the structured protocol. */
    remote: {
      initial: 'launching',
      on: {
        switch_mode: {
          guard: { type: 'switchesTo', params: { mode: 'local' } },
          target: '#session.handoff',
          actions: act<'switch_mode'>((s, e) => policy.setMode(s, e.to)),
        },
        permission_request: {
          guard: and(['fromLiveEngine', 'isNewRequest']),
          actions: act<'permission_request'>(policy.openPermission),
        },
        exited: { guard: 'fromLiveEngine', target: '#session.recovering', actions: act<'exited'>(policy.engineGone) },
      },
      states: {
        launching: {
          entry: [launch, enter('starting')],
          on: {
            ready: [
              { guard: and(['fromLiveEngine', 'hasUnconfirmed']), target: 'confirming', actions: act(policy.engineReady) },
              { guard: and(['fromLiveEngine', 'hasQueued']), target: 'running', actions: act(policy.engineReady) },
              { guard: 'fromLiveEngine', target: 'idle', actions: act(policy.engineReady) },
            ],
          },
        },
        /**
         * After a host crash it is unknown whether the turn's message reached the agent: the resumed
         * engine is asked before anything else goes out (phase stays `starting`).
         */
        confirming: {
          entry: act(policy.checkDelivery),
          on: {
            delivery_checked: [
              {
                guard: and(['fromLiveEngine', 'isCheckOfUnconfirmed', 'sendsAfterCheck']),
                target: 'running',
                actions: act<'delivery_checked'>(policy.resolveDelivery),
              },
              { guard: and(['fromLiveEngine', 'isCheckOfUnconfirmed']), target: 'idle', actions: act<'delivery_checked'>(policy.resolveDelivery) },
            ],
          },
        },
        idle: {
          entry: [enter('idle'), act(policy.armHibernate)],
          exit: act((s) => s.cancelTimer(TIMER.hibernate)),
          on: {
            send: { guard: 'isNewSend', target: 'running', actions: act<'send'>(policy.enqueueSend) },
            timer_fired: [
              { guard: and([{ type: 'isTimer', params: { id: TIMER.hibernate } }, 'hibernateDue']), target: '#session.hibernated' },
              { guard: { type: 'isTimer', params: { id: TIMER.hibernate } }, actions: act(policy.rearmHibernate) },
            ],
          },
        },
        running: {
          // Entered with a non-empty queue: the head goes out now, the rest after each turn.
          entry: [act(policy.deliverNext), enter('running'), act(policy.armStall)],
          exit: act((s) => s.cancelTimer(TIMER.stall)),
          on: {
            abort: { target: 'interrupting', actions: act((s) => policy.interruptTurn(s, 'aborted')) },
            turn_complete: [
              { guard: and(['fromLiveEngine', 'hasQueued']), target: 'running', reenter: true, actions: act<'turn_complete'>(policy.completeTurn) },
              { guard: 'fromLiveEngine', target: 'idle', actions: act<'turn_complete'>(policy.completeTurn) },
            ],
            timer_fired: [
              {
                guard: and([{ type: 'isTimer', params: { id: TIMER.stall } }, 'stallDue']),
                target: 'interrupting',
                actions: act((s) => policy.interruptTurn(s, 'stalled')),
              },
              { guard: { type: 'isTimer', params: { id: TIMER.stall } }, actions: act(policy.rearmStall) },
            ],
          },
        },
        /** Waiting for the engine to end the turn after an abort or a stall; restarts it if it does not. */
        interrupting: {
          entry: enter('interrupting'),
          exit: act((s) => s.cancelTimer(TIMER.interrupt)),
          on: {
            abort: {},
            permission_request: {
              guard: and(['fromLiveEngine', 'isNewRequest']),
              actions: act<'permission_request'>(policy.refusePermission),
            },
            turn_complete: [
              { guard: and(['fromLiveEngine', 'hasQueued']), target: 'running', actions: act<'turn_complete'>(policy.completeTurn) },
              { guard: 'fromLiveEngine', target: 'idle', actions: act<'turn_complete'>(policy.completeTurn) },
            ],
            timer_fired: {
              guard: { type: 'isTimer', params: { id: TIMER.interrupt } },
              target: '#session.switching',
              actions: act((s) => s.transcript('interrupt_timed_out', { afterMs: s.ctx.config.interruptGraceMs })),
            },
          },
        },
      },
    },

    /**
     * A mode switch, first step: let a running turn (remote, or typed in the local terminal) end,
     * so the agent is idle when its engine stops. Idle: on at once. Bounded by `handoffWaitMs`;
     * then the stop interrupts the turn. Sends meanwhile are queued (a send asks for remote).
     */
    handoff: {
      entry: act(policy.beginHandoff),
      exit: act((s) => s.cancelTimer(TIMER.handoff)),
      always: { guard: 'agentIdle', target: 'switching' },
      on: {
        turn_complete: { guard: 'fromLiveEngine', target: 'switching', actions: act<'turn_complete'>(policy.completeTurn) },
        timer_fired: {
          guard: { type: 'isTimer', params: { id: TIMER.handoff } },
          target: 'switching',
          actions: act((s) => s.transcript('handoff_timed_out', { afterMs: s.ctx.config.handoffWaitMs })),
        },
        exited: [
          { guard: and(['fromLiveEngine', 'inLocalMode']), target: 'local', actions: act<'exited'>(policy.engineGone) },
          { guard: 'fromLiveEngine', target: 'remote', actions: act<'exited'>(policy.engineGone) },
        ],
      },
    },

    /**
     * Handing over between generations (mode switch, or restart after a failed interrupt): the old
     * engine is stopped and the next one starts only after it exited or the stop timeout fired.
     */
    switching: {
      entry: [act((s) => policy.endGeneration(s, 'engine handing over')), act(policy.stopEngine), enter('switching')],
      on: {
        exited: [
          { guard: and(['fromLiveEngine', 'inLocalMode']), target: 'local', actions: act<'exited'>(policy.engineGone) },
          { guard: 'fromLiveEngine', target: 'remote', actions: act<'exited'>(policy.engineGone) },
        ],
        timer_fired: [
          {
            guard: and([{ type: 'isTimer', params: { id: TIMER.stop } }, 'inLocalMode']),
            target: 'local',
            actions: act(policy.abandonEngine),
          },
          { guard: { type: 'isTimer', params: { id: TIMER.stop } }, target: 'remote', actions: act(policy.abandonEngine) },
        ],
      },
    },

    /**
     * Idle past `hibernateAfterMs`: the agent is stopped to free its process, and the session waits
     * without one (phase `hibernated`); the next send starts it again with the resume token. A send
     * or a mode switch while it is still stopping is kept and acted on once it exited.
     */
    hibernated: {
      entry: enter('hibernated'),
      initial: 'stopping',
      states: {
        stopping: {
          entry: act(policy.stopEngine),
          on: {
            exited: [
              { guard: and(['fromLiveEngine', 'inLocalMode']), target: '#session.local', actions: act<'exited'>(policy.engineGone) },
              { guard: and(['fromLiveEngine', 'hasQueued']), target: '#session.remote', actions: act<'exited'>(policy.engineGone) },
              { guard: 'fromLiveEngine', target: 'asleep', actions: act<'exited'>(policy.engineGone) },
            ],
            timer_fired: [
              { guard: and([{ type: 'isTimer', params: { id: TIMER.stop } }, 'inLocalMode']), target: '#session.local', actions: act(policy.abandonEngine) },
              { guard: and([{ type: 'isTimer', params: { id: TIMER.stop } }, 'hasQueued']), target: '#session.remote', actions: act(policy.abandonEngine) },
              { guard: { type: 'isTimer', params: { id: TIMER.stop } }, target: 'asleep', actions: act(policy.abandonEngine) },
            ],
          },
        },
        /** No agent process: the next send (or a switch to local) starts one. */
        asleep: {
          on: {
            send: { guard: 'isNewSend', target: '#session.remote', actions: act<'send'>(policy.enqueueSend) },
            switch_mode: {
              guard: { type: 'switchesTo', params: { mode: 'local' } },
              target: '#session.local',
              actions: act<'switch_mode'>((s, e) => policy.setMode(s, e.to)),
            },
          },
        },
      },
    },

    /** The engine died unexpectedly: wait (exponential backoff), then start again with the resume token. */
    recovering: {
      entry: [act(policy.countCrash), enter('recovering'), act(policy.scheduleRestart)],
      exit: act((s) => s.cancelTimer(TIMER.restart)),
      always: { guard: 'restartsExhausted', target: 'failed' },
      on: {
        timer_fired: [
          { guard: and([{ type: 'isTimer', params: { id: TIMER.restart } }, 'inLocalMode']), target: 'local' },
          { guard: { type: 'isTimer', params: { id: TIMER.restart } }, target: 'remote' },
        ],
      },
    },

    /** Too many crashes, or an error that retrying cannot fix. A new send or a mode switch tries again. */
    failed: {
      entry: [enter('failed'), act(policy.surfaceFailure)],
      on: {
        send: {
          guard: 'isNewSend',
          target: 'remote',
          actions: act<'send'>((s, e) => {
            policy.resetRestarts(s);
            policy.enqueueSend(s, e);
            if (s.ctx.mode !== 'remote') policy.setMode(s, 'remote');
          }),
        },
        switch_mode: [
          {
            guard: { type: 'switchesTo', params: { mode: 'local' } },
            target: 'local',
            actions: act<'switch_mode'>((s, e) => {
              policy.resetRestarts(s);
              policy.setMode(s, e.to);
            }),
          },
          {
            guard: { type: 'switchesTo', params: { mode: 'remote' } },
            target: 'remote',
            actions: act<'switch_mode'>((s, e) => {
              policy.resetRestarts(s);
              policy.setMode(s, e.to);
            }),
          },
        ],
      },
    },

    /** `stop`: everything open ends `cancelled`, the engine is stopped, then the session is final. */
    stopping: {
      entry: [act(policy.beginStop), enter('stopping')],
      always: { guard: 'noLiveEngine', target: 'stopped' },
      on: {
        stop: {},
        send: { actions: refuse<'send'>((s, e) => s.clientError('SESSION_STOPPED', 'the session is stopping', { localId: e.localId })) },
        set_model: { actions: refuse((s) => s.clientError('SESSION_STOPPED', 'the session is stopping')) },
        set_permission_mode: { actions: refuse((s) => s.clientError('SESSION_STOPPED', 'the session is stopping')) },
        switch_mode: {},
        exited: { guard: 'fromLiveEngine', target: 'stopped', actions: act<'exited'>(policy.engineGone) },
        timer_fired: { guard: { type: 'isTimer', params: { id: TIMER.stop } }, target: 'stopped', actions: act(policy.abandonEngine) },
      },
    },

    stopped: {
      type: 'final',
      entry: act(policy.finish),
    },
  },
});

export type SessionMachine = typeof sessionMachine;
