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
  /**
   * The entry's place in the session's journal: 1, 2, 3, ... assigned by the journal on append (any
   * value given is replaced), only growing across restarts and hosts. Absent on an entry not yet
   * journaled (a `transcript` notice); clients resume an event stream from it.
   */
  seq: z.number().int().positive().optional(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

/**
 * An entry as written today: journals written before the tool's one name kept a `tool_call`'s tool
 * in `payload.name`; it reads as `payload.toolName`. Other entries are returned as they are.
 */
export function upgradeTranscriptEntry(entry: TranscriptEntry): TranscriptEntry {
  const payload = entry.payload;
  if (entry.type !== 'tool_call' || typeof payload !== 'object' || payload === null || 'toolName' in payload || !('name' in payload)) return entry;
  const { name, ...rest } = payload as { name: unknown };
  return { ...entry, payload: { ...rest, toolName: name } };
}
/** A journaled entry: its `seq` is set. */
export type JournaledEntry = TranscriptEntry & { seq: number };
