/**
 * Where a thread's rollout file is: `<codexHome>/sessions/YYYY/MM/DD/rollout-<time>-<threadId>.jsonl`.
 * The date folders use local time (reference codex.md §9.12), so the file is found by its id
 * suffix, not by a date computed here. Codex creates it at the thread's first turn: before that
 * there is none.
 */
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$CODEX_HOME`, else `~/.codex` of the environment's HOME: where Codex keeps its sessions. */
export function codexHomeOf(env: Readonly<Record<string, string | undefined>>): string {
  return env['CODEX_HOME'] ?? join(env['HOME'] ?? homedir(), '.codex');
}

/** The rollout file of `threadId` under `<codexHome>/sessions`, if there is one. */
export function findRollout(codexHome: string, threadId: string): string | undefined {
  const suffix = `-${threadId}.jsonl`;
  const walk = (dir: string, depth: number): string | undefined => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const entry of entries) {
      if (entry.isFile() && entry.name.startsWith('rollout-') && entry.name.endsWith(suffix)) return join(dir, entry.name);
      if (entry.isDirectory() && depth < 4) {
        const hit = walk(join(dir, entry.name), depth + 1);
        if (hit) return hit;
      }
    }
    return undefined;
  };
  return walk(join(codexHome, 'sessions'), 0);
}
