/** Helpers for driving the pure SessionActor with `initialTransition` / `transition`. */
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../src/actors/session.js';
import type { SessionMachineInput } from '../../src/actors/session-context.js';
import type { Effect } from '../../src/events/effect.js';

export type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;

export function effectsOf(actions: readonly { type: string; params?: unknown }[]): Effect[] {
  return actions
    .filter((a) => a.type === 'xstate.emit')
    .map((a) => (a.params as { event: Effect }).event);
}

export function start(input: Partial<SessionMachineInput> = {}): [SessionSnapshot, Effect[]] {
  const [snapshot, actions] = initialTransition(sessionMachine, {
    sessionId: 's1',
    agent: 'fake',
    workDir: '/work',
    mode: 'remote',
    now: 1_000,
    ...input,
  });
  return [snapshot, effectsOf(actions)];
}

/** Feeds events one after another; returns the final snapshot and every effect, in order. */
export function feed(snapshot: SessionSnapshot, ...events: SessionEvent[]): [SessionSnapshot, Effect[]] {
  let current = snapshot;
  const all: Effect[] = [];
  for (const event of events) {
    const [next, actions] = transition(sessionMachine, current, event);
    current = next;
    all.push(...effectsOf(actions));
  }
  return [current, all];
}

export const only = <T extends Effect['type']>(effects: Effect[], ...types: T[]) =>
  effects.filter((e): e is Extract<Effect, { type: T }> => (types as string[]).includes(e.type));

/** Fires armed timer `id` at its deadline (the way the runtime's clock would); throws when it is not armed. */
export function fire(snapshot: SessionSnapshot, id: string): [SessionSnapshot, Effect[]] {
  const deadline = snapshot.context.timers[id];
  if (deadline === undefined) throw new Error(`timer ${id} is not armed (armed: ${Object.keys(snapshot.context.timers).join(', ') || 'none'})`);
  return feed(snapshot, { type: 'timer_fired', id, at: deadline });
}

/** Lets every state write in flight succeed. */
export function settleWrites(snapshot: SessionSnapshot, at: number): SessionSnapshot {
  let s = snapshot;
  while (s.context.persist.inFlight) [s] = feed(s, { type: 'persist_ok', version: s.context.version + 1, at });
  return s;
}
