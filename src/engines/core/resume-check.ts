/**
 * Whether an agent could really continue one of its sessions on this machine: the question a host
 * asks before it adopts a session another host ran (`POST /api/sessions/:id/adopt`, issue 22). The
 * agent's own session files (a Claude Code transcript, a Codex rollout) live on the disk of the
 * machine that ran it; started elsewhere without them, the agent would start over and the
 * conversation would be lost, so such a session is refused rather than adopted.
 */

/** What a stored session says about the agent session to continue. */
export interface ResumeTarget {
  /** The agent's own session id the session would resume (Claude session id, Codex thread id). */
  resumeToken: string;
  /** The session's work directory (the agent's cwd). */
  workDir: string;
  /** The engine options the session would start with (merged over the factory's, as at start). */
  engineOptions: Record<string, unknown>;
  /** The environment the agent would inherit (CLAUDE_CONFIG_DIR, CODEX_HOME, HOME); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The answer: `ok`, or why not, in words for a person (the path looked in, what was missing). */
export type ResumeCheck = { ok: true } | { ok: false; reason: string };
