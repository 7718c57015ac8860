/**
 * A resumable position in a rollout file and the event/diagnostic records the reader produces.
 *
 * A consumer stores the `cursor` of the last event it handled and later passes it as `from`:
 * reading continues with exactly the next event (no repeat, no gap). The reader re-reads the
 * bytes before `byteOffset` without emitting, to rebuild the per-file state (dialect, thread,
 * current turn, the turn's usage so far), so a cursor is three numbers, not a state snapshot.
 */
import type { AgentEventBody } from '../../../events/agent-event.js';
import type { DedupeKey } from './dedupe.js';

export interface RolloutCursor {
  /** the rollout file */
  path: string;
  /** byte offset of the first line not yet fully delivered (always a line start) */
  byteOffset: number;
  /**
   * index of that line (lines before `byteOffset`); in the paginated dialect it equals the
   * line's `ordinal` field. Checked on resume: a mismatch means the file was rewritten.
   */
  ordinal: number;
  /** events of that line already delivered (non-zero only inside a line that yields several events) */
  eventsDelivered?: number;
}

export interface TailedEvent {
  event: AgentEventBody;
  key: DedupeKey;
  /** where to resume to get the events AFTER this one */
  cursor: RolloutCursor;
  /** index of the line it came from */
  line: number;
  /** the line's UTC timestamp, when present */
  timestamp?: string;
}

export type RolloutDiagnosticKind =
  /** not JSON, or not a `{type, payload}` object: skipped */
  | 'malformed'
  /** longer than the cap: skipped */
  | 'line_too_long'
  /** a well-formed line with no mapping (unknown type, missing ids): skipped */
  | 'unhandled'
  /** `ordinal` not strictly increasing, or a resume cursor that does not fit the file */
  | 'position'
  /** the file shrank or could not be read: tailing stopped */
  | 'io'
  /** the consumer's listener threw (the tailer keeps going) */
  | 'listener';

export interface RolloutDiagnostic {
  kind: RolloutDiagnosticKind;
  message: string;
  /** line index, when the diagnostic is about a line */
  line?: number;
  byteOffset?: number;
  /** the start of the offending line (at most 200 characters) */
  excerpt?: string;
}

export function initialCursor(path: string): RolloutCursor {
  return { path, byteOffset: 0, ordinal: 0 };
}
