/**
 * One durable line of a session's transcript: what the journal appends and what clients replay.
 * `eventId` makes an entry idempotent across replays and restarts.
 */
import { z } from 'zod';

export const TranscriptEntrySchema = z.object({
  ts: z.number(),
  sessionId: z.string(),
  agent: z.string(),
  gen: z.number().int().nonnegative(),
  /** Unique within the session and stable across replays: `<instance>.<gen>-<seq>` (see SessionMachineInput.instance). */
  eventId: z.string(),
  type: z.string(),
  payload: z.unknown(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;
