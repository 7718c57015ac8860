/**
 * Hibernation in the SessionActor, driven through the pure transition API: an idle remote session
 * stops its agent after `hibernateAfterMs` without activity (phase `hibernated`), and the next send
 * starts it again with the resume token. Activity or an open request postpones it; a send, a mode
 * switch or a stop while the agent is still stopping are kept; a stored hibernated session comes
 * back hibernated, without an agent.
 */
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/actors/session.js';
import { ZERO_USAGE } from '../../src/events/agent-event.js';
import type { Effect } from '../../src/events/effect.js';
import type { VersionedSession } from '../../src/events/session-state.js';
import { feed, fire, only, settleWrites, start, type SessionSnapshot } from '../support/machine.js';

const HIBERNATE_MS = 5_000;
const engineFx = (effects: Effect[]) => only(effects, 'engine.start', 'engine.stop', 'engine.send', 'engine.abort', 'engine.answer_permission');
const statuses = (effects: Effect[]) => only(effects, 'ephemeral.emit').filter((e) => e.kind === 'status').map((e) => (e as { phase: string }).phase);
const send = (localId: string, at: number): SessionEvent => ({ type: 'send', localId, text: `text ${localId}`, at });
const exited = (gen: number, at: number): SessionEvent => ({ type: 'exited', gen, at, code: 0, signal: null, reason: 'stopped' });

/** A remote session idle on gen 1 (identified as `tok-1`) since 1_100, writes settled. */
function idle(hibernateAfterMs = HIBERNATE_MS): SessionSnapshot {
  const [s0] = start({ config: { hibernateAfterMs } });
  const [s1] = feed(settleWrites(s0, 1_000), { type: 'session_identified', gen: 1, at: 1_050, resumeToken: 'tok-1' }, { type: 'ready', gen: 1, at: 1_100 });
  expect(s1.value).toEqual({ remote: 'idle' });
  return settleWrites(s1, 1_100);
}

/** `idle()`, hibernated: the timer fired and gen 1 exited. */
function asleep(): SessionSnapshot {
  const [stopping] = fire(idle(), 'hibernate');
  const [s] = feed(stopping, exited(1, 6_200));
  expect(s.value).toEqual({ hibernated: 'asleep' });
  return s;
}

