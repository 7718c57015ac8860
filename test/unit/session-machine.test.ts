/**
 * The SessionActor driven through the pure `initialTransition` / `transition` API only: every test
 * feeds events and asserts the exact effects emitted and the resulting context. No runtime, no I/O.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/actors/session.js';
import type { SessionConfig } from '../../src/actors/session-context.js';
import { ZERO_SESSION_USAGE } from '../../src/actors/session-context.js';
import { EffectSchema, type Effect, type EffectOf } from '../../src/events/effect.js';
import { ZERO_USAGE } from '../../src/events/agent-event.js';
import type { ControlMode } from '../../src/events/session-input.js';
import type { PersistedSession } from '../../src/events/session-state.js';
import {
  feed as rawFeed,
  only,
  start as rawStart,
  type SessionSnapshot,
} from '../support/machine.js';

const T0 = 1_000;

// ------------------------------------------------------------------ harness

/** Every effect any test saw; each must satisfy the Effect schema (checked after each test). */
let seen: Effect[] = [];
afterEach(() => {
  for (const effect of seen) {
    const parsed = EffectSchema.safeParse(effect);
    expect(parsed.success, JSON.stringify(effect)).toBe(true);
  }
  seen = [];
});

function start(...args: Parameters<typeof rawStart>): [SessionSnapshot, Effect[]] {
  const result = rawStart(...args);
  seen.push(...result[1]);
  return result;
}

function feed(snapshot: SessionSnapshot, ...events: SessionEvent[]): [SessionSnapshot, Effect[]] {
  const result = rawFeed(snapshot, ...events);
  seen.push(...result[1]);
  return result;
}

const ENGINE_EFFECTS = ['engine.start', 'engine.stop', 'engine.send', 'engine.abort', 'engine.answer_permission'] as const;
const engineFx = (effects: Effect[]) => only(effects, ...ENGINE_EFFECTS);
const ephemerals = (effects: Effect[], kind: EffectOf<'ephemeral.emit'>['kind']) =>
  only(effects, 'ephemeral.emit').filter((e) => e.kind === kind);
const timerSets = (effects: Effect[], id: string) => only(effects, 'timer.set').filter((e) => e.id === id);
const clientErrors = (effects: Effect[]) => only(effects, 'client.error').map((e) => e.code);
const transcriptOf = (effects: Effect[], type: string) =>
  only(effects, 'transcript.emit')
    .map((e) => e.entry)
    .filter((entry) => entry.type === type);

function engineStart(gen: number, mode: ControlMode, resumeToken?: string): EffectOf<'engine.start'> {
  return {
    type: 'engine.start',
    gen,
    mode,
    agent: 'fake',
    workDir: '/work',
    ...(resumeToken !== undefined && { resumeToken }),
    options: {},
  };
}

function engineSend(gen: number, localId: string): EffectOf<'engine.send'> {
  return { type: 'engine.send', gen, message: { localId, text: textOf(localId) } };
}

// ------------------------------------------------------------------ events

const textOf = (localId: string) => `message ${localId}`;

const ready = (gen: number, at: number): SessionEvent => ({ type: 'ready', gen, at });
const exited = (gen: number, at: number, code: number | null = 1, signal: string | null = null): SessionEvent => ({
  type: 'exited',
  gen,
  at,
  code,
  signal,
});
const identified = (gen: number, at: number, resumeToken: string): SessionEvent => ({
  type: 'session_identified',
  gen,
  at,
  resumeToken,
});
const turnDone = (gen: number, at: number, status: 'completed' | 'failed' | 'cancelled' = 'completed'): SessionEvent => ({
  type: 'turn_complete',
  gen,
  at,
  status,
  usage: ZERO_USAGE,
});
const permReq = (gen: number, at: number, requestId: string, toolName = 'Bash', input: unknown = { command: 'ls' }): SessionEvent => ({
  type: 'permission_request',
  gen,
  at,
  requestId,
  toolName,
  input,
});
const message = (gen: number, at: number): SessionEvent => ({
  type: 'message',
  gen,
  at,
  role: 'assistant',
  id: `m-${at}`,
  blocks: [{ type: 'text', text: 'working on it' }],
});
const delta = (gen: number, at: number): SessionEvent => ({ type: 'text_delta', gen, at, messageId: 'm', text: 'x' });
const thinking = (gen: number, at: number, active = true): SessionEvent => ({ type: 'thinking', gen, at, active });
const engineError = (gen: number, at: number, retryable: boolean): SessionEvent => ({
  type: 'error',
  gen,
  at,
  kind: retryable ? 'transient' : 'auth',
  message: retryable ? 'connection reset' : 'not logged in',
  retryable,
});

const send = (localId: string, at: number): SessionEvent => ({ type: 'send', localId, text: textOf(localId), at });
const switchTo = (to: ControlMode, at: number): SessionEvent => ({ type: 'switch_mode', to, at });
const abort = (at: number): SessionEvent => ({ type: 'abort', at });
const stop = (at: number): SessionEvent => ({ type: 'stop', at });
const allow = (requestId: string, at: number, updatedInput?: unknown): SessionEvent => ({
  type: 'decide',
  requestId,
  decision: 'allow',
  at,
  ...(updatedInput !== undefined && { updatedInput }),
});
const deny = (requestId: string, at: number, msg?: string): SessionEvent => ({
  type: 'decide',
  requestId,
  decision: 'deny',
  at,
  ...(msg !== undefined && { message: msg }),
});
const fired = (id: string, at: number): SessionEvent => ({ type: 'timer_fired', id, at });

// ------------------------------------------------------------------ fixtures

/** Lets every state write in flight succeed (a delivered send is written at once). */
function settleWrites(snapshot: SessionSnapshot, at: number): SessionSnapshot {
  let s = snapshot;
  while (s.context.persist.inFlight) [s] = feed(s, { type: 'persist_ok', version: s.context.version + 1, at });
  return s;
}

/** A remote session whose gen-1 engine is ready and idle (identified with `tok-1`), its writes settled. */
function remoteIdle(config: Partial<SessionConfig> = {}): SessionSnapshot {
  const [s0] = start({ config });
  const [s1] = feed(settleWrites(s0, 1_000), ready(1, 1_100), identified(1, 1_150, 'tok-1'));
  expect(s1.value).toEqual({ remote: 'idle' });
  return s1;
}

/** A local session whose gen-1 engine is ready (identified with `tok-1`), its writes settled. */
function localActive(config: Partial<SessionConfig> = {}): SessionSnapshot {
  const [s0] = start({ mode: 'local', config });
  const [s1] = feed(settleWrites(s0, 1_000), ready(1, 1_100), identified(1, 1_150, 'tok-1'));
  expect(s1.value).toEqual({ local: 'active' });
  return s1;
}

/** A remote session running the turn of message `a` (sent at 2_000) on gen 1, its writes settled. */
function remoteRunning(config: Partial<SessionConfig> = {}): SessionSnapshot {
  const [s, fx] = feed(remoteIdle(config), send('a', 2_000));
  expect(s.value).toEqual({ remote: 'running' });
  expect(engineFx(fx)).toEqual([engineSend(1, 'a')]);
  // Accepting the message is written at once; its delivery is written as soon as that write lands.
  expect(only(fx, 'state.persist')).toEqual([expect.objectContaining({ state: expect.objectContaining({ queue: [expect.objectContaining({ localId: 'a' })] }) })]);
  const [settled, after] = feed(s, { type: 'persist_ok', version: s.context.version + 1, at: 2_000 });
  expect(only(after, 'state.persist')).toEqual([expect.objectContaining({ state: expect.objectContaining({ deliveredIds: ['a'], queue: [] }) })]);
  return settleWrites(settled, 2_000);
}

// ================================================================== tests

describe('start', () => {
  it('starts generation 1 in remote mode', () => {
    const [s, fx] = start({ mode: 'remote' });
    expect(engineFx(fx)).toEqual([engineStart(1, 'remote')]);
    expect(s.value).toEqual({ remote: 'launching' });
    expect(s.context).toMatchObject({ gen: 1, liveGen: 1, mode: 'remote', phase: 'starting' });

    const [s1, fx1] = feed(s, ready(1, 1_100));
    expect(s1.value).toEqual({ remote: 'idle' });
    expect(s1.context.phase).toBe('idle');
    expect(engineFx(fx1)).toEqual([]);
  });

  it('starts generation 1 in local mode', () => {
    const [s, fx] = start({ mode: 'local' });
    expect(engineFx(fx)).toEqual([engineStart(1, 'local')]);
    expect(s.value).toEqual({ local: 'launching' });
    expect(s.context).toMatchObject({ gen: 1, liveGen: 1, mode: 'local' });

    const [s1] = feed(s, ready(1, 1_100));
    expect(s1.value).toEqual({ local: 'active' });
    expect(s1.context.phase).toBe('local');
  });

  it('passes engine options through to engine.start', () => {
    const [, fx] = start({ options: { model: 'small' } });
    expect(engineFx(fx)).toEqual([{ ...engineStart(1, 'remote'), options: { model: 'small' } }]);
  });
});

