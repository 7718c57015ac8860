/**
 * Where Claude Code keeps a session's transcript, and whether it has one. Claude Code writes a
 * session's file at its first message, so a session that was started (`--session-id`) but never
 * given a message cannot be `--resume`d ("No conversation found"): it is started again with the
 * same `--session-id` instead, which keeps the id across a switch made before anyone typed anything.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { transcriptPathFor } from './translate.js';

/** `$CLAUDE_CONFIG_DIR`, else `~/.claude` of the environment's HOME: where the CLI keeps its projects. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  return env['CLAUDE_CONFIG_DIR'] ?? join(env['HOME'] ?? homedir(), '.claude');
}

/** The transcript `--resume <sessionId>` would continue, if there is one under `configDir`. */
export function findSessionFile(configDir: string, cwd: string, sessionId: string): string | undefined {
  const expected = transcriptPathFor(configDir, cwd, sessionId);
  if (expected && isFile(expected)) return expected;
  // `--resume` finds a session started in another directory too.
  const projects = join(configDir, 'projects');
  try {
    for (const dir of readdirSync(projects)) {
      const candidate = join(projects, dir, `${sessionId}.jsonl`);
      if (isFile(candidate)) return candidate;
    }
  } catch {
    // no projects folder: no transcript
  }
  return undefined;
}

export function hasSessionFile(configDir: string, cwd: string, sessionId: string): boolean {
  return findSessionFile(configDir, cwd, sessionId) !== undefined;
}

/** `--resume <id>` for a session with a transcript, `--session-id <id>` for one without. */
export function sessionArgs(configDir: string, cwd: string, sessionId: string): string[] {
  return hasSessionFile(configDir, cwd, sessionId) ? ['--resume', sessionId] : ['--session-id', sessionId];
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}
