/** What a session tells its clients: one `SessionNotice` union, delivered by `on()` and `events()`. */
import type { AseError } from '../errors.js';
import type { AgentEvent } from '../events/agent-event.js';
import type { Ephemeral } from '../events/ephemeral.js';
import type { TranscriptEntry } from '../events/transcript-entry.js';
import type { SessionSnapshot } from './snapshot.js';

type EphemeralNotice<K extends Ephemeral['kind']> = Omit<Extract<Ephemeral, { kind: K }>, 'kind'> & { type: K };

/** Everything a session tells its clients. */
export type SessionNotice =
  /** An AgentEvent of the live generation (text deltas included), as the engine reported it. */
  | { type: 'agent'; event: AgentEvent }
  /** A durable transcript entry (also appended to the journal). */
  | { type: 'transcript'; entry: TranscriptEntry }
  | EphemeralNotice<'status'>
  | EphemeralNotice<'thinking'>
  | EphemeralNotice<'presence'>
  | EphemeralNotice<'permission_prompt'>
  | EphemeralNotice<'permission_resolved'>
  /** A refused input, an engine failure, or a runtime I/O failure. */
  | { type: 'error'; error: AseError }
  /** The session reached its final state; nothing follows. */
  | { type: 'done'; snapshot: SessionSnapshot };

export type SessionNoticeType = SessionNotice['type'];
export type NoticeOf<T extends SessionNoticeType> = Extract<SessionNotice, { type: T }>;
