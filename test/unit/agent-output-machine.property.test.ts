/**
 * The runtime hands every piece of agent output to the statechart in an `agent_output` batch, a
 * lone event too (SessionRuntime#flushOutput), so the machine's own handler of each output event
 * is taken only by callers that step the machine themselves. Property: in any state a session
 * reaches (idle, running, thinking or not, its timer armed or not, in remote or local mode) an
 * output event on its own and the batch of just that event leave the same snapshot and emit the
 * same effects, for the live generation and for a stale one. This keeps session.ts's handlers
 * and agent-output.ts's `applyOutput` in step.
 */
import fc from 'fast-check';
import { transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/actors/session.js';
import { sessionMachine } from '../../src/actors/session.js';
import { effectsOf, feed, settleWrites, start, type SessionSnapshot } from '../support/machine.js';

const T0 = 1_000;

/** The body of one output event the runtime batches (isBatchableOutput). */
const outputBody: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ type: fc.constant('text_delta'), messageId: fc.constantFrom('m1', 'm2'), text: fc.string({ maxLength: 4 }) }),
  fc.record({ type: fc.constant('thinking'), active: fc.boolean() }),
  fc.constant({ type: 'activity' }),
  fc.record({ type: fc.constant('message'), role: fc.constantFrom('assistant', 'system'), id: fc.constantFrom('a1', 'a2'), blocks: fc.constant([{ type: 'text', text: 'hi' }]) }),
  fc.record({ type: fc.constant('tool_call'), callId: fc.constant('c1'), toolName: fc.constant('Bash'), input: fc.constant({ command: 'ls' }) }),
  fc.record({ type: fc.constant('tool_result'), callId: fc.constant('c1'), status: fc.constantFrom('completed', 'failed'), output: fc.constant('ok'), isError: fc.boolean() }),
  fc.record({ type: fc.constant('plan'), entries: fc.constant([{ content: 'step', status: 'pending' }]) }),
  fc.record({ type: fc.constant('agent_mode'), modeId: fc.constantFrom('plan', 'default') }),
  fc.record({ type: fc.constant('available_commands'), commands: fc.constant([{ name: 'review' }]) }),
  fc.record({ type: fc.constant('context_usage'), usedTokens: fc.nat(1_000), windowTokens: fc.constant(200_000) }),
);

/** A session in some state it reaches: started in either mode, maybe mid-turn, after some output. */
function reached(mode: 'remote' | 'local', running: boolean, before: Record<string, unknown>[]): SessionSnapshot {
  let [s] = start({ mode, config: { thinkingClearMs: 3_000 } });
  let at = T0;
  const next = () => (at += 1);
  s = settleWrites(s, next());
  [s] = feed(s, { type: 'ready', gen: 1, at: next() });
  if (running && mode === 'remote') {
    [s] = feed(s, { type: 'send', text: 'go', localId: 'l1', at: next() });
    s = settleWrites(s, next());
  }
  for (const body of before) [s] = feed(s, { ...body, gen: 1, at: next() } as SessionEvent);
  return s;
}

describe('agent_output: one event alone and the batch of it', () => {
  it('leave the same snapshot and emit the same effects, in any state a session reaches', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'remote' | 'local'>('remote', 'local'),
        fc.boolean(),
        fc.array(outputBody, { maxLength: 6 }),
        fc.integer({ min: 0, max: 5_000 }),
        outputBody,
        fc.constantFrom(1, 2),
        (mode, running, before, quietMs, body, gen) => {
          const s = reached(mode, running, before);
          // After a quiet spell (up to past the thinking indicator's clear time).
          const at = s.context.now + quietMs + 1;
          const event = { ...body, gen, at } as SessionEvent;
          const [alone, aloneActions] = transition(sessionMachine, s, event);
          const [batched, batchedActions] = transition(sessionMachine, s, { type: 'agent_output', gen, at, events: [event] } as SessionEvent);
          expect(batched.context).toEqual(alone.context);
          expect(batched.value).toEqual(alone.value);
          expect(effectsOf(batchedActions)).toEqual(effectsOf(aloneActions));
        },
      ),
      { numRuns: 400 },
    );
  });
});