describe('mode switching', () => {
  const cases: { from: ControlMode; to: ControlMode }[] = [
    { from: 'local', to: 'remote' },
    { from: 'remote', to: 'local' },
  ];

  for (const { from, to } of cases) {
    const begin = () => (from === 'local' ? localActive() : remoteIdle());

    it(`${from} → ${to}: stops gen 1 and starts gen 2 only after gen 1 exited`, () => {
      const [s1, fx1] = feed(begin(), switchTo(to, 2_000));
      expect(engineFx(fx1)).toEqual([{ type: 'engine.stop', gen: 1 }]);
      expect(s1.value).toBe('switching');
      expect(s1.context).toMatchObject({ mode: to, liveGen: 1, stopSentFor: 1 });
      expect(timerSets(fx1, 'stop')).toEqual([{ type: 'timer.set', id: 'stop', deadline: 2_000 + 10_000 }]);

      // The old engine is still winding down: its output is still recorded, but nothing starts.
      const [s2, fx2] = feed(s1, message(1, 2_100), fired('persist', 2_200), switchTo(to, 2_300));
      expect(only(fx2, 'engine.start')).toEqual([]);
      expect(s2.value).toBe('switching');

      const [s3, fx3] = feed(s2, exited(1, 3_000, 0));
      expect(engineFx(fx3)).toEqual([engineStart(2, to, 'tok-1')]);
      expect(only(fx3, 'timer.cancel').map((e) => e.id)).toContain('stop');
      expect(s3.context).toMatchObject({ gen: 2, liveGen: 2, mode: to, stopSentFor: null });
      expect(s3.context.timers).not.toHaveProperty('stop');

      const [s4] = feed(s3, ready(2, 3_100));
      expect(s4.value).toEqual(to === 'remote' ? { remote: 'idle' } : { local: 'active' });
    });

    it(`${from} → ${to}: the stop timeout starts gen 2 when gen 1 never reports exited`, () => {
      const [s1] = feed(begin(), switchTo(to, 2_000));
      const [s2, fx2] = feed(s1, fired('stop', 12_000));
      expect(engineFx(fx2)).toEqual([engineStart(2, to, 'tok-1')]);
      expect(s2.context).toMatchObject({ gen: 2, liveGen: 2, mode: to });

      // The abandoned engine's late exit changes nothing.
      const [s3, fx3] = feed(s2, exited(1, 13_000));
      expect(fx3).toEqual([]);
      expect(s3.context).toEqual(s2.context);
      expect(s3.value).toEqual(s2.value);
    });
  }

  it('a stale stop timer (not armed) does not end the switch', () => {
    const [s1] = feed(localActive(), switchTo('remote', 2_000));
    const [s2, fx2] = feed(s1, fired('restart', 2_500));
    expect(fx2).toEqual([]);
    expect(s2.value).toBe('switching');
  });

  it('a switch to the current mode does nothing', () => {
    const s0 = remoteIdle();
    const [s1, fx1] = feed(s0, switchTo('remote', 2_000));
    expect(fx1).toEqual([]);
    expect(s1.context).toEqual(s0.context);
  });
});

describe('sends', () => {
  it('a send in local mode is queued and switches to remote; it goes to gen 2 once ready', () => {
    const [s1, fx1] = feed(localActive(), send('a', 2_000));
    expect(engineFx(fx1)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(s1.value).toBe('switching');
    expect(s1.context.mode).toBe('remote');
    expect(s1.context.queue).toEqual([{ localId: 'a', text: textOf('a'), queuedAt: 2_000 }]);

    const [s2, fx2] = feed(s1, exited(1, 2_500, 0));
    expect(engineFx(fx2)).toEqual([engineStart(2, 'remote', 'tok-1')]);
    expect(s2.context.queue).toHaveLength(1);

    const [s3, fx3] = feed(s2, ready(2, 2_600));
    expect(engineFx(fx3)).toEqual([engineSend(2, 'a')]);
    expect(s3.value).toEqual({ remote: 'running' });
    expect(s3.context.queue).toEqual([]);
    expect(s3.context.turn).toMatchObject({ gen: 2, localId: 'a' });
    expect(s3.context.deliveredIds).toEqual(['a']);
  });

  it('a send while the engine starts is queued and goes out on ready', () => {
    const [s0] = start();
    const [s1, fx1] = feed(s0, send('a', 1_050));
    expect(engineFx(fx1)).toEqual([]);
    expect(s1.value).toEqual({ remote: 'launching' });
    expect(s1.context.queue.map((q) => q.localId)).toEqual(['a']);

    const [, fx2] = feed(s1, ready(1, 1_100));
    expect(engineFx(fx2)).toEqual([engineSend(1, 'a')]);
  });

  it('sends while switching are queued and delivered in order after ready', () => {
    const [s1] = feed(localActive(), send('a', 2_000));
    const [s2, fx2] = feed(s1, send('b', 2_100));
    expect(engineFx(fx2)).toEqual([]);
    expect(s2.context.queue.map((q) => q.localId)).toEqual(['a', 'b']);

    const [s3, fx3] = feed(s2, exited(1, 2_500, 0), ready(2, 2_600));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1'), engineSend(2, 'a')]);
    const [, fx4] = feed(s3, turnDone(2, 3_000));
    expect(engineFx(fx4)).toEqual([engineSend(2, 'b')]);
  });

  it('a send during a switch to local is not stranded: it takes the session to remote', () => {
    const [s1] = feed(remoteIdle(), switchTo('local', 2_000));
    expect(s1.context.mode).toBe('local');
    const [s2, fx2] = feed(s1, send('a', 2_100));
    expect(clientErrors(fx2)).toEqual([]);
    expect(s2.context.queue.map((q) => q.localId)).toEqual(['a']);

    const [, fx3] = feed(s2, exited(1, 2_500, 0), ready(2, 2_600));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1'), engineSend(2, 'a')]);
  });

  it('a send while a local engine is being restarted takes the session to remote', () => {
    const [s1] = feed(localActive(), exited(1, 2_000, 1));
    expect(s1.value).toBe('recovering');
    const [s2, fx2] = feed(s1, send('a', 2_100));
    expect(clientErrors(fx2)).toEqual([]);
    expect(s2.context.mode).toBe('remote');

    const [, fx3] = feed(s2, fired('restart', 3_000), ready(2, 3_100));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1'), engineSend(2, 'a')]);
  });

  it('a send mid-turn is queued and goes out when the turn completes', () => {
    const [s1, fx1] = feed(remoteRunning(), send('b', 2_100));
    expect(engineFx(fx1)).toEqual([]);
    expect(s1.context.queue.map((q) => q.localId)).toEqual(['b']);
    expect(s1.context.turn?.localId).toBe('a');

    const [s2, fx2] = feed(s1, turnDone(1, 3_000));
    expect(engineFx(fx2)).toEqual([engineSend(1, 'b')]);
    expect(s2.value).toEqual({ remote: 'running' });
    expect(s2.context.turn?.localId).toBe('b');
  });

  it('three queued messages make three turns, each sent exactly once, in order', () => {
    const [s0] = start();
    let [s, fx] = feed(s0, send('a', 1_010), send('b', 1_020), send('c', 1_030));
    const sends: Effect[] = [...only(fx, 'engine.send')];
    expect(sends).toEqual([]);

    [s, fx] = feed(s, ready(1, 1_100));
    sends.push(...only(fx, 'engine.send'));
    expect(only(fx, 'engine.send')).toEqual([engineSend(1, 'a')]);

    [s, fx] = feed(s, turnDone(1, 2_000));
    sends.push(...only(fx, 'engine.send'));
    expect(only(fx, 'engine.send')).toEqual([engineSend(1, 'b')]);

    [s, fx] = feed(s, turnDone(1, 3_000));
    sends.push(...only(fx, 'engine.send'));
    expect(only(fx, 'engine.send')).toEqual([engineSend(1, 'c')]);

    [s, fx] = feed(s, turnDone(1, 4_000));
    sends.push(...only(fx, 'engine.send'));
    expect(only(fx, 'engine.send')).toEqual([]);

    expect(sends).toEqual([engineSend(1, 'a'), engineSend(1, 'b'), engineSend(1, 'c')]);
    expect(s.value).toEqual({ remote: 'idle' });
    expect(s.context.queue).toEqual([]);
    expect(s.context.deliveredIds).toEqual(['a', 'b', 'c']);
    expect(s.context.usage.turns).toBe(3);
    expect(transcriptOf(fx, 'turn_complete').map((e) => (e.payload as { localId: string }).localId)).toEqual(['c']);
  });

  it('rejects a duplicate localId (queued, in flight, or delivered) with DUPLICATE_SEND and never sends it', () => {
    const [s0] = start();
    // Duplicate of a queued message.
    const [s1, fx1] = feed(s0, send('a', 1_010), send('a', 1_020));
    expect(only(fx1, 'client.error')).toEqual([
      expect.objectContaining({ type: 'client.error', code: 'DUPLICATE_SEND', localId: 'a' }),
    ]);
    expect(s1.context.queue.map((q) => q.localId)).toEqual(['a']);

    // Duplicate of the message in flight.
    const [s2, fx2] = feed(s1, ready(1, 1_100), send('a', 1_200));
    expect(only(fx2, 'engine.send')).toEqual([engineSend(1, 'a')]);
    expect(clientErrors(fx2)).toEqual(['DUPLICATE_SEND']);
    expect(s2.context.queue).toEqual([]);

    // Duplicate of a delivered message, while idle: rejected, stays idle, nothing sent.
    const [s3] = feed(s2, turnDone(1, 2_000));
    expect(s3.value).toEqual({ remote: 'idle' });
    const [s4, fx4] = feed(s3, send('a', 2_100));
    expect(fx4).toEqual([expect.objectContaining({ type: 'client.error', code: 'DUPLICATE_SEND', localId: 'a' })]);
    expect(s4.value).toEqual({ remote: 'idle' });
    expect(s4.context).toEqual(s3.context);
  });

  it('a duplicate send in local mode is rejected and does not switch', () => {
    const [s0] = start({
      mode: 'local',
      restored: { version: 1, state: persisted({ gen: 0, deliveredIds: ['old'] }) },
    });
    const [s1] = feed(s0, ready(1, 1_100));
    const [s2, fx2] = feed(s1, send('old', 2_000));
    expect(fx2).toEqual([expect.objectContaining({ type: 'client.error', code: 'DUPLICATE_SEND', localId: 'old' })]);
    expect(s2.value).toEqual({ local: 'active' });
    expect(s2.context.mode).toBe('local');
  });
});

describe('permissions (remote)', () => {
  it('records the request, persists it, and only then prompts', () => {
    const [s1, fx1] = feed(remoteRunning(), permReq(1, 2_500, 'p1', 'Bash', { command: 'rm -rf build' }));
    expect(s1.context.requests).toEqual({
      p1: { toolName: 'Bash', input: { command: 'rm -rf build' }, gen: 1, createdAt: 2_500, deadline: 2_500 + 600_000 },
    });
    const persistAt = fx1.findIndex((e) => e.type === 'state.persist');
    const promptAt = fx1.findIndex((e) => e.type === 'ephemeral.emit' && e.kind === 'permission_prompt');
    expect(persistAt).toBeGreaterThanOrEqual(0);
    expect(promptAt).toBeGreaterThan(persistAt);
    const written = only(fx1, 'state.persist')[0]!;
    expect(written.state.requests).toHaveProperty('p1');
    expect(ephemerals(fx1, 'permission_prompt')).toEqual([
      {
        type: 'ephemeral.emit',
        kind: 'permission_prompt',
        requestId: 'p1',
        toolName: 'Bash',
        input: { command: 'rm -rf build' },
        deadline: 602_500,
      },
    ]);
    expect(engineFx(fx1)).toEqual([]);
  });

  it('records exactly {tool, input, gen, createdAt} when permissions never time out', () => {
    const [s1, fx1] = feed(remoteRunning({ permissionTimeoutMs: 0 }), permReq(1, 2_500, 'p1'));
    expect(s1.context.requests).toEqual({ p1: { toolName: 'Bash', input: { command: 'ls' }, gen: 1, createdAt: 2_500 } });
    expect(timerSets(fx1, 'perm:p1')).toEqual([]);
  });

  it('allow (with updatedInput) answers the engine and ends the request approved', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, allow('p1', 3_000, { command: 'ls -la' }));
    expect(engineFx(fx2)).toEqual([
      {
        type: 'engine.answer_permission',
        gen: 1,
        requestId: 'p1',
        decision: { behavior: 'allow', updatedInput: { command: 'ls -la' } },
      },
    ]);
    expect(s2.context.requests).toEqual({});
    expect(s2.context.completed.p1).toEqual({ status: 'approved', decidedAt: 3_000, gen: 1 });
    expect(only(fx2, 'timer.cancel')).toContainEqual({ type: 'timer.cancel', id: 'perm:p1' });
    expect(ephemerals(fx2, 'permission_resolved')).toEqual([
      { type: 'ephemeral.emit', kind: 'permission_resolved', requestId: 'p1', status: 'approved' },
    ]);
    expect(s2.context.timers).not.toHaveProperty('perm:p1');
  });

  it('a request the agent withdraws (permission_cancelled) ends cancelled without an answer; deciding it is refused', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, { type: 'permission_cancelled', gen: 1, at: 3_000, requestId: 'p1', reason: 'cancelled by the CLI' });
    expect(engineFx(fx2)).toEqual([]); // nobody waits for an answer any more
    expect(s2.context.requests).toEqual({});
    expect(s2.context.completed.p1).toEqual({ status: 'cancelled', decidedAt: 3_000, gen: 1, reason: 'cancelled by the CLI' });
    expect(ephemerals(fx2, 'permission_resolved')).toEqual([{ type: 'ephemeral.emit', kind: 'permission_resolved', requestId: 'p1', status: 'cancelled' }]);
    expect(s2.value).toEqual({ remote: 'running' }); // the turn goes on
    const [, fx3] = feed(s2, allow('p1', 3_500));
    expect(clientErrors(fx3)).toEqual(['PERMISSION_ALREADY_DECIDED']);
    expect(engineFx(fx3)).toEqual([]);
  });

  it('permission_cancelled of a stale generation or an unknown id changes nothing', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, { type: 'permission_cancelled', gen: 0, at: 3_000, requestId: 'p1' }, { type: 'permission_cancelled', gen: 1, at: 3_000, requestId: 'nope' });
    expect(s2.context.requests).toHaveProperty('p1');
    expect(fx2.filter((e) => e.type !== 'timer.set' && e.type !== 'timer.cancel')).toEqual([]);
  });

  it('allow with updatedPermissions hands the rule changes to the engine unchanged', () => {
    const rules = [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'session' }];
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, { type: 'decide', requestId: 'p1', decision: 'allow', updatedPermissions: rules, at: 3_000 });
    expect(engineFx(fx2)).toEqual([
      { type: 'engine.answer_permission', gen: 1, requestId: 'p1', decision: { behavior: 'allow', updatedPermissions: rules } },
    ]);
    expect(s2.context.completed.p1?.status).toBe('approved');
  });

  it('deny (with a message) answers deny without interrupt and ends the request denied', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, deny('p1', 3_000, 'not that file'));
    expect(engineFx(fx2)).toEqual([
      {
        type: 'engine.answer_permission',
        gen: 1,
        requestId: 'p1',
        decision: { behavior: 'deny', message: 'not that file', interrupt: false },
      },
    ]);
    expect(s2.context.completed.p1).toEqual({ status: 'denied', decidedAt: 3_000, gen: 1 });
    expect(s2.context.requests).toEqual({});
  });

  it('deciding an unknown id is PERMISSION_NOT_FOUND and nothing else', () => {
    const s0 = remoteRunning();
    const [s1, fx1] = feed(s0, allow('nope', 3_000));
    expect(fx1).toEqual([expect.objectContaining({ type: 'client.error', code: 'PERMISSION_NOT_FOUND', requestId: 'nope' })]);
    expect(s1.context).toEqual(s0.context);
  });

  it('deciding an already-decided id is PERMISSION_ALREADY_DECIDED and sends no second answer', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'), allow('p1', 3_000));
    for (const again of [allow('p1', 3_100), deny('p1', 3_200, 'changed my mind')]) {
      const [s2, fx2] = feed(s1, again);
      expect(fx2).toEqual([
        expect.objectContaining({ type: 'client.error', code: 'PERMISSION_ALREADY_DECIDED', requestId: 'p1' }),
      ]);
      expect(s2.context).toEqual(s1.context);
    }
  });

  it('a repeated permission_request id is ignored', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, permReq(1, 2_600, 'p1'));
    expect(fx2).toEqual([]);
    expect(s2.context).toEqual(s1.context);
  });
});

