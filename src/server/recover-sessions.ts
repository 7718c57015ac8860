/**
 * What `ase serve` does on start for the sessions of its data dir that were live when the server
 * (or whatever drove them) died: it opens them, without waiting for a client to touch them. Opening
 * a stored session runs the library's restore (`recoverRestored`): the turn in flight ends
 * `interrupted`, open permission prompts `cancelled`, and the messages the dead server had accepted
 * (`200 queued`, stored in the session's queue) go out once. Before this, they waited until someone
 * opened the session, so a phone that sent a message and walked away came back to find it unsent.
 */
import { toAseError } from '../errors.js';
import type { SessionPhase } from '../events/session-state.js';
import type { HostSessionInfo, SessionHost } from './session-host.js';

/**
 * Stored phases of a session that had an agent (or was about to) when its host died. Left out:
 * `stopped` and `stopping` (someone stopped it), `hibernated` (idle, its agent stopped on purpose;
 * the next send resumes it), `failed` (no agent; it waits for a new send, and opening it would only
 * restart what failed).
 */
export const LIVE_PHASES: ReadonlySet<SessionPhase> = new Set<SessionPhase>(['starting', 'local', 'idle', 'running', 'interrupting', 'switching', 'recovering']);

export interface RecoveryReport {
  /** Sessions opened again (their restore ran). */
  reopened: string[];
  /** Sessions that were live but could not be opened here, with why (e.g. `SESSION_OWNED`: another live process drives it). */
  skipped: { sessionId: string; code: string; message: string }[];
  /** The stored sessions could not be listed: none was tried. */
  error?: { code: string; message: string };
}

export interface RecoverSessionsOptions {
  /** Opens one session the way a client's first request would (the server's hooks attached). */
  open: (sessionId: string) => Promise<unknown>;
  /** Sessions opened at once: each may start an agent process. Default 4. */
  concurrency?: number;
  /** Stops opening more (the server is closing); those already opening finish. */
  signal?: AbortSignal;
}

/** Opens every stored session of `host` whose phase says it was live; resolves when all are tried. */
export async function recoverSessions(host: SessionHost, options: RecoverSessionsOptions): Promise<RecoveryReport> {
  const report: RecoveryReport = { reopened: [], skipped: [] };
  let wanted: HostSessionInfo[];
  try {
    wanted = (await host.list()).filter(wasLive);
  } catch (error) {
    const failure = toAseError(error, 'STORE_IO');
    return { ...report, error: { code: failure.code, message: failure.message } };
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < wanted.length && !options.signal?.aborted; i = next++) {
      const { sessionId } = wanted[i]!;
      try {
        await options.open(sessionId);
        report.reopened.push(sessionId);
      } catch (error) {
        // What createSession rejects with is an AseError already; anything else failed while starting it.
        const failure = toAseError(error, 'ENGINE_START_FAILED');
        report.skipped.push({ sessionId, code: failure.code, message: failure.message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, wanted.length) }, worker));
  return report;
}

/** Only what is merely stored: a session open here already is running. */
function wasLive(info: HostSessionInfo): boolean {
  return info.status === 'stored' && LIVE_PHASES.has(info.phase as SessionPhase);
}
