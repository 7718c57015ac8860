/**
 * The ephemeral frames of a session (text deltas, thinking, status, permission prompts), carried
 * from the host that runs it to pages on other hosts. They are never journaled (the hot path:
 * a delta is not worth a commit), so a server that does not own a session hears them only through
 * a relay. `agent-session-engine/postgres` implements it over LISTEN/NOTIFY (`PostgresLiveRelay`):
 * coalesced, and sent only while another host watches the session.
 *
 * Best effort by design, like the frames themselves on one host: a frame may be lost (a watcher
 * that just connected, a dropped connection); the durable entries carry the final text, and a
 * `resync` frame tells a watcher to fetch the owner's snapshot (open prompts) again.
 */

/** One ephemeral SSE frame: its event name and data, as the owner's own streams send it. */
export type LiveFrame = [event: string, data: unknown];

export interface SessionLiveRelay {
  /** Owner side: a frame of a session this host runs (dropped at once when no other host watches it). */
  publish(sessionId: string, event: string, data: unknown): void;
  /**
   * Watcher side: hears the frames of `sessionId` from whichever host runs it, until the returned
   * function is called. A `resync` frame (no data) means frames were dropped: fetch the snapshot.
   */
  subscribe(sessionId: string, listener: (frame: LiveFrame) => void): () => void;
  close(): Promise<void>;
}