describe('permissions (local mode)', () => {
  it('a dialog shown in the terminal is in the ledger and prompted remotely, with no deadline; a remote answer goes to the engine', () => {
    const [s1, fx1] = feed(localActive({ permissionTimeoutMs: 5_000 }), permReq(1, 2_000, 'p1'));
    expect(ephemerals(fx1, 'permission_prompt')).toEqual([expect.objectContaining({ requestId: 'p1', toolName: 'Bash' })]);
    expect(timerSets(fx1, 'perm:p1')).toEqual([]);
    expect(s1.context.requests.p1).toMatchObject({ gen: 1, toolName: 'Bash' });
    expect(transcriptOf(fx1, 'permission_request')).toEqual([expect.objectContaining({ payload: expect.objectContaining({ requestId: 'p1', local: true }) })]);

    const [s2, fx2] = feed(s1, allow('p1', 2_100));
    expect(engineFx(fx2)).toEqual([{ type: 'engine.answer_permission', gen: 1, requestId: 'p1', decision: { behavior: 'allow' } }]);
    expect(s2.context.completed.p1).toMatchObject({ status: 'approved', gen: 1 });
    expect(s2.value).toEqual({ local: 'active' });
  });

  it('answered in the terminal first: closed "local", and a later remote decision is refused (first answer wins)', () => {
    const [s1] = feed(localActive(), permReq(1, 2_000, 'p1'));
    const [s2, fx2] = feed(s1, { type: 'permission_cancelled', gen: 1, at: 2_050, requestId: 'p1', reason: 'answered in the local terminal' });
    expect(engineFx(fx2)).toEqual([]);
    expect(s2.context.requests).toEqual({});
    expect(s2.context.completed.p1).toMatchObject({ status: 'local', reason: 'answered in the local terminal' });

    const [s3, fx3] = feed(s2, allow('p1', 2_100));
    expect(fx3).toEqual([expect.objectContaining({ type: 'client.error', code: 'PERMISSION_ALREADY_DECIDED', requestId: 'p1' })]);
    expect(s3.context).toEqual(s2.context);
  });
});

describe('handoff (a switch waits for the running turn)', () => {
  const userPrompt = (gen: number, at: number): SessionEvent => ({ type: 'message', gen, at, role: 'user', id: 'u1', blocks: [{ type: 'text', text: 'typed' }] });

  it('local → remote with a turn typed in the terminal running: waits for its turn_complete, then stops the engine', () => {
    const [s1] = feed(localActive(), userPrompt(1, 2_000));
    expect(s1.context.localTurn).toBe(true);
    const [s2, fx2] = feed(s1, send('a', 2_100));
    expect(s2.value).toBe('handoff');
    expect(engineFx(fx2)).toEqual([]);
    expect(timerSets(fx2, 'handoff')).toEqual([{ type: 'timer.set', id: 'handoff', deadline: 2_100 + 15_000 }]);

    const [s3, fx3] = feed(s2, send('b', 2_200), turnDone(1, 2_500));
    expect(s3.value).toBe('switching');
    expect(engineFx(fx3)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(s3.context.localTurn).toBe(false);
    expect(only(fx3, 'timer.cancel').map((e) => e.id)).toContain('handoff');

    const [s4, fx4] = feed(s3, exited(1, 2_600, 0), ready(2, 2_700));
    expect(engineFx(fx4)).toEqual([engineStart(2, 'remote', 'tok-1'), engineSend(2, 'a')]);
    const [, fx5] = feed(s4, turnDone(2, 3_000));
    expect(engineFx(fx5)).toEqual([engineSend(2, 'b')]);
  });

  it('a turn that does not end within handoffWaitMs is interrupted by the stop', () => {
    const [s1] = feed(localActive({ handoffWaitMs: 1_000 }), userPrompt(1, 2_000), switchTo('remote', 2_100));
    expect(s1.value).toBe('handoff');
    const [s2, fx2] = feed(s1, fired('handoff', 3_100));
    expect(s2.value).toBe('switching');
    expect(engineFx(fx2)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(transcriptOf(fx2, 'handoff_timed_out')).toHaveLength(1);
  });

  it('remote → local with a remote turn running: the turn completes first (not failed), then the switch', () => {
    const [s1, fx1] = feed(remoteRunning(), switchTo('local', 2_100));
    expect(s1.value).toBe('handoff');
    expect(engineFx(fx1)).toEqual([]);
    const [s2, fx2] = feed(s1, turnDone(1, 2_400));
    expect(transcriptOf(fx2, 'turn_complete')).toEqual([expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'completed' }) })]);
    expect(s2.value).toBe('switching');
    const [s3, fx3] = feed(s2, exited(1, 2_500, 0));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'local', 'tok-1')]);
    expect(s3.value).toEqual({ local: 'launching' });
  });

  it('an engine that exits while the handoff waits goes straight to the next mode', () => {
    const [s1] = feed(remoteRunning(), switchTo('local', 2_100), exited(1, 2_200, 1));
    expect(s1.value).toEqual({ local: 'launching' });
    expect(s1.context.turn).toBeNull();
  });
});

