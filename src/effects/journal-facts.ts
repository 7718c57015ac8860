/**
 * Reads a crashed session's transcript for what its state file could not say: the host can die
 * between a journal append and the state write after it (or the reverse), so on restore the journal
 * tells whether the turn in flight already ended, whether the agent answered it, and which turns and
 * permission requests earlier crashes left open. The SessionActor closes them (`recoverRestored`).
 */
import type { JournalFacts } from '../actors/session-context.js';
import type { TurnUsage } from '../events/agent-event.js';
import type { PersistedSession } from '../events/session-state.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';

/** Entry types that only come from the agent (so it had the turn's message). */
const AGENT_OUTPUT = new Set(['message', 'tool_call', 'tool_result', 'permission_request']);

export function journalFacts(entries: readonly TranscriptEntry[], state: PersistedSession): JournalFacts {
  const turn = state.turn;
  let turnIndex = -1;
  let turnEnded: JournalFacts['turnEnded'] = null;
  let agentResponded = false;
  /** user_message entries not closed yet, by eventId. */
  const openTurns = new Map<string, { localId: string; gen: number }>();
  const openRequests = new Map<string, number>();

  /** The generation of a local prompt (typed in the terminal UI) not closed yet. */
  let openLocalTurn: { gen: number } | undefined;
  let lastGen = 0;
  for (const [index, entry] of entries.entries()) {
    lastGen = Math.max(lastGen, entry.gen);
    const payload = (entry.payload ?? {}) as Record<string, unknown>;
    const localId = typeof payload['localId'] === 'string' ? payload['localId'] : undefined;
    switch (entry.type) {
      case 'user_message':
        if (localId !== undefined) openTurns.set(entry.eventId, { localId, gen: entry.gen });
        // The stored turn's entry, or one an earlier recovery wrote for it (that recovery's own
        // state write may not have landed: then the journal is ahead of the state).
        if (turn && (entry.eventId === turn.eventId || (payload['recovered'] === true && localId === turn.localId))) {
          turnIndex = index;
          turnEnded = null;
          agentResponded = false;
        }
        break;
      case 'message':
        // A prompt typed in the local terminal: the agent reports it as its user message, outside any remote turn.
        if (payload['role'] === 'user' && openTurns.size === 0) openLocalTurn = { gen: entry.gen };
        break;
      case 'turn_complete':
      case 'turn_ended':
        // Any turn's end closes the local one (a local turn's end has no localId).
        openLocalTurn = undefined;
        if (localId === undefined) break;
        for (const [eventId, open] of openTurns) if (open.localId === localId) openTurns.delete(eventId);
        if (turn && turnIndex >= 0 && localId === turn.localId && turnEnded === null) {
          turnEnded =
            entry.type === 'turn_complete'
              ? { type: 'turn_complete', usage: usageOf(payload['usage']) }
              : { type: 'turn_ended', interrupted: payload['status'] === 'interrupted' };
        }
        break;
      case 'permission_request': {
        const requestId = payload['requestId'];
        if (typeof requestId === 'string' && payload['handledLocally'] !== true && payload['refused'] !== true) openRequests.set(requestId, entry.gen);
        break;
      }
      case 'permission_resolved':
        if (typeof payload['requestId'] === 'string') openRequests.delete(payload['requestId']);
        break;
    }
    if (turn && turnIndex >= 0 && index > turnIndex && entry.gen === turn.gen && AGENT_OUTPUT.has(entry.type)) agentResponded = true;
  }
  if (turn) for (const [eventId, open] of openTurns) if (eventId === turn.eventId || open.localId === turn.localId) openTurns.delete(eventId);
  return {
    turnJournaled: turnIndex >= 0,
    turnEnded,
    agentResponded: agentResponded || turnEnded?.type === 'turn_complete',
    openTurns: [...openTurns.values()],
    openRequests: [...openRequests].map(([requestId, gen]) => ({ requestId, gen })),
    ...(openLocalTurn && !turn && { openLocalTurn }),
    lastGen,
  };
}

function usageOf(value: unknown): TurnUsage {
  const u = (value ?? {}) as Partial<Record<keyof TurnUsage, unknown>>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  return {
    inputTokens: n(u.inputTokens),
    outputTokens: n(u.outputTokens),
    cacheReadTokens: n(u.cacheReadTokens),
    cacheWriteTokens: n(u.cacheWriteTokens),
    ...(typeof u.costUsd === 'number' && { costUsd: n(u.costUsd) }),
  };
}
