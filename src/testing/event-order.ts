/**
 * The event-ordering rules every engine keeps (the AgentEngine contract, src/engines/core/engine.ts),
 * checked over one engine generation's whole event log: every event carries the start's `gen`;
 * `exited` comes once and last; no `tool_result` before its `tool_call`, and one result per call;
 * one `turn_complete` per turn. Plain functions returning the broken rules, so any runner can use them.
 */
import type { AgentEvent } from '../events/agent-event.js';

export interface OrderingExpectations {
  /** The generation every event must carry. */
  gen: number;
  /** How many turns the test started (sends that began a turn): exactly this many `turn_complete`. */
  turns?: number;
}

/** The rules `events` breaks, as sentences (empty: none). */
export function eventOrderingViolations(events: readonly AgentEvent[], expected: OrderingExpectations): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const results = new Set<string>();
  let exitedAt = -1;
  events.forEach((event, i) => {
    const where = `event #${i} (${event.type})`;
    if (event.gen !== expected.gen) problems.push(`${where} carries gen ${event.gen}, not the start's ${expected.gen}`);
    if (exitedAt >= 0) problems.push(`${where} came after \`exited\` (event #${exitedAt})`);
    if (event.type === 'exited' && exitedAt < 0) exitedAt = i;
    if (event.type === 'tool_call') calls.add(event.callId);
    if (event.type === 'tool_result') {
      if (!calls.has(event.callId)) problems.push(`${where}: tool_result for ${event.callId} before (or without) its tool_call`);
      if (results.has(event.callId)) problems.push(`${where}: a second tool_result for ${event.callId}`);
      results.add(event.callId);
    }
  });
  if (expected.turns !== undefined) {
    const ends = events.filter((e) => e.type === 'turn_complete').length;
    if (ends !== expected.turns) problems.push(`${ends} turn_complete for ${expected.turns} turn(s): one turn end per turn`);
  }
  return problems;
}