describe('permission deadline', () => {
  it('an unanswered request times out: deny + interrupt, status timed_out', () => {
    const [s1, fx1] = feed(remoteRunning({ permissionTimeoutMs: 5_000 }), permReq(1, 2_500, 'p1'));
    expect(timerSets(fx1, 'perm:p1')).toEqual([{ type: 'timer.set', id: 'perm:p1', deadline: 7_500 }]);
    expect(s1.context.requests.p1?.deadline).toBe(7_500);

    const [s2, fx2] = feed(s1, fired('perm:p1', 7_500));
    expect(engineFx(fx2)).toEqual([
      {
        type: 'engine.answer_permission',
        gen: 1,
        requestId: 'p1',
        decision: { behavior: 'deny', message: expect.any(String), interrupt: true },
      },
    ]);
    expect(s2.context.completed.p1).toMatchObject({ status: 'timed_out', decidedAt: 7_500, gen: 1 });
    expect(s2.context.requests).toEqual({});
    expect(s2.context.timers).not.toHaveProperty('perm:p1');
    // The fired timer is forgotten, not cancelled.
    expect(only(fx2, 'timer.cancel').map((e) => e.id)).not.toContain('perm:p1');

    // Deciding afterwards is refused.
    const [, fx3] = feed(s2, allow('p1', 8_000));
    expect(clientErrors(fx3)).toEqual(['PERMISSION_ALREADY_DECIDED']);
  });

  it('the deadline timer firing after a decision does nothing', () => {
    const [s1] = feed(remoteRunning({ permissionTimeoutMs: 5_000 }), permReq(1, 2_500, 'p1'), deny('p1', 3_000));
    const [s2, fx2] = feed(s1, fired('perm:p1', 7_500));
    expect(fx2).toEqual([]);
    expect(s2.context).toEqual(s1.context);
    expect(s2.context.completed.p1?.status).toBe('denied');
  });
});

describe('stale generations', () => {
  const staleEvents = (gen: number, at: number): SessionEvent[] => [
    ready(gen, at),
    turnDone(gen, at),
    permReq(gen, at, `stale-${gen}`),
    exited(gen, at),
    exited(gen, at, 0),
    message(gen, at),
    delta(gen, at),
    thinking(gen, at),
    identified(gen, at, 'tok-stale'),
    engineError(gen, at, false),
    { type: 'tool_call', gen, at, callId: 'c', toolName: 'Bash', input: {} },
    { type: 'tool_result', gen, at, callId: 'c', status: 'completed', isError: false },
  ];

  function assertIgnored(snapshot: SessionSnapshot, events: SessionEvent[]) {
    for (const event of events) {
      const [next, fx] = feed(snapshot, event);
      expect(fx, `${event.type} (gen ${'gen' in event ? event.gen : '-'})`).toEqual([]);
      expect(next.context, event.type).toEqual(snapshot.context);
      expect(next.value, event.type).toEqual(snapshot.value);
    }
  }

  it('ignores gen-1 and gen-99 events while gen 2 is starting', () => {
    const [s1] = feed(localActive(), switchTo('remote', 2_000), exited(1, 2_500, 0));
    expect(s1.value).toEqual({ remote: 'launching' });
    expect(s1.context.liveGen).toBe(2);
    assertIgnored(s1, [...staleEvents(1, 3_000), ...staleEvents(99, 3_000)]);
  });

  it('ignores gen-1 and gen-99 events while a gen-2 turn runs with a request open', () => {
    const [s1] = feed(
      localActive(),
      send('a', 2_000),
      exited(1, 2_500, 0),
      ready(2, 2_600),
      permReq(2, 2_700, 'p2'),
    );
    expect(s1.value).toEqual({ remote: 'running' });
    assertIgnored(s1, [...staleEvents(1, 3_000), ...staleEvents(99, 3_000)]);
  });

  it('ignores engine events of any generation while recovering (no live engine)', () => {
    const [s1] = feed(remoteIdle(), exited(1, 2_000));
    expect(s1.value).toBe('recovering');
    expect(s1.context.liveGen).toBeNull();
    assertIgnored(s1, [...staleEvents(1, 2_100), ...staleEvents(2, 2_100)]);
  });
});

describe('crash recovery', () => {
  it('an unexpected exit cancels open requests, backs off, and restarts with the resume token; queued sends survive', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'), send('b', 2_600));
    const [s2, fx2] = feed(s1, exited(1, 3_000, 1));
    expect(s2.value).toBe('recovering');
    expect(s2.context.completed.p1).toMatchObject({ status: 'cancelled', gen: 1 });
    expect(s2.context.requests).toEqual({});
    expect(timerSets(fx2, 'restart')).toEqual([{ type: 'timer.set', id: 'restart', deadline: 4_000 }]);
    expect(engineFx(fx2)).toEqual([]);
    expect(s2.context.queue.map((q) => q.localId)).toEqual(['b']);
    expect(s2.context.turn).toBeNull();
    // The interrupted turn is recorded as failed.
    expect(transcriptOf(fx2, 'turn_ended')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'failed' }) }),
    ]);

    const [s3, fx3] = feed(s2, fired('restart', 4_000));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1')]);
    expect(only(fx3, 'timer.cancel')).toEqual([]);

    const [s4, fx4] = feed(s3, ready(2, 4_100));
    expect(engineFx(fx4)).toEqual([engineSend(2, 'b')]);
    expect(s4.value).toEqual({ remote: 'running' });
  });

  it('backs off exponentially (base, 2x, 4x, capped) and fails after maxRestarts + 1 consecutive crashes', () => {
    let s = remoteIdle({ restartBaseMs: 1_000, restartMaxMs: 5_000, maxRestarts: 5 });
    let fx: Effect[];
    let t = 2_000;
    const delays: number[] = [];
    for (let gen = 1; gen <= 5; gen++) {
      [s, fx] = feed(s, exited(gen, t, 1));
      expect(s.value).toBe('recovering');
      expect(clientErrors(fx)).toEqual([]);
      const [set] = timerSets(fx, 'restart');
      expect(set).toBeDefined();
      delays.push(set!.deadline - t);
      [s, fx] = feed(s, fired('restart', set!.deadline));
      expect(engineFx(fx)).toEqual([engineStart(gen + 1, 'remote', 'tok-1')]);
      t = set!.deadline + 100;
      [s] = feed(s, ready(gen + 1, t));
      t += 100;
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);

    [s, fx] = feed(s, exited(6, t, 1));
    expect(s.value).toBe('failed');
    expect(s.context.phase).toBe('failed');
    expect(timerSets(fx, 'restart')).toEqual([]);
    expect(engineFx(fx)).toEqual([]);
    expect(clientErrors(fx)).toEqual(['SESSION_FAILED']);
    expect(s.context.timers).not.toHaveProperty('restart');
  });

  it('a completed turn resets the crash count', () => {
    let [s, fx] = feed(remoteIdle({ maxRestarts: 1 }), exited(1, 2_000));
    [s, fx] = feed(s, fired('restart', 3_000), ready(2, 3_100), send('a', 3_200), turnDone(2, 3_300));
    expect(s.context.restartAttempts).toBe(0);
    [s, fx] = feed(s, exited(2, 4_000));
    expect(s.value).toBe('recovering');
    expect(timerSets(fx, 'restart')).toEqual([{ type: 'timer.set', id: 'restart', deadline: 5_000 }]);
  });

  it('a non-retryable error followed by an exit fails at once', () => {
    const [s1, fx1] = feed(remoteRunning(), engineError(1, 2_500, false), exited(1, 2_600, 1));
    expect(s1.value).toBe('failed');
    expect(timerSets(fx1, 'restart')).toEqual([]);
    expect(only(fx1, 'client.error')).toEqual([
      expect.objectContaining({ code: 'SESSION_FAILED', message: expect.stringContaining('not logged in') }),
    ]);
    expect(engineFx(fx1)).toEqual([]);
  });

  it('a retryable error followed by an exit restarts', () => {
    const [s1, fx1] = feed(remoteRunning(), engineError(1, 2_500, true), exited(1, 2_600, 1));
    expect(s1.value).toBe('recovering');
    expect(timerSets(fx1, 'restart')).toHaveLength(1);
    expect(clientErrors(fx1)).toEqual([]);
  });

  it('a new send after failure starts a fresh engine and delivers it', () => {
    const [s1] = feed(remoteRunning(), engineError(1, 2_500, false), exited(1, 2_600, 1));
    const [s2, fx2] = feed(s1, send('b', 3_000));
    expect(engineFx(fx2)).toEqual([engineStart(2, 'remote', 'tok-1')]);
    expect(s2.context.restartAttempts).toBe(0);
    const [, fx3] = feed(s2, ready(2, 3_100));
    expect(engineFx(fx3)).toEqual([engineSend(2, 'b')]);
  });

  it('a clean exit in local mode ends the session (final, stopped)', () => {
    const [s1, fx1] = feed(localActive(), exited(1, 2_000, 0));
    expect(s1.status).toBe('done');
    expect(s1.value).toBe('stopped');
    expect(s1.context.phase).toBe('stopped');
    expect(engineFx(fx1)).toEqual([]);
    expect(only(fx1, 'state.persist').at(-1)?.state.phase).toBe('stopped');
  });

  it('a crash in local mode restarts in local mode', () => {
    const [s1] = feed(localActive(), exited(1, 2_000, null, 'SIGKILL'));
    expect(s1.value).toBe('recovering');
    const [, fx2] = feed(s1, fired('restart', 3_000));
    expect(engineFx(fx2)).toEqual([engineStart(2, 'local', 'tok-1')]);
  });
});

