/**
 * The claude engines' `checkResume` (EngineFactory): Claude Code continues a session only from its
 * transcript, `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<slug of the cwd>/<sessionId>.jsonl`, on
 * the machine that ran it. Without that file `--resume` has nothing to load (the engine would start
 * the id afresh with `--session-id`, the conversation gone), so a host must not adopt the session.
 * The config dir is the one the engine would start the CLI with: the same options and environment.
 */
import type { ResumeCheck, ResumeTarget } from '../core/resume-check.js';
import { buildEnv } from '../transport/env.js';
import { CLAUDE_DEFAULT_PASS_ENV } from './cli.js';
import { mergeClaudeOptions, type ClaudeEngineOptions } from './options.js';
import { claudeConfigDir, findSessionFile } from './session-file.js';
import { transcriptPathFor } from './translate.js';

export async function checkClaudeResume(factory: ClaudeEngineOptions, target: ResumeTarget): Promise<ResumeCheck> {
  const options = mergeClaudeOptions(factory, target.engineOptions);
  const env = buildEnv({ allow: [...CLAUDE_DEFAULT_PASS_ENV, ...(options.passEnv ?? [])], set: options.env ?? {}, base: target.env ?? process.env });
  const configDir = claudeConfigDir(env);
  if (findSessionFile(configDir, target.workDir, target.resumeToken)) return { ok: true };
  const expected = transcriptPathFor(configDir, target.workDir, target.resumeToken) ?? `${configDir}/projects/*/${target.resumeToken}.jsonl`;
  return { ok: false, reason: `Claude Code's transcript of session ${target.resumeToken} is not on this host (looked for ${expected}, and under every project of ${configDir}/projects)` };
}