describe('hibernation', () => {
  it('idle past hibernateAfterMs: the agent is stopped, the phase is hibernated, and no engine is live', () => {
    const s = idle();
    expect(s.context.timers['hibernate']).toBe(1_100 + HIBERNATE_MS);
    const [stopping, fx] = fire(s, 'hibernate');
    expect(stopping.value).toEqual({ hibernated: 'stopping' });
    expect(engineFx(fx)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(statuses(fx)).toEqual(['hibernated']);
    expect(stopping.context.phase).toBe('hibernated');
    expect(stopping.context.timers['stop']).toBeDefined();

    const [slept, fx2] = feed(stopping, exited(1, 6_200));
    expect(slept.value).toEqual({ hibernated: 'asleep' });
    expect(slept.context).toMatchObject({ liveGen: null, phase: 'hibernated', resumeToken: 'tok-1', restartAttempts: 0 });
    expect(Object.keys(slept.context.timers).filter((id) => id !== 'persist')).toEqual([]);
    // Only the exit is recorded: clients see nothing but the status.
    expect(only(fx2, 'transcript.emit').map((e) => e.entry.type)).toEqual(['exited']);
    expect(statuses(fx2)).toEqual([]);
    expect(only(fx2, 'client.error')).toEqual([]);
  });

  it('the next send starts the agent again with its resume token and delivers the message once it is ready', () => {
    const [waking, fx] = feed(asleep(), send('b', 9_000));
    expect(waking.value).toEqual({ remote: 'launching' });
    expect(engineFx(fx)).toEqual([expect.objectContaining({ type: 'engine.start', gen: 2, mode: 'remote', resumeToken: 'tok-1' })]);
    expect(statuses(fx)).toEqual(['starting']);
    const [running, fx2] = feed(settleWrites(waking, 9_000), { type: 'ready', gen: 2, at: 9_050 });
    expect(running.value).toEqual({ remote: 'running' });
    expect(engineFx(fx2)).toEqual([{ type: 'engine.send', gen: 2, message: { localId: 'b', text: 'text b' } }]);
    // The agent's own session continues: no fork reported.
    const [, fx3] = feed(running, { type: 'session_identified', gen: 2, at: 9_060, resumeToken: 'tok-1' });
    expect(only(fx3, 'client.error')).toEqual([]);
  });

  it('engine activity while idle postpones hibernation by the rest of the window', () => {
    const [active] = feed(idle(), { type: 'activity', gen: 1, at: 4_000 });
    const [s, fx] = fire(active, 'hibernate');
    expect(s.value).toEqual({ remote: 'idle' });
    expect(engineFx(fx)).toEqual([]);
    expect(s.context.timers['hibernate']).toBe(4_000 + HIBERNATE_MS);
    const [later, fx2] = fire(s, 'hibernate');
    expect(later.value).toEqual({ hibernated: 'stopping' });
    expect(engineFx(fx2)).toEqual([{ type: 'engine.stop', gen: 1 }]);
  });

  it('an open permission request keeps the agent up (re-armed), and its end lets it hibernate later', () => {
    const [asking] = feed(idle(), { type: 'permission_request', gen: 1, at: 2_000, requestId: 'p1', toolName: 'Bash', input: {} });
    const [s, fx] = fire(asking, 'hibernate');
    expect(s.value).toEqual({ remote: 'idle' });
    expect(engineFx(fx)).toEqual([]);
    expect(s.context.timers['hibernate']).toBe(s.context.now + HIBERNATE_MS);
    // The decision is the last sign of life: the agent sleeps a full window after it.
    const [decided] = feed(s, { type: 'decide', requestId: 'p1', decision: 'allow', at: 6_500 });
    const [early] = fire(decided, 'hibernate');
    expect(early.value).toEqual({ remote: 'idle' });
    expect(early.context.timers['hibernate']).toBe(6_500 + HIBERNATE_MS);
    const [slept] = fire(early, 'hibernate');
    expect(slept.value).toEqual({ hibernated: 'stopping' });
  });

  it('a running turn never hibernates: leaving idle cancels the timer; the turn ending re-arms it', () => {
    const [running, fx] = feed(idle(), send('a', 2_000));
    expect(only(fx, 'timer.cancel')).toContainEqual({ type: 'timer.cancel', id: 'hibernate' });
    expect(running.context.timers['hibernate']).toBeUndefined();
    const [done, fx2] = feed(running, { type: 'turn_complete', gen: 1, at: 3_000, status: 'completed', usage: ZERO_USAGE });
    expect(done.value).toEqual({ remote: 'idle' });
    expect(only(fx2, 'timer.set')).toContainEqual({ type: 'timer.set', id: 'hibernate', deadline: 3_000 + HIBERNATE_MS });
  });

  it('hibernateAfterMs 0 (the default) arms nothing', () => {
    const s = idle(0);
    expect(s.context.timers['hibernate']).toBeUndefined();
  });

  it('a send while the agent is still stopping is kept and goes out on the next generation', () => {
    const [stopping] = fire(idle(), 'hibernate');
    const [s, fx] = feed(stopping, send('b', 6_150));
    expect(s.value).toEqual({ hibernated: 'stopping' });
    expect(engineFx(fx)).toEqual([]);
    expect(s.context.queue.map((q) => q.localId)).toEqual(['b']);
    const [waking, fx2] = feed(s, exited(1, 6_200));
    expect(waking.value).toEqual({ remote: 'launching' });
    expect(engineFx(fx2)).toEqual([expect.objectContaining({ type: 'engine.start', gen: 2, resumeToken: 'tok-1' })]);
  });

  it('an agent that ignores the stop is abandoned after stopTimeoutMs (its own ladder still kills it)', () => {
    const [stopping] = fire(idle(), 'hibernate');
    const [s] = fire(stopping, 'stop');
    expect(s.value).toEqual({ hibernated: 'asleep' });
    expect(s.context.liveGen).toBeNull();
  });

  it('the stop timeout with a send kept wakes it at once; with a switch to local it starts locally', () => {
    const [stopping] = fire(idle(), 'hibernate');
    const [queued] = feed(stopping, send('b', 6_150));
    expect(fire(queued, 'stop')[0].value).toEqual({ remote: 'launching' });
    const [switched] = feed(stopping, { type: 'switch_mode', to: 'local', at: 6_150 });
    expect(fire(switched, 'stop')[0].value).toEqual({ local: 'launching' });
    const [exitedLocal, fx] = feed(switched, exited(1, 6_200));
    expect(exitedLocal.value).toEqual({ local: 'launching' });
    expect(engineFx(fx)).toEqual([expect.objectContaining({ type: 'engine.start', gen: 2, mode: 'local', resumeToken: 'tok-1' })]);
  });

  it('while asleep: a switch to local starts a local agent; stop ends the session with no engine effect; abort is refused', () => {
    const [local, fx] = feed(asleep(), { type: 'switch_mode', to: 'local', at: 9_000 });
    expect(local.value).toEqual({ local: 'launching' });
    expect(engineFx(fx)).toEqual([expect.objectContaining({ type: 'engine.start', mode: 'local', resumeToken: 'tok-1' })]);
    const [stopped, fx2] = feed(asleep(), { type: 'stop', at: 9_000 });
    expect(stopped.status).toBe('done');
    expect(engineFx(fx2)).toEqual([]);
    const [, fx3] = feed(asleep(), { type: 'abort', at: 9_000 });
    expect(only(fx3, 'client.error').map((e) => e.code)).toEqual(['NOTHING_TO_ABORT']);
    const [, fx4] = feed(asleep(), send('m1', 9_000), send('m1', 9_001));
    expect(only(fx4, 'client.error').map((e) => e.code)).toEqual(['DUPLICATE_SEND']);
  });

  it('a settings change while asleep is stored and carried by the start that wakes it', () => {
    const [s, fx] = feed(asleep(), { type: 'set_model', model: 'model-b', at: 9_000 });
    expect(engineFx(fx)).toEqual([]);
    expect(only(fx, 'engine.configure')).toEqual([]);
    const [, fx2] = feed(s, send('b', 9_100));
    expect(engineFx(fx2)).toEqual([expect.objectContaining({ type: 'engine.start', model: 'model-b', resumeToken: 'tok-1' })]);
  });
});

describe('a stored hibernated session', () => {
  const stored = (overrides: Partial<VersionedSession['state']> = {}): VersionedSession => ({
    version: 5,
    state: {
      schemaVersion: 1,
      sessionId: 's1',
      agent: 'fake',
      workDir: '/work',
      mode: 'remote',
      phase: 'hibernated',
      gen: 3,
      resumeToken: 'tok-3',
      queue: [],
      requests: {},
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 2 },
      deliveredIds: ['a', 'b'],
      updatedAt: 500,
      ...overrides,
    },
  });

  it('comes back asleep: no agent until the next send, which resumes the stored token on the next generation', () => {
    const [s, fx] = start({ restored: stored() });
    expect(s.value).toEqual({ hibernated: 'asleep' });
    expect(engineFx(fx)).toEqual([]);
    expect(statuses(fx)).toEqual(['hibernated']);
    const [, fx2] = feed(s, send('c', 2_000));
    expect(engineFx(fx2)).toEqual([expect.objectContaining({ type: 'engine.start', gen: 4, resumeToken: 'tok-3' })]);
  });

  it('starts an agent at once when it holds a queued message, or when asked for local mode', () => {
    const [queued, fx] = start({ restored: stored({ queue: [{ localId: 'c', text: 'kept', queuedAt: 400 }] }) });
    expect(queued.value).toEqual({ remote: 'launching' });
    expect(engineFx(fx)).toEqual([expect.objectContaining({ type: 'engine.start', gen: 4, resumeToken: 'tok-3' })]);
    const [local] = start({ mode: 'local', restored: stored() });
    expect(local.value).toEqual({ local: 'launching' });
  });
});