describe('abort', () => {
  it('aborts the turn, cancels its requests, and records the turn as cancelled even if the engine says completed', () => {
    const [s1] = feed(remoteRunning(), permReq(1, 2_500, 'p1'));
    const [s2, fx2] = feed(s1, abort(3_000));
    expect(engineFx(fx2)).toEqual([{ type: 'engine.abort', gen: 1 }]);
    expect(s2.value).toEqual({ remote: 'interrupting' });
    expect(s2.context.completed.p1).toMatchObject({ status: 'cancelled', gen: 1 });
    expect(s2.context.requests).toEqual({});
    expect(timerSets(fx2, 'interrupt')).toEqual([{ type: 'timer.set', id: 'interrupt', deadline: 13_000 }]);
    expect(s2.context.turn).toMatchObject({ localId: 'a', aborted: true });

    // A second abort while interrupting does nothing.
    const [s2b, fx2b] = feed(s2, abort(3_050));
    expect(fx2b).toEqual([]);
    expect(s2b.context).toEqual(s2.context);

    const [s3, fx3] = feed(s2, turnDone(1, 3_100, 'completed'));
    expect(transcriptOf(fx3, 'turn_complete')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'cancelled' }) }),
    ]);
    expect(s3.value).toEqual({ remote: 'idle' });
    expect(only(fx3, 'timer.cancel')).toContainEqual({ type: 'timer.cancel', id: 'interrupt' });
    expect(s3.context.timers).not.toHaveProperty('interrupt');
  });

  it('after an aborted turn ends, the next queued message goes out', () => {
    const [s1] = feed(remoteRunning(), send('b', 2_100), abort(3_000));
    const [s2, fx2] = feed(s1, turnDone(1, 3_100, 'cancelled'));
    expect(engineFx(fx2)).toEqual([engineSend(1, 'b')]);
    expect(s2.value).toEqual({ remote: 'running' });
  });

  it('abort with no turn running is NOTHING_TO_ABORT and nothing else', () => {
    for (const s0 of [remoteIdle(), localActive()]) {
      const [s1, fx1] = feed(s0, abort(2_000));
      expect(fx1).toEqual([expect.objectContaining({ type: 'client.error', code: 'NOTHING_TO_ABORT' })]);
      expect(s1.context).toEqual(s0.context);
    }
  });

  it('if the turn never ends, the interrupt timeout stops the engine and restarts it with resume', () => {
    const [s1] = feed(remoteRunning(), send('b', 2_100), abort(3_000));
    const [s2, fx2] = feed(s1, fired('interrupt', 13_000));
    expect(engineFx(fx2)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(s2.value).toBe('switching');
    expect(s2.context.mode).toBe('remote');
    // An aborted turn ends cancelled, whatever ends it.
    expect(transcriptOf(fx2, 'turn_ended')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'cancelled' }) }),
    ]);

    const [s3, fx3] = feed(s2, exited(1, 13_500, null, 'SIGTERM'));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1')]);
    const [, fx4] = feed(s3, ready(2, 13_600));
    expect(engineFx(fx4)).toEqual([engineSend(2, 'b')]);
  });
});

describe('stall watchdog', () => {
  const config = { stallTimeoutMs: 10_000 };

  it('a turn with no engine events for stallTimeoutMs is interrupted', () => {
    const [s0, fx0] = feed(remoteIdle(config), send('a', 2_000));
    expect(timerSets(fx0, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 12_000 }]);

    const [s1, fx1] = feed(s0, fired('stall', 12_000));
    expect(s1.value).toEqual({ remote: 'interrupting' });
    expect(s1.context.phase).toBe('interrupting');
    expect(engineFx(fx1)).toEqual([{ type: 'engine.abort', gen: 1 }]);
    expect(s1.context.turn).toMatchObject({ stalled: true });

    const [, fx2] = feed(s1, turnDone(1, 12_500, 'failed'));
    expect(transcriptOf(fx2, 'turn_complete')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ status: 'cancelled' }) }),
    ]);
  });

  it('engine activity in between re-arms the watchdog instead', () => {
    const [s0] = feed(remoteIdle(config), send('a', 2_000), message(1, 5_000));
    const [s1, fx1] = feed(s0, fired('stall', 12_000));
    expect(s1.value).toEqual({ remote: 'running' });
    expect(engineFx(fx1)).toEqual([]);
    expect(timerSets(fx1, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 15_000 }]);

    // Other kinds of engine output count as activity too.
    const [s2, fx2] = feed(s1, delta(1, 14_000), fired('stall', 15_000));
    expect(s2.value).toEqual({ remote: 'running' });
    expect(timerSets(fx2, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 24_000 }]);

    // Then silence: stalled.
    const [s3, fx3] = feed(s2, fired('stall', 24_000));
    expect(s3.value).toEqual({ remote: 'interrupting' });
    expect(engineFx(fx3)).toEqual([{ type: 'engine.abort', gen: 1 }]);
  });

  it('an `activity` event (a keep-alive upstream) keeps the turn alive and changes nothing else', () => {
    const [s0] = feed(remoteIdle(config), send('a', 2_000));
    const [s1, fx1] = feed(s0, { type: 'activity', gen: 1, at: 9_000 });
    expect(fx1).toEqual([]); // no transcript, no notice, no timer
    expect(s1.context.lastActivityAt).toBe(9_000);
    expect(s1.context.thinking).toBe(s0.context.thinking);
    const [s2, fx2] = feed(s1, fired('stall', 12_000));
    expect(s2.value).toEqual({ remote: 'running' });
    expect(timerSets(fx2, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 19_000 }]);
    // From a stale generation it is no sign of life.
    const [s3] = feed(s2, { type: 'activity', gen: 0, at: 18_000 }, fired('stall', 19_000));
    expect(s3.value).toEqual({ remote: 'interrupting' });
  });

  it('a turn waiting on a permission decision is not stalled', () => {
    const [s0] = feed(remoteIdle(config), send('a', 2_000), permReq(1, 3_000, 'p1'));
    const [s1, fx1] = feed(s0, fired('stall', 12_000));
    expect(s1.value).toEqual({ remote: 'running' });
    expect(engineFx(fx1)).toEqual([]);
    expect(timerSets(fx1, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 22_000 }]);

    const [s2, fx2] = feed(s1, fired('stall', 22_000));
    expect(s2.value).toEqual({ remote: 'running' });
    expect(engineFx(fx2)).toEqual([]);
  });

  it('the time spent waiting on a human does not count once the decision is made', () => {
    const [s0] = feed(remoteIdle(config), send('a', 2_000), permReq(1, 3_000, 'p1'), fired('stall', 12_000));
    // Decided at 21_000; the engine has had only 1s since it could continue.
    const [s1, fx1] = feed(s0, allow('p1', 21_000), fired('stall', 22_000));
    expect(s1.value).toEqual({ remote: 'running' });
    expect(only(fx1, 'engine.abort')).toEqual([]);
    expect(timerSets(fx1, 'stall')).toEqual([{ type: 'timer.set', id: 'stall', deadline: 31_000 }]);

    const [s2, fx2] = feed(s1, fired('stall', 31_000));
    expect(s2.value).toEqual({ remote: 'interrupting' });
    expect(engineFx(fx2)).toEqual([{ type: 'engine.abort', gen: 1 }]);
  });

  it('a stalled turn that never ends is restarted and recorded as cancelled', () => {
    const [s1] = feed(remoteIdle(config), send('a', 2_000), fired('stall', 12_000));
    const [s2, fx2] = feed(s1, fired('interrupt', 22_000));
    expect(engineFx(fx2)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(transcriptOf(fx2, 'turn_ended')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'cancelled' }) }),
    ]);
    const [, fx3] = feed(s2, exited(1, 22_500, null, 'SIGTERM'));
    expect(engineFx(fx3)).toEqual([engineStart(2, 'remote', 'tok-1')]);
  });

  it('stallTimeoutMs 0 disables the watchdog', () => {
    const [s0, fx0] = feed(remoteIdle({ stallTimeoutMs: 0 }), send('a', 2_000));
    expect(timerSets(fx0, 'stall')).toEqual([]);
    expect(s0.context.timers).not.toHaveProperty('stall');
  });

  it('the watchdog is disarmed when the turn ends', () => {
    const [s0] = feed(remoteIdle(config), send('a', 2_000));
    const [s1, fx1] = feed(s0, turnDone(1, 3_000));
    expect(only(fx1, 'timer.cancel')).toContainEqual({ type: 'timer.cancel', id: 'stall' });
    const [s2, fx2] = feed(s1, fired('stall', 12_000));
    expect(fx2).toEqual([]);
    expect(s2.value).toEqual({ remote: 'idle' });
  });
});

describe('thinking indicator', () => {
  it('activity turns it on once, not per delta', () => {
    const [s1, fx1] = feed(
      remoteRunning(),
      thinking(1, 2_100),
      delta(1, 2_200),
      delta(1, 2_300),
      message(1, 2_400),
      delta(1, 2_500),
    );
    expect(ephemerals(fx1, 'thinking')).toEqual([{ type: 'ephemeral.emit', kind: 'thinking', active: true }]);
    expect(timerSets(fx1, 'thinking')).toEqual([{ type: 'timer.set', id: 'thinking', deadline: 5_100 }]);
    expect(s1.context.thinking).toBe(true);
  });

  it('clears itself after thinkingClearMs of quiet', () => {
    const [s1] = feed(remoteRunning(), thinking(1, 2_100));
    const [s2, fx2] = feed(s1, fired('thinking', 5_100));
    expect(ephemerals(fx2, 'thinking')).toEqual([{ type: 'ephemeral.emit', kind: 'thinking', active: false }]);
    expect(s2.context.thinking).toBe(false);
    expect(s2.context.timers).not.toHaveProperty('thinking');
  });

  it('does not clear while activity continues; re-arms from the last activity', () => {
    const [s1] = feed(remoteRunning(), thinking(1, 2_100), delta(1, 4_000));
    const [s2, fx2] = feed(s1, fired('thinking', 5_100));
    expect(ephemerals(fx2, 'thinking')).toEqual([]);
    expect(s2.context.thinking).toBe(true);
    expect(timerSets(fx2, 'thinking')).toEqual([{ type: 'timer.set', id: 'thinking', deadline: 7_000 }]);

    const [s3, fx3] = feed(s2, fired('thinking', 7_000));
    expect(ephemerals(fx3, 'thinking')).toEqual([{ type: 'ephemeral.emit', kind: 'thinking', active: false }]);
    expect(s3.context.thinking).toBe(false);
  });

  it('an explicit thinking {active:false} clears it at once', () => {
    const [s1] = feed(remoteRunning(), thinking(1, 2_100));
    const [s2, fx2] = feed(s1, thinking(1, 2_200, false));
    expect(ephemerals(fx2, 'thinking')).toEqual([{ type: 'ephemeral.emit', kind: 'thinking', active: false }]);
    expect(only(fx2, 'timer.cancel')).toContainEqual({ type: 'timer.cancel', id: 'thinking' });
    expect(s2.context.thinking).toBe(false);
  });
});

