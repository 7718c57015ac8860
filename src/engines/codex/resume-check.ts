/**
 * The codex engines' `checkResume` (EngineFactory): Codex continues a thread (`thread/resume`,
 * `codex exec resume`) only from its rollout, `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/
 * rollout-<time>-<threadId>.jsonl`, on the machine that ran it. Without that file the thread cannot
 * be resumed here, so a host must not adopt the session. CODEX_HOME is the one the engine would
 * start Codex with: the same options and environment.
 */
import type { ResumeCheck, ResumeTarget } from '../core/resume-check.js';
import { buildEnv } from '../transport/env.js';
import { codexEnvAllow, mergeCodexOptions, type CodexEngineOptions } from './options.js';
import { codexHomeOf, findRollout } from './rollout/find-rollout.js';

/** `engine`: the factory's name (`codex`, `codex-exec`), whose options schema the session's options are checked against. */
export async function checkCodexResume(engine: string, factory: CodexEngineOptions, target: ResumeTarget): Promise<ResumeCheck> {
  const options = mergeCodexOptions(engine, factory, target.engineOptions);
  const env = buildEnv({ allow: codexEnvAllow(options), set: options.env ?? {}, base: target.env ?? process.env });
  const codexHome = codexHomeOf(env);
  if (findRollout(codexHome, target.resumeToken)) return { ok: true };
  return { ok: false, reason: `Codex's rollout of thread ${target.resumeToken} is not on this host (looked for ${codexHome}/sessions/*/*/*/rollout-*-${target.resumeToken}.jsonl)` };
}
