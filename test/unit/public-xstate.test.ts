/**
 * `transition` and `initialTransition` come with the package, so a user who did not install xstate
 * can step `sessionMachine` purely (docs/api.md §11 runs exactly this).
 */
import * as xstate from 'xstate';
import { describe, expect, it } from 'vitest';
import { initialTransition, sessionMachine, transition, type Effect } from '../../src/index.js';

const effectsOf = (actions: readonly { type: string; params?: unknown }[]): Effect[] =>
  actions.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: Effect }).event);

describe('xstate re-exports', () => {
  it('are xstate’s own functions', () => {
    expect(transition).toBe(xstate.transition);
    expect(initialTransition).toBe(xstate.initialTransition);
  });

  it('step sessionMachine as the docs show', () => {
    const [s0, a0] = initialTransition(sessionMachine, { sessionId: 's1', agent: 'fake', workDir: '/repo', mode: 'remote', now: 0 });
    expect(effectsOf(a0).map((e) => e.type)).toEqual(['engine.start', 'state.persist', 'ephemeral.emit']);
    const [s1] = transition(sessionMachine, s0, { type: 'send', text: 'hi', localId: 'm1', at: 5 });
    const [s2, a2] = transition(sessionMachine, s1, { type: 'ready', gen: 1, at: 10 });
    expect(s2.value).toEqual({ remote: 'running' });
    expect(effectsOf(a2).map((e) => e.type)).toEqual(['transcript.emit', 'engine.send', 'ephemeral.emit', 'timer.set']);
    const [, stale] = transition(sessionMachine, s2, { type: 'ready', gen: 7, at: 11 });
    expect(effectsOf(stale)).toEqual([]);
  });
});