describe('presence', () => {
  it('tracks online state and re-prompts every open request on reconnect', () => {
    const [s1] = feed(
      remoteRunning({ permissionTimeoutMs: 0 }),
      permReq(1, 2_500, 'p1', 'Bash', { command: 'ls' }),
      permReq(1, 2_600, 'p2', 'Edit', { file: 'a.ts' }),
      allow('p1', 2_700),
      permReq(1, 2_800, 'p3', 'Write', { file: 'b.ts' }),
    );
    const [s2, fx2] = feed(s1, { type: 'client_offline', at: 3_000 });
    expect(fx2).toEqual([{ type: 'ephemeral.emit', kind: 'presence', online: false }]);
    expect(s2.context.online).toBe(false);

    const [s3, fx3] = feed(s2, { type: 'client_online', at: 4_000 });
    expect(s3.context.online).toBe(true);
    expect(fx3).toEqual([
      { type: 'ephemeral.emit', kind: 'presence', online: true },
      { type: 'ephemeral.emit', kind: 'permission_prompt', requestId: 'p2', toolName: 'Edit', input: { file: 'a.ts' } },
      { type: 'ephemeral.emit', kind: 'permission_prompt', requestId: 'p3', toolName: 'Write', input: { file: 'b.ts' } },
    ]);
  });
});

describe('persistence', () => {
  it('writes a new generation at once, debounces other changes through the persist timer, and tracks the stored version', () => {
    // A session is on record from its first moment: the generation it starts is written at once.
    const [s0, fx0] = start();
    expect(only(fx0, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: 0, state: expect.objectContaining({ gen: 1, phase: 'starting' }) })]);
    const [s0b, fx0b] = feed(s0, { type: 'persist_ok', version: 1, at: 1_010 });
    expect(s0b.context.version).toBe(1);
    // The phase change made while that write was in flight is not urgent: debounced.
    expect(timerSets(fx0b, 'persist')).toEqual([{ type: 'timer.set', id: 'persist', deadline: 1_010 + 250 }]);

    // More non-urgent changes before the timer fires do not re-arm it.
    const [s1, fx1] = feed(s0b, identified(1, 1_050, 'tok-1'), ready(1, 1_100));
    expect(timerSets(fx1, 'persist')).toEqual([]);
    expect(only(fx1, 'state.persist')).toEqual([]);

    const [s2, fx2] = feed(s1, fired('persist', 1_260));
    expect(only(fx2, 'state.persist')).toEqual([
      expect.objectContaining({ expectedVersion: 1, state: expect.objectContaining({ resumeToken: 'tok-1', gen: 1, phase: 'idle' }) }),
    ]);
    expect(s2.context.persist.inFlight).toBe(true);

    const [s3, fx3] = feed(s2, { type: 'persist_ok', version: 2, at: 1_300 });
    expect(s3.context.version).toBe(2);
    expect(s3.context.persist).toEqual({ inFlight: false, dirty: false, urgent: false, retries: 0 });
    expect(fx3).toEqual([]);

    // The next change arms the timer again and writes against version 2.
    const [s4, fx4] = feed(s3, turnDone(1, 2_000));
    expect(timerSets(fx4, 'persist')).toEqual([{ type: 'timer.set', id: 'persist', deadline: 2_250 }]);
    const [, fx5] = feed(s4, fired('persist', 2_250));
    expect(only(fx5, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: 2 })]);
  });

  it('abort and switch_mode are written at once (their promises resolve once they are on record)', () => {
    const [s1, fx1] = feed(remoteRunning(), abort(3_000));
    expect(only(fx1, 'state.persist')).toHaveLength(1);
    expect(s1.context.persist.inFlight).toBe(true);
    const [s2, fx2] = feed(remoteIdle(), switchTo('local', 3_000));
    expect(only(fx2, 'state.persist')).toEqual([expect.objectContaining({ state: expect.objectContaining({ mode: 'local' }) })]);
    expect(s2.context.persist.inFlight).toBe(true);
  });

  it('changes made while a write is in flight are written after it succeeds', () => {
    const [s0] = start();
    const [s1] = feed(s0, fired('persist', 1_250));
    const [s2, fx2] = feed(s1, ready(1, 1_300));
    expect(only(fx2, 'state.persist')).toEqual([]);
    expect(timerSets(fx2, 'persist')).toEqual([]);
    expect(s2.context.persist).toMatchObject({ inFlight: true, dirty: true });

    const [s3, fx3] = feed(s2, { type: 'persist_ok', version: 1, at: 1_400 });
    expect(s3.context.version).toBe(1);
    expect(timerSets(fx3, 'persist')).toEqual([{ type: 'timer.set', id: 'persist', deadline: 1_650 }]);
  });

  it('a permission change made while a write is in flight is written as soon as that write lands', () => {
    const [s0] = start();
    const [s1] = feed(s0, ready(1, 1_100), fired('persist', 1_250));
    expect(s1.context.persist.inFlight).toBe(true);
    const [s2, fx2] = feed(s1, send('a', 1_300), permReq(1, 1_400, 'p1'));
    expect(only(fx2, 'state.persist')).toEqual([]);
    expect(s2.context.persist).toMatchObject({ inFlight: true, dirty: true, urgent: true });
    const [s3, fx3] = feed(s2, { type: 'persist_ok', version: 1, at: 1_500 });
    expect(timerSets(fx3, 'persist')).toEqual([]);
    expect(only(fx3, 'state.persist')).toEqual([
      expect.objectContaining({ expectedVersion: 1, state: expect.objectContaining({ requests: { p1: expect.objectContaining({ toolName: 'Bash' }) } }) }),
    ]);
    expect(s3.context.persist).toMatchObject({ inFlight: true, dirty: false, urgent: false });
  });

  it('a persist result with no write in flight is ignored', () => {
    const s0 = remoteIdle();
    expect(s0.context.persist.inFlight).toBe(false);
    const [s1, fx1] = feed(s0, { type: 'persist_ok', version: 7, at: 1_200 });
    expect(fx1).toEqual([]);
    expect(s1.context).toEqual(s0.context);
  });

  it('retries a compare-and-set conflict against the stored version, then gives up with PERSIST_FAILED', () => {
    const [s0, fx0] = start({ config: { maxPersistRetries: 3 } });
    let [s, fx] = [s0, fx0];
    expect(only(fx, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: 0 })]);

    for (const version of [5, 6, 7]) {
      [s, fx] = feed(s, { type: 'persist_conflict', version, at: 1_300 + version });
      expect(only(fx, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: version })]);
      expect(clientErrors(fx)).toEqual([]);
      expect(s.context.version).toBe(version);
    }

    [s, fx] = feed(s, { type: 'persist_conflict', version: 8, at: 1_400 });
    expect(only(fx, 'state.persist')).toEqual([]);
    expect(clientErrors(fx)).toEqual(['PERSIST_FAILED']);
    expect(s.context.persist.inFlight).toBe(false);
  });

  it('a conflict keeps the decisions the other writer recorded', () => {
    const [s0] = start();
    const [s1] = feed(s0, fired('persist', 1_250));
    const stored = persisted({ completed: { px: { status: 'approved', decidedAt: 900, gen: 0 } } });
    const [s2, fx2] = feed(s1, { type: 'persist_conflict', version: 2, stored, at: 1_300 });
    expect(s2.context.completed.px).toEqual({ status: 'approved', decidedAt: 900, gen: 0 });
    expect(only(fx2, 'state.persist')[0]?.state.completed).toHaveProperty('px');
  });
});

describe('stop', () => {
  it('stops the engine, cancels everything open, and ends final with a last write', () => {
    const [s1] = feed(
      remoteRunning({ permissionTimeoutMs: 5_000 }),
      permReq(1, 2_500, 'p1'),
      thinking(1, 2_600),
    );
    const [s2, fx2] = feed(s1, stop(3_000));
    expect(engineFx(fx2)).toEqual([{ type: 'engine.stop', gen: 1 }]);
    expect(s2.value).toBe('stopping');
    expect(s2.status).toBe('active');
    expect(s2.context.completed.p1).toMatchObject({ status: 'cancelled', gen: 1 });
    expect(s2.context.requests).toEqual({});
    expect(s2.context.turn).toBeNull();
    expect(transcriptOf(fx2, 'turn_ended')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'a', status: 'cancelled' }) }),
    ]);
    expect(Object.keys(s2.context.timers).sort()).toEqual(['stop']);

    // A send while stopping is refused.
    const [s2b, fx2b] = feed(s2, send('z', 3_100));
    expect(clientErrors(fx2b)).toEqual(['SESSION_STOPPED']);
    expect(s2b.context.queue).toEqual([]);

    const [s3, fx3] = feed(s2, exited(1, 3_500, 0));
    expect(s3.status).toBe('done');
    expect(s3.value).toBe('stopped');
    expect(engineFx(fx3)).toEqual([]);
    expect(s3.context.timers).toEqual({});
    expect(s3.context.liveGen).toBeNull();
    const last = only(fx3, 'state.persist').at(-1);
    expect(last?.state.phase).toBe('stopped');
    expect(last?.state.requests).toEqual({});
    expect(fx3.at(-1)?.type).toBe('state.persist');
  });

  it('the stop timeout ends the session when the engine never exits', () => {
    const [s1] = feed(remoteIdle(), stop(3_000));
    const [s2, fx2] = feed(s1, fired('stop', 13_000));
    expect(s2.status).toBe('done');
    expect(engineFx(fx2)).toEqual([]);
    expect(only(fx2, 'state.persist')).toHaveLength(1);
  });

  it('stop with no live engine ends at once', () => {
    const [s1] = feed(remoteIdle(), exited(1, 2_000));
    expect(s1.value).toBe('recovering');
    const [s2, fx2] = feed(s1, stop(2_100));
    expect(s2.status).toBe('done');
    expect(engineFx(fx2)).toEqual([]);
    expect(s2.context.timers).toEqual({});
  });
});

