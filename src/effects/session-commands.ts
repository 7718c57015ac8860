/**
 * What a server may ask of a session another host owns, and the way there: a `SessionCommandRouter`
 * carries a command to the owner, which applies it through the ordinary Session API and answers.
 * `agent-session-engine/postgres` implements it over its command table (`PostgresCommandRouter`);
 * `ase serve` uses one when it is given (`--store postgres://`).
 */

/** One request a remote client made of a session, as data. */
export type SessionCommand =
  | { kind: 'send'; text: string; localId: string }
  | { kind: 'decide'; requestId: string; decision: 'allow' | 'deny'; updatedInput?: unknown; message?: string }
  | { kind: 'abort' }
  | { kind: 'mode'; to: 'local' | 'remote' }
  | { kind: 'stop' }
  /** The owner's snapshot of the live session (open prompts included), for a page on another host: changes nothing. */
  | { kind: 'peek' };

/** What the owner answered: the value the server returns, or the typed error it refused with. */
export type CommandOutcome =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; error: { code: string; message: string; details?: unknown } };

export interface SessionCommandRouter {
  /**
   * Carries `command` to the live host that owns `sessionId` and resolves with its answer;
   * `undefined` when no host holds the session (the caller may drive it itself), also when the
   * owner dies (or loses the session) while the command waits for it untaken: the command is
   * withdrawn, and the caller applies it or routes it again. A session whose
   * owner stopped renewing its lease is refused at once (`SESSION_OWNED`, `details.orphaned`), and
   * a command still untaken when the lease expires is withdrawn (undefined; asked again, the
   * refusal). An owner that does not answer in time is `TIMEOUT` (`details.withdrawn`: a command
   * without a `localId` it had not taken is withdrawn, nothing done; a message stays queued).
   * Never a success the owner did not give.
   */
  route(sessionId: string, command: SessionCommand): Promise<CommandOutcome | undefined>;
  /**
   * Rejects with `SESSION_OWNED` (`details.orphaned`) when another host's lease on `sessionId` has
   * expired and that host is not known dead here: such a session is adopted only when asked
   * (`POST /api/sessions/:id/adopt`), never by a stray command. Resolves otherwise.
   */
  refuseOrphaned?(sessionId: string): Promise<void>;
  /** Applies the commands addressed to this host with `apply`, from now until `close()`. */
  serve(apply: (sessionId: string, command: SessionCommand) => Promise<CommandOutcome>): void;
  close(): Promise<void>;
}
