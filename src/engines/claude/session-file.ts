/**
 * Whether Claude Code has a transcript for a session id. Claude Code writes a session's file at its
 * first message, so a session that was started (`--session-id`) but never given a message cannot
 * be `--resume`d ("No conversation found"): it is started again with the same `--session-id`
 * instead, which keeps the id across a switch made before anyone typed anything.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { transcriptPathFor } from './translate.js';

export function hasSessionFile(configDir: string, cwd: string, sessionId: string): boolean {
  const expected = transcriptPathFor(configDir, cwd, sessionId);
  if (expected && existsSync(expected)) return true;
  // `--resume` finds a session started in another directory too.
  const projects = join(configDir, 'projects');
  try {
    return readdirSync(projects).some((dir) => existsSync(join(projects, dir, `${sessionId}.jsonl`)));
  } catch {
    return false;
  }
}

/** `--resume <id>` for a session with a transcript, `--session-id <id>` for one without. */
export function sessionArgs(configDir: string, cwd: string, sessionId: string): string[] {
  return hasSessionFile(configDir, cwd, sessionId) ? ['--resume', sessionId] : ['--session-id', sessionId];
}
