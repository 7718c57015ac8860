/**
 * The runtime leaves out of an `agent_output` batch what `addsNothingAfter` says would change
 * nothing (a text delta right after a text delta), and gives the batch the latest time of every
 * event, carried or not. Property: applying the carried batch gives the very context and effects
 * applying every event does, from any starting context (thinking indicator on or off, its timer
 * armed or not) and for any run of output. A rule that left out one event too many (a delta after
 * the thinking indicator was turned off, a second `thinking`) fails here within a few runs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addsNothingAfter, applyOutput, type AgentOutputEvent } from '../../src/actors/agent-output.js';
import { createSessionContext, type SessionContext } from '../../src/actors/session-context.js';
import { Step } from '../../src/actors/session-step.js';
import type { AgentEvent } from '../../src/events/agent-event.js';

const GEN = 1;
const START = 1_700_000_000_000;

/** One event of the output the statechart batches, `dt` ms after the one before. */
const output: fc.Arbitrary<{ dt: number; body: Record<string, unknown> }> = fc.record({
  dt: fc.integer({ min: 0, max: 5_000 }),
  body: fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant('text_delta'), messageId: fc.constantFrom('m1', 'm2'), text: fc.string({ maxLength: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('text_delta'), messageId: fc.constant('m3'), text: fc.constant('x'), parentCallId: fc.constant('call-1') }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('thinking'), active: fc.boolean() }) },
    { weight: 1, arbitrary: fc.constant({ type: 'activity' }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('message'), role: fc.constant('assistant'), id: fc.constantFrom('a1', 'a2'), blocks: fc.constant([{ type: 'text', text: 'hi' }]) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('tool_call'), callId: fc.constant('c1'), toolName: fc.constant('Bash'), input: fc.constant({ command: 'ls' }) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('tool_result'), callId: fc.constant('c1'), status: fc.constant('completed'), isError: fc.constant(false) }) },
  ),
});

/** A running session's context at `at`, with the thinking indicator (and its timer) as given. */
function contextAt(at: number, thinking: boolean, timerArmed: boolean): SessionContext {
  const ctx = createSessionContext({ sessionId: 's1', agent: 'fake', workDir: '/w', mode: 'remote', now: at });
  const timers: Record<string, number> = timerArmed ? { thinking: at + 1_000 } : {};
  return { ...ctx, phase: 'running', gen: GEN, liveGen: GEN, thinking, timers, seq: 7 };
}

/** The batch the runtime hands over: the events it carries, and the latest time of all of them. */
function carried(events: AgentEvent[]): AgentOutputEvent {
  const kept: AgentEvent[] = [events[0]!];
  let at = events[0]!.at;
  for (let i = 1; i < events.length; i++) {
    const event = events[i]!;
    if (event.at > at) at = event.at;
    if (!addsNothingAfter(events[i - 1]!, event)) kept.push(event);
  }
  return { type: 'agent_output', gen: GEN, at, events: kept };
}

function applied(ctx: SessionContext, batch: AgentOutputEvent) {
  const step = new Step(ctx, batch.at);
  applyOutput(step, batch);
  return { ctx: step.ctx, effects: step.effects };
}

describe('agent_output: what a batch leaves out changes nothing', () => {
  it('the carried batch gives the context and effects of every event applied', () => {
    fc.assert(
      fc.property(fc.array(output, { minLength: 1, maxLength: 40 }), fc.boolean(), fc.boolean(), (outputs, thinking, timerArmed) => {
        let at = START;
        const events = outputs.map(({ dt, body }) => ({ ...body, gen: GEN, at: (at += dt) }) as AgentEvent);
        const every: AgentOutputEvent = { type: 'agent_output', gen: GEN, at, events };
        const batch = carried(events);
        expect(batch.at).toBe(every.at);
        expect(applied(contextAt(START, thinking, timerArmed), batch)).toEqual(applied(contextAt(START, thinking, timerArmed), every));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves out most of a run of deltas, and nothing else', () => {
    const events = ['text_delta', 'text_delta', 'text_delta', 'thinking', 'text_delta', 'text_delta'].map(
      (type, i) => ({ type, gen: GEN, at: START + i, ...(type === 'thinking' ? { active: false } : { messageId: 'm1', text: `t${i}` }) }) as AgentEvent,
    );
    expect(carried(events).events.map((e) => e.at - START)).toEqual([0, 3, 4]);
  });
});
