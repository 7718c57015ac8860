/**
 * The completion backstop: after the agent ends a turn, a host-supplied check (`verifyTurn`: the
 * worktree is clean or committed, the tests pass, an expected file exists) decides whether the
 * turn is done, and the verdict is recorded as a durable `turn_verified` transcript entry
 * (`verified` / `unverified` with the reason). The agent's own claim never counts alone: the check
 * runs only after an authoritative turn end (the engine's tier), a turn whose end is only
 * cooperative is `unverified` without running it, and a check that throws is `unverified`.
 */
import { errorMessage } from '../errors.js';
import type { EngineTier } from '../engines/core/runtime-tier.js';
import type { SessionInput } from '../events/session-input.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';

/** The turn a check is asked about. */
export interface TurnToVerify {
  sessionId: string;
  agent: string;
  workDir: string;
  /** The `localId` of the message that started the turn. */
  localId: string;
  /** What the agent's turn end said (`end_turn`, `completed`, …): its claim, for the check to weigh. */
  stopReason?: string;
  /** The engine's tier: what its signals are worth. */
  tier: EngineTier;
}

/** `ok: true` = verified; `reason` is recorded either way. */
export interface TurnVerdict {
  ok: boolean;
  reason: string;
}

export type VerifyTurn = (turn: TurnToVerify) => TurnVerdict | Promise<TurnVerdict>;

export interface TurnVerifierContext {
  sessionId: string;
  agent: string;
  workDir: string;
  tier: EngineTier;
  verify: VerifyTurn;
  /** Feeds the verdict to the session (the `record_verification` input). */
  record(input: Extract<SessionInput, { type: 'record_verification' }>): Promise<void>;
}

/** Handles one transcript entry: a completed `turn_complete` gets a verdict. Returns the verdict's promise (tests await it). */
export async function verifyTurnEntry(entry: TranscriptEntry, ctx: TurnVerifierContext): Promise<void> {
  if (entry.type !== 'turn_complete') return;
  const payload = entry.payload as { localId?: unknown; status?: unknown; stopReason?: unknown };
  // Only a turn the agent says it completed is checked; failed and cancelled ones are not done anyway.
  if (typeof payload.localId !== 'string' || payload.status !== 'completed') return;
  const localId = payload.localId;
  let verdict: TurnVerdict;
  if (ctx.tier.signals.turnEnd !== 'authoritative') {
    verdict = { ok: false, reason: `the ${ctx.agent} engine's turn end is ${ctx.tier.signals.turnEnd} (tier ${ctx.tier.tier}): no authoritative signal that the turn ended, so it was not checked` };
  } else {
    try {
      const turn: TurnToVerify = { sessionId: ctx.sessionId, agent: ctx.agent, workDir: ctx.workDir, localId, tier: ctx.tier, ...(typeof payload.stopReason === 'string' && { stopReason: payload.stopReason }) };
      verdict = await ctx.verify(turn);
      if (typeof verdict?.ok !== 'boolean') verdict = { ok: false, reason: 'verifyTurn returned no verdict ({ok, reason})' };
    } catch (error) {
      verdict = { ok: false, reason: `verifyTurn failed: ${errorMessage(error)}` };
    }
  }
  await ctx.record({ type: 'record_verification', localId, verdict: verdict.ok ? 'verified' : 'unverified', reason: String(verdict.reason ?? '') });
}
