/**
 * What the conformance kit's `start` and `resume` checks assert of one engine generation's whole
 * event log (after stop), for real-CLI files that run those stories on their own engines instead of
 * the kit's: no turn event before `ready`, the kit's ordering rules, `exited` last.
 */
import { expect } from 'vitest';
import type { AgentEvent } from '../../src/index.js';
import { eventOrderingViolations } from '../../src/testing.js';

/** Events that belong to a turn: none may come before `ready`. */
const TURN_EVENTS = new Set(['thinking', 'text_delta', 'message', 'tool_call', 'tool_result', 'permission_request', 'turn_complete']);

/** `ready` came, and no turn event before it. */
export function expectNoTurnEventBeforeReady(events: readonly AgentEvent[]): void {
  const ready = events.findIndex((e) => e.type === 'ready');
  expect(ready).toBeGreaterThanOrEqual(0);
  expect(events.slice(0, ready).filter((e) => TURN_EVENTS.has(e.type))).toEqual([]);
}

/** The whole log of generation `gen` with `turns` turns, after stop. */
export function expectWellOrdered(events: readonly AgentEvent[], gen: number, turns: number): void {
  expectNoTurnEventBeforeReady(events);
  expect(eventOrderingViolations(events, { gen, turns })).toEqual([]);
  expect(events.at(-1)?.type).toBe('exited');
}
