/**
 * journalFacts: what a crashed session's transcript says that its state file cannot (the host can
 * die between a journal append and the state write after it, either way round).
 */
import { describe, expect, it } from 'vitest';
import type { PersistedSession } from '../../src/events/session-state.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { journalFacts } from '../../src/effects/journal-facts.js';

let seq = 0;
const entry = (gen: number, type: string, payload: unknown, eventId = `x.${gen}-${++seq}`): TranscriptEntry => ({ ts: seq, sessionId: 's', agent: 'fake', gen, eventId, type, payload });
const state = (turn?: PersistedSession['turn']): PersistedSession => ({
  schemaVersion: 1,
  sessionId: 's',
  agent: 'fake',
  workDir: '/w',
  mode: 'remote',
  phase: 'running',
  gen: 3,
  queue: [],
  requests: {},
  completed: {},
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
  deliveredIds: [],
  ...(turn && { turn }),
  updatedAt: 0,
});
const TURN = { localId: 'm1', text: 'hi', gen: 3, startedAt: 0, eventId: 'x.3-turn' };
const usage = { inputTokens: 5, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.01 };

describe('journalFacts', () => {
  it('an empty journal: the turn is not journaled, nothing ended, nothing open', () => {
    expect(journalFacts([], state(TURN))).toEqual({ turnJournaled: false, turnEnded: null, agentResponded: false, openTurns: [], openRequests: [], lastGen: 0 });
  });

  it('the turn journaled, then agent output of its generation: the agent had it', () => {
    const entries = [entry(3, 'user_message', { localId: 'm1', text: 'hi' }, 'x.3-turn'), entry(2, 'message', {}), entry(3, 'tool_call', {})];
    expect(journalFacts(entries, state(TURN))).toMatchObject({ turnJournaled: true, turnEnded: null, agentResponded: true, openTurns: [], lastGen: 3 });
    // Output of another generation says nothing about this turn.
    expect(journalFacts(entries.slice(0, 2), state(TURN)).agentResponded).toBe(false);
  });

  it('a turn_complete after the last state write: ended, with its usage', () => {
    const entries = [entry(3, 'user_message', { localId: 'm1' }, 'x.3-turn'), entry(3, 'turn_complete', { localId: 'm1', status: 'completed', usage })];
    expect(journalFacts(entries, state(TURN))).toMatchObject({ turnEnded: { type: 'turn_complete', usage }, agentResponded: true });
  });

  it('ended by an earlier recovery whose state write did not land: interrupted, the question still open', () => {
    const entries = [
      entry(4, 'user_message', { localId: 'm1', text: 'hi', recovered: true }),
      entry(4, 'turn_ended', { localId: 'm1', status: 'interrupted', reason: 'the host stopped during the turn' }),
    ];
    expect(journalFacts(entries, state(TURN))).toMatchObject({ turnJournaled: true, turnEnded: { type: 'turn_ended', interrupted: true }, agentResponded: false, lastGen: 4 });
  });

  it('turns and requests left open by earlier crashes; local and refused requests never were open', () => {
    const entries = [
      entry(1, 'user_message', { localId: 'old' }),
      entry(1, 'permission_request', { requestId: 'p-open' }),
      entry(1, 'permission_request', { requestId: 'p-done' }),
      entry(1, 'permission_resolved', { requestId: 'p-done', status: 'approved' }),
      entry(1, 'permission_request', { requestId: 'p-local', handledLocally: true }),
      entry(1, 'permission_request', { requestId: 'p-refused', refused: true }),
      entry(2, 'user_message', { localId: 'closed' }),
      entry(2, 'turn_complete', { localId: 'closed', status: 'completed', usage }),
    ];
    expect(journalFacts(entries, state())).toEqual({
      turnJournaled: false,
      turnEnded: null,
      agentResponded: false,
      openTurns: [{ localId: 'old', gen: 1 }],
      openRequests: [{ requestId: 'p-open', gen: 1 }],
      lastGen: 2,
    });
  });

  it('a prompt typed in the local terminal that no turn end closed: an open local turn', () => {
    const typed = (gen: number) => entry(gen, 'message', { role: 'user', id: `u${gen}`, blocks: [{ type: 'text', text: 'typed at the desk' }] });
    // Open: the host died while the terminal UI answered it.
    expect(journalFacts([typed(2), entry(2, 'message', { role: 'assistant', id: 'a', blocks: [] })], state())).toMatchObject({ openLocalTurn: { gen: 2 }, openTurns: [] });
    // Closed by its turn_complete (a local turn's carries no localId).
    expect(journalFacts([typed(2), entry(2, 'turn_complete', { status: 'completed', usage })], state())).not.toHaveProperty('openLocalTurn');
    // The agent's user message inside a remote turn is that turn's, closed with it.
    expect(journalFacts([entry(3, 'user_message', { localId: 'm9' }), typed(3)], state())).not.toHaveProperty('openLocalTurn');
    // With a stored remote turn in flight, that turn is what the restore closes.
    expect(journalFacts([typed(3)], state(TURN))).not.toHaveProperty('openLocalTurn');
  });
});
