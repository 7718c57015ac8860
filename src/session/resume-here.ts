/**
 * Whether a stored session could really continue on this machine: the check a host makes before it
 * adopts a session another host ran (`Supervisor.checkResume`, `POST /api/sessions/:id/adopt`).
 * Two things live on the disk of the machine that ran the agent, not in the shared store: the work
 * directory, and the agent's own session files (its transcript, its rollout), which only its
 * engine knows how to find (`EngineFactory.checkResume`). Started without them the agent would
 * start over, and the conversation the session shows would no longer be the one the agent holds.
 */
import { stat } from 'node:fs/promises';
import type { EngineFactory } from '../engines/core/engine.js';
import type { ResumeCheck } from '../engines/core/resume-check.js';
import type { PersistedSession } from '../events/session-state.js';

export async function checkResumeHere(
  state: PersistedSession,
  factory: EngineFactory,
  launch: { engineOptions: Record<string, unknown>; env?: Readonly<Record<string, string | undefined>> },
): Promise<ResumeCheck> {
  const dir = await stat(state.workDir).catch(() => undefined);
  if (!dir?.isDirectory()) return { ok: false, reason: `its work directory ${state.workDir} does not exist here` };
  // No agent session yet, or one never given a message: the agent holds nothing to lose, anywhere.
  const talked = state.usage.turns > 0 || state.deliveredIds.length > 0 || state.turn !== undefined;
  if (state.resumeToken === undefined || !talked || !factory.checkResume) return { ok: true };
  return factory.checkResume({ resumeToken: state.resumeToken, workDir: state.workDir, engineOptions: launch.engineOptions, ...(launch.env && { env: launch.env }) });
}
