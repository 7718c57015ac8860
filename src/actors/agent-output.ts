/**
 * Agent output handed to the statechart in batches (issue 24). A dense stream (partial messages,
 * thinking, tool use) brings tens of thousands of AgentEvents a turn, and an XState transition per
 * event was most of what a session cost on top of its engine. The events below are handled the
 * same way in every state (a root-level handler guarded only by `fromLiveEngine`, overridden
 * nowhere; a `user` message is not one of them: local mode handles it), so the runtime hands
 * consecutive ones of the live engine over as one `agent_output` event, and the statechart applies
 * the very same policy to each, in order, in one transition: the context and the effects are those
 * of one transition per event.
 */
import type { AgentEvent } from '../events/agent-event.js';
import * as policy from './session-policy.js';
import type { Step } from './session-step.js';

/** Consecutive output of one engine generation: `at` is the latest of the events' times. */
export type AgentOutputEvent = {
  type: 'agent_output';
  gen: number;
  at: number;
  events: AgentEvent[];
};

/** The event types the runtime hands over in batches (a `message` only when not the user's: local mode handles that one). */
export const BATCHED_OUTPUT_TYPES: ReadonlySet<AgentEvent['type']> = new Set([
  'activity',
  'text_delta',
  'thinking',
  'message',
  'tool_call',
  'tool_result',
  'plan',
  'agent_mode',
  'available_commands',
  'context_usage',
]);

/** Whether the statechart handles `event` (from the live engine) the same way in every state, so it may join a batch. */
export function isBatchableOutput(event: AgentEvent): boolean {
  return BATCHED_OUTPUT_TYPES.has(event.type) && (event.type !== 'message' || event.role !== 'user');
}

/**
 * Whether `event`, right after `previous` in a batch, would change nothing the statechart keeps, so
 * the batch need not carry it: a text delta after a text delta. The first turned the thinking
 * indicator on (and armed its timer at its own time); the next ones find it on and only move the
 * time of the last activity, which the batch's `at` (the latest of every event's, kept ones or not)
 * carries. A dense stream is mostly such runs (Codex: six deltas a message), and each event a batch
 * holds is one more for the statechart to walk and for the heap to keep until then.
 */
export function addsNothingAfter(previous: AgentEvent, event: AgentEvent): boolean {
  return event.type === 'text_delta' && previous.type === 'text_delta';
}

/**
 * Applies each event as its own root-level handler in session.ts would (keep the two in step),
 * with the step's time moved to the event's: transcript entries and timer deadlines carry the
 * time of the event they came from.
 */
export function applyOutput(s: Step, batch: AgentOutputEvent): void {
  for (const event of batch.events) {
    s.at = event.at;
    switch (event.type) {
      case 'activity':
        break; // `act` moved lastActivityAt: all an activity mark does.
      case 'thinking':
        policy.noteActivity(s, event.active);
        break;
      case 'text_delta':
      case 'available_commands':
      case 'context_usage':
        policy.noteActivity(s);
        break;
      case 'message':
      case 'tool_call':
      case 'tool_result':
        policy.recordOutput(s, event);
        break;
      case 'plan':
      case 'agent_mode':
        policy.recordAgentState(s, event);
        break;
      default:
        throw new Error(`agent_output: ${event.type} cannot be batched`);
    }
  }
  s.at = batch.at;
}