describe('restore', () => {
  it('cancels requests of the old generation, resumes as the next generation, and delivers the queue', () => {
    const state = persisted({
      gen: 4,
      resumeToken: 'tok-4',
      queue: [{ localId: 'q1', text: textOf('q1'), queuedAt: 500 }],
      requests: { r1: { toolName: 'Bash', input: { command: 'rm -rf build' }, gen: 4, createdAt: 400 } },
      deliveredIds: ['d0'],
    });
    const [s0, fx0] = start({ restored: { version: 3, state } });
    expect(s0.context.requests).toEqual({});
    expect(s0.context.completed.r1).toMatchObject({ status: 'cancelled', gen: 4, decidedAt: T0 });
    expect(engineFx(fx0)).toEqual([engineStart(5, 'remote', 'tok-4')]);
    expect(s0.context).toMatchObject({ gen: 5, liveGen: 5, version: 3 });
    // The cancellation is written against the restored version.
    expect(only(fx0, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: 3 })]);

    const [s1, fx1] = feed(s0, ready(5, 1_100));
    expect(engineFx(fx1)).toEqual([engineSend(5, 'q1')]);
    expect(s1.context.deliveredIds).toEqual(['d0', 'q1']);

    const [, fx2] = feed(s1, allow('r1', 1_200), send('d0', 1_300));
    expect(clientErrors(fx2)).toEqual(['PERMISSION_ALREADY_DECIDED', 'DUPLICATE_SEND']);
    expect(engineFx(fx2)).toEqual([]);
  });

  it('a restored session without open requests resumes and delivers its queue too', () => {
    const state = persisted({ gen: 2, resumeToken: 'tok-2', queue: [{ localId: 'q1', text: textOf('q1'), queuedAt: 500 }] });
    const [s0, fx0] = start({ restored: { version: 9, state } });
    expect(engineFx(fx0)).toEqual([engineStart(3, 'remote', 'tok-2')]);
    const [, fx1] = feed(s0, ready(3, 1_100));
    expect(engineFx(fx1)).toEqual([engineSend(3, 'q1')]);
  });
});

describe('recovery after the host died mid-turn', () => {
  const inFlight = { localId: 'm1', text: textOf('m1'), gen: 4, startedAt: 550, eventId: 'old.4-7' };
  const midTurn = (overrides: Partial<PersistedSession> = {}) =>
    persisted({ gen: 4, resumeToken: 'tok-4', deliveredIds: ['m1'], turn: inFlight, queue: [{ localId: 'q1', text: textOf('q1'), queuedAt: 560 }], ...overrides });
  const checked = (gen: number, at: number, localId: string, received: boolean | null): SessionEvent => ({ type: 'delivery_checked', gen, at, localId, received });

  it('a delivered turn is stored as the turn in flight (the write the runtime waits for before engine.send)', () => {
    const s = remoteRunning();
    expect(s.context.turn).toMatchObject({ localId: 'a', text: textOf('a'), gen: 1 });
    const [, fx] = feed(s, send('b', 2_100));
    expect(only(fx, 'state.persist')[0]?.state.turn).toEqual({ localId: 'a', text: textOf('a'), gen: 1, startedAt: 2_000, eventId: s.context.turn!.eventId });
    const [done, fxDone] = feed(s, turnDone(1, 2_500), fired('persist', 2_750));
    expect(done.context.turn).toBeNull();
    expect(only(fxDone, 'state.persist')[0]?.state).not.toHaveProperty('turn');
  });

  it('ends the turn in flight interrupted, asks the resumed engine about its message first, then delivers the queue', () => {
    const [s0, fx0] = start({ restored: { version: 3, state: midTurn() } });
    expect(transcriptOf(fx0, 'turn_ended')).toEqual([
      expect.objectContaining({ gen: 4, payload: { localId: 'm1', status: 'interrupted', reason: 'the host stopped during the turn' } }),
    ]);
    expect(s0.context).toMatchObject({ turn: null, unconfirmed: { localId: 'm1', text: textOf('m1'), gen: 4 }, gen: 5, recovery: null });
    // The generation is bumped, and the recovery written against the restored version at once.
    expect(engineFx(fx0)).toEqual([engineStart(5, 'remote', 'tok-4')]);
    expect(only(fx0, 'state.persist')).toEqual([
      expect.objectContaining({ expectedVersion: 3, state: expect.objectContaining({ unconfirmed: { localId: 'm1', text: textOf('m1'), gen: 4 } }) }),
    ]);
    // A retried send of the interrupted message is still a duplicate.
    expect(clientErrors(feed(s0, send('m1', 1_050))[1])).toEqual(['DUPLICATE_SEND']);

    const [s1, fx1] = feed(s0, ready(5, 1_100));
    expect(s1.value).toEqual({ remote: 'confirming' });
    expect(s1.context.phase).toBe('starting');
    expect(engineFx(fx1)).toEqual([]);
    expect(only(fx1, 'engine.check_delivery')).toEqual([{ type: 'engine.check_delivery', gen: 5, message: { localId: 'm1', text: textOf('m1') } }]);
    // Sends meanwhile wait in the queue; an answer about another id, or from a stale engine, changes nothing.
    const [s2, fx2] = feed(s1, send('q2', 1_150), checked(5, 1_160, 'other', false), checked(4, 1_170, 'm1', false));
    expect(engineFx(fx2)).toEqual([]);
    expect(s2.value).toEqual({ remote: 'confirming' });

    // The agent never got it: it goes out again, first, then the queue in order.
    const [s3, fx3] = feed(s2, checked(5, 1_200, 'm1', false));
    expect(s3.value).toEqual({ remote: 'running' });
    expect(engineFx(fx3)).toEqual([engineSend(5, 'm1')]);
    expect(transcriptOf(fx3, 'delivery_checked').map((e) => e.payload)).toEqual([{ localId: 'm1', received: false }]);
    expect(s3.context).toMatchObject({ unconfirmed: null, deliveredIds: ['m1'] });
    expect(s3.context.queue.map((q) => q.localId)).toEqual(['q1', 'q2']);
    const [, fx4] = feed(s3, turnDone(5, 1_300));
    expect(engineFx(fx4)).toEqual([engineSend(5, 'q1')]);
  });

  it('a message the agent has, or that nobody can tell about, is not sent again', () => {
    for (const received of [true, null]) {
      const [s0] = start({ restored: { version: 3, state: midTurn() } });
      const [s1, fx1] = feed(s0, ready(5, 1_100), checked(5, 1_200, 'm1', received));
      expect(engineFx(fx1)).toEqual([engineSend(5, 'q1')]);
      expect(transcriptOf(fx1, 'delivery_checked').map((e) => e.payload)).toEqual([{ localId: 'm1', received }]);
      expect(s1.context.unconfirmed).toBeNull();
      // Nothing queued: the check ends idle.
      const [t0] = start({ restored: { version: 3, state: midTurn({ queue: [] }) } });
      const [t1, gx1] = feed(t0, ready(5, 1_100), checked(5, 1_200, 'm1', received));
      expect(t1.value).toEqual({ remote: 'idle' });
      expect(engineFx(gx1)).toEqual([]);
    }
  });

  it('a local restore keeps the question for the next remote engine; a crash during the check asks again', () => {
    const [s0] = start({ mode: 'local', restored: { version: 3, state: midTurn() } });
    const [s1, fx1] = feed(s0, ready(5, 1_100));
    expect(s1.value).toEqual({ local: 'active' });
    expect(only(fx1, 'engine.check_delivery')).toEqual([]);
    expect(s1.context.unconfirmed?.localId).toBe('m1');

    const [r0] = start({ restored: { version: 3, state: midTurn() } });
    const [r1] = feed(r0, ready(5, 1_100), exited(5, 1_150));
    expect(r1.value).toBe('recovering');
    const [r2, fx2] = feed(r1, fired('restart', r1.context.timers.restart!), ready(6, 3_000));
    expect(r2.value).toEqual({ remote: 'confirming' });
    expect(only(fx2, 'engine.check_delivery')).toEqual([{ type: 'engine.check_delivery', gen: 6, message: { localId: 'm1', text: textOf('m1') } }]);
  });

  it('uses what the journal shows: a turn that ended after the last write is not interrupted (its usage counts); agent output means it arrived', () => {
    const usage = { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.5 };
    const facts = { turnJournaled: true, agentResponded: true, openTurns: [], openRequests: [], lastGen: 4 };
    const [a0, ax0] = start({ restored: { version: 3, state: midTurn() }, journal: { ...facts, turnEnded: { type: 'turn_complete', usage } } });
    expect(transcriptOf(ax0, 'turn_ended')).toEqual([]);
    expect(a0.context.usage).toMatchObject({ inputTokens: 7, outputTokens: 3, costUsd: 0.5, turns: 1 });
    expect(a0.context.unconfirmed).toBeNull();

    const [b0, bx0] = start({ restored: { version: 3, state: midTurn() }, journal: { ...facts, turnEnded: null } });
    expect(transcriptOf(bx0, 'turn_ended').map((e) => e.payload)).toEqual([{ localId: 'm1', status: 'interrupted', reason: 'the host stopped during the turn' }]);
    expect(b0.context.unconfirmed).toBeNull(); // The agent answered: it had the message.
    expect(feed(b0, ready(5, 1_100))[0].value).toEqual({ remote: 'running' });
  });

  it('a turn an earlier recovery already ended in the journal (its state write lost) is not ended twice, but still asked about', () => {
    const facts = { turnJournaled: true, turnEnded: { type: 'turn_ended' as const, interrupted: true }, agentResponded: false, openTurns: [], openRequests: [], lastGen: 5 };
    const [s0, fx0] = start({ restored: { version: 3, state: midTurn() }, journal: facts });
    expect(transcriptOf(fx0, 'turn_ended')).toEqual([]);
    expect(transcriptOf(fx0, 'user_message')).toEqual([]);
    expect(s0.context.unconfirmed).toEqual({ localId: 'm1', text: textOf('m1'), gen: 4 });
    // A turn the engine ended itself (failed) is not asked about: at most once, as after an engine crash.
    const [f0] = start({ restored: { version: 3, state: midTurn() }, journal: { ...facts, turnEnded: { type: 'turn_ended', interrupted: false } } });
    expect(f0.context.unconfirmed).toBeNull();
  });

  it('writes the user_message the journal lacks, and closes turns and requests older crashes left open', () => {
    const facts = {
      turnJournaled: false,
      turnEnded: null,
      agentResponded: false,
      openTurns: [{ localId: 'old-1', gen: 2 }],
      openRequests: [{ requestId: 'old-p', gen: 2 }],
      lastGen: 4,
    };
    const [s0, fx0] = start({ restored: { version: 3, state: midTurn() }, journal: facts });
    expect(only(fx0, 'transcript.emit').map((e) => [e.entry.type, e.entry.gen, e.entry.payload])).toEqual([
      ['permission_resolved', 2, { requestId: 'old-p', status: 'cancelled', reason: 'session restarted before a decision' }],
      ['turn_ended', 2, { localId: 'old-1', status: 'interrupted', reason: 'the host stopped during the turn' }],
      ['user_message', 4, { localId: 'm1', text: textOf('m1'), recovered: true }],
      ['turn_ended', 4, { localId: 'm1', status: 'interrupted', reason: 'the host stopped during the turn' }],
    ]);
    expect(s0.context.completed['old-p']).toMatchObject({ status: 'cancelled', gen: 2 });
    expect(clientErrors(feed(s0, allow('old-p', 1_100))[1])).toEqual(['PERMISSION_ALREADY_DECIDED']);
  });

  it('ends a turn typed in the local terminal that the dead host was answering (issue 20: ase serve SIGKILLed mid-turn with a desk attached)', () => {
    const facts = { turnJournaled: false, turnEnded: null, agentResponded: false, openTurns: [], openRequests: [], openLocalTurn: { gen: 4 }, lastGen: 4 };
    const { turn: _none, ...idle } = midTurn({ mode: 'local', phase: 'local', queue: [] });
    const [, fx0] = start({ restored: { version: 3, state: idle }, journal: facts });
    expect(only(fx0, 'transcript.emit').map((e) => [e.entry.type, e.entry.gen, e.entry.payload])).toEqual([
      ['turn_ended', 4, { status: 'interrupted', reason: 'the host stopped during the turn', local: true }],
    ]);
  });

  it('continues after the newest generation the journal shows (a host can start one and die before storing it)', () => {
    const facts = { turnJournaled: true, turnEnded: null, agentResponded: false, openTurns: [], openRequests: [], lastGen: 6 };
    const [s0, fx0] = start({ restored: { version: 3, state: midTurn() }, journal: facts });
    expect(engineFx(fx0)).toEqual([engineStart(7, 'remote', 'tok-4')]);
    expect(s0.context.gen).toBe(7);
  });

  it('a stored unconfirmed message survives a restore that has no turn in flight', () => {
    const [s0] = start({ restored: { version: 3, state: persisted({ gen: 5, unconfirmed: { localId: 'm1', text: textOf('m1'), gen: 4 } }) } });
    expect(s0.context.unconfirmed).toEqual({ localId: 'm1', text: textOf('m1'), gen: 4 });
    expect(feed(s0, ready(6, 1_100))[0].value).toEqual({ remote: 'confirming' });
  });
});

