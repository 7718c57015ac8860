/**
 * One-shot read of a whole rollout file (a finished session, or a snapshot of a running one):
 * the same events a tailer would report, without watching. A trailing line without its newline
 * is not processed (it may still be being written).
 */
import { readFile } from 'node:fs/promises';
import type { RolloutCursor, RolloutDiagnostic, TailedEvent } from './cursor.js';
import { RolloutReader } from './rollout-reader.js';

export interface RolloutSnapshot {
  events: TailedEvent[];
  diagnostics: RolloutDiagnostic[];
  /** resume point for a tailer that continues from here */
  cursor: RolloutCursor;
  threadId: string | undefined;
  dialect: 'legacy' | 'paginated' | undefined;
}

/** Translates rollout bytes already in memory (e.g. a fixture). */
export function readRolloutBytes(path: string, bytes: Buffer, from?: RolloutCursor): RolloutSnapshot {
  const reader = new RolloutReader(path, from ? { from } : {});
  const events = reader.push(bytes);
  return { events, diagnostics: [...reader.diagnostics], cursor: reader.cursor, threadId: reader.threadId, dialect: reader.dialect };
}

export async function readRollout(path: string, from?: RolloutCursor): Promise<RolloutSnapshot> {
  return readRolloutBytes(path, await readFile(path), from);
}
