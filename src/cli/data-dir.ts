/**
 * Where the CLI finds sessions (`--data-dir`, else `$ASE_DATA_DIR`, else `~/.agent-session-engine`,
 * the same default as `createSession`), and the stores it reads there.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AseError, defaultDataDir, FileJournal, FileStore } from '../index.js';

export function resolveDataDir(flag: string | undefined): string {
  return path.resolve(flag ?? defaultDataDir());
}

/** The file store and journal `createSession` uses under `dataDir`. */
export function openData(dataDir: string): { store: FileStore; journal: FileJournal } {
  return { store: new FileStore({ dir: path.join(dataDir, 'sessions') }), journal: new FileJournal({ dir: path.join(dataDir, 'transcripts') }) };
}

/** `INVALID_OPTIONS` naming the flag when `dir` is not an existing directory. */
export async function assertDirectory(dir: string, flag: string): Promise<void> {
  const found = await stat(dir).catch(() => undefined);
  if (!found) throw new AseError('INVALID_OPTIONS', `${flag} ${dir}: no such directory`);
  if (!found.isDirectory()) throw new AseError('INVALID_OPTIONS', `${flag} ${dir}: not a directory`);
}