describe('runtime settings (set_model, set_permission_mode)', () => {
  const setModel = (model: string | null, at: number): SessionEvent => ({ type: 'set_model', model, at });
  const setMode = (mode: string | null, at: number): SessionEvent => ({ type: 'set_permission_mode', mode, at });
  const configure = (gen: number, settings: EffectOf<'engine.configure'>['settings']) => ({ type: 'engine.configure', gen, settings });

  it('stores the choice, writes it at once, records it, and tells the live engine', () => {
    const [s1, fx1] = feed(remoteIdle(), setModel('opus', 2_000));
    expect(s1.context).toMatchObject({ model: 'opus', permissionMode: null });
    expect(s1.value).toEqual({ remote: 'idle' });
    expect(only(fx1, 'engine.configure')).toEqual([configure(1, { model: 'opus' })]);
    expect(only(fx1, 'state.persist')).toEqual([expect.objectContaining({ state: expect.objectContaining({ model: 'opus' }) })]);
    expect(transcriptOf(fx1, 'settings_changed').map((e) => e.payload)).toEqual([{ model: 'opus' }]);
    expect(clientErrors(fx1)).toEqual([]);

    const [s2, fx2] = feed(settleWrites(s1, 2_000), setMode('plan', 2_100));
    expect(s2.context).toMatchObject({ model: 'opus', permissionMode: 'plan' });
    expect(only(fx2, 'engine.configure')).toEqual([configure(1, { permissionMode: 'plan' })]);
    expect(only(fx2, 'state.persist')[0]!.state).toMatchObject({ model: 'opus', permissionMode: 'plan' });
  });

  it('null clears the choice: the engine is told to go back, and later writes and starts carry nothing', () => {
    const [s1] = feed(remoteIdle(), setModel('opus', 2_000), setMode('plan', 2_000));
    const [s2, fx2] = feed(settleWrites(s1, 2_000), setModel(null, 2_100));
    expect(s2.context).toMatchObject({ model: null, permissionMode: 'plan' });
    expect(only(fx2, 'engine.configure')).toEqual([configure(1, { model: null })]);
    const written = only(fx2, 'state.persist')[0]!.state;
    expect(written).not.toHaveProperty('model');
    expect(written.permissionMode).toBe('plan');
  });

  it('mid-turn the engine is told at once (when it applies is the engine\'s); the turn goes on', () => {
    const [s1, fx1] = feed(remoteRunning(), setModel('haiku', 2_500));
    expect(s1.value).toEqual({ remote: 'running' });
    expect(s1.context.turn?.localId).toBe('a');
    expect(only(fx1, 'engine.configure')).toEqual([configure(1, { model: 'haiku' })]);
    expect(only(fx1, 'engine.abort', 'engine.stop', 'engine.start')).toEqual([]);
  });

  it('every later start carries the choice: a crash restart, a mode switch, a retry after failure', () => {
    const [s1] = feed(remoteIdle({ maxRestarts: 1 }), setModel('opus', 2_000), setMode('acceptEdits', 2_000));
    // Crash → recovering → restart with the resume token and the choice.
    const [s2, fx2] = feed(settleWrites(s1, 2_000), exited(1, 3_000), fired('restart', 4_000));
    expect(only(fx2, 'engine.start')).toEqual([{ ...engineStart(2, 'remote', 'tok-1'), model: 'opus', permissionMode: 'acceptEdits' }]);
    // A switch to local: the next generation too.
    const [s3, fx3] = feed(s2, ready(2, 4_100), switchTo('local', 5_000), exited(2, 5_100, 0));
    expect(only(fx3, 'engine.start')).toEqual([{ ...engineStart(3, 'local', 'tok-1'), model: 'opus', permissionMode: 'acceptEdits' }]);
    // Failed (an error retrying cannot fix), then a send retries with the choice.
    const [s4] = feed(s3, ready(3, 5_200), engineError(3, 5_900, false), exited(3, 6_000));
    expect(s4.value).toBe('failed');
    const [, fx5] = feed(s4, send('b', 7_000));
    expect(only(fx5, 'engine.start')).toEqual([{ ...engineStart(4, 'remote', 'tok-1'), model: 'opus', permissionMode: 'acceptEdits' }]);
  });

  it('with no engine to reach (switching, recovering, failed) the choice is only stored; the next start carries it', () => {
    const [switching] = feed(remoteIdle(), switchTo('local', 2_000));
    const [s1, fx1] = feed(switching, setModel('opus', 2_100));
    expect(s1.value).toBe('switching');
    expect(only(fx1, 'engine.configure')).toEqual([]); // gen 1 was told to stop: nothing more goes to it
    expect(s1.context.model).toBe('opus');
    const [, fx2] = feed(s1, exited(1, 2_200, 0));
    expect(only(fx2, 'engine.start')).toEqual([{ ...engineStart(2, 'local', 'tok-1'), model: 'opus' }]);

    const [recovering] = feed(remoteIdle(), exited(1, 2_000));
    expect(recovering.value).toBe('recovering');
    const [r1, rx1] = feed(recovering, setMode('plan', 2_100));
    expect(only(rx1, 'engine.configure')).toEqual([]);
    const [, rx2] = feed(r1, fired('restart', 3_000));
    expect(only(rx2, 'engine.start')).toEqual([{ ...engineStart(2, 'remote', 'tok-1'), permissionMode: 'plan' }]);
  });

  it('an engine still starting is told too (it applies the change before ready)', () => {
    const [s0] = start();
    const [s1, fx1] = feed(s0, setModel('opus', 1_050));
    expect(s1.value).toEqual({ remote: 'launching' });
    expect(only(fx1, 'engine.configure')).toEqual([configure(1, { model: 'opus' })]);
  });

  it('while stopping the change is refused with SESSION_STOPPED and nothing changes', () => {
    const [stopping] = feed(remoteIdle(), stop(2_000));
    expect(stopping.value).toBe('stopping');
    const [s1, fx1] = feed(stopping, setModel('opus', 2_100), setMode('plan', 2_100));
    expect(clientErrors(fx1)).toEqual(['SESSION_STOPPED', 'SESSION_STOPPED']);
    expect(fx1.filter((e) => e.type !== 'client.error')).toEqual([]);
    expect(s1.context).toEqual(stopping.context);
  });

  it('a restored session keeps its stored choice (and one stored before the fields existed has none)', () => {
    const [s0, fx0] = start({ restored: { version: 2, state: persisted({ gen: 3, phase: 'idle', resumeToken: 'tok-3', model: 'opus', permissionMode: 'plan' }) } });
    expect(s0.context).toMatchObject({ model: 'opus', permissionMode: 'plan' });
    expect(only(fx0, 'engine.start')).toEqual([{ ...engineStart(4, 'remote', 'tok-3'), model: 'opus', permissionMode: 'plan' }]);
    const [t0, tx0] = start({ restored: { version: 2, state: persisted({ gen: 3, phase: 'idle', resumeToken: 'tok-3' }) } });
    expect(t0.context).toMatchObject({ model: null, permissionMode: null });
    expect(only(tx0, 'engine.start')).toEqual([engineStart(4, 'remote', 'tok-3')]);
  });

  it('a persist conflict retries with the choice still in the state', () => {
    const [s1, fx1] = feed(remoteIdle(), setModel('opus', 2_000));
    const version = only(fx1, 'state.persist')[0]!.expectedVersion;
    const [, fx2] = feed(s1, { type: 'persist_conflict', version: version + 1, at: 2_010 });
    expect(only(fx2, 'state.persist')).toEqual([expect.objectContaining({ expectedVersion: version + 1, state: expect.objectContaining({ model: 'opus' }) })]);
  });
});

function persisted(overrides: Partial<PersistedSession> = {}): PersistedSession {
  return {
    schemaVersion: 1,
    sessionId: 's1',
    agent: 'fake',
    workDir: '/work',
    mode: 'remote',
    phase: 'running',
    gen: 0,
    queue: [],
    requests: {},
    completed: {},
    usage: { ...ZERO_SESSION_USAGE },
    deliveredIds: [],
    updatedAt: 600,
    ...overrides,
  };
}
