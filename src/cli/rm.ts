/**
 * `ase rm ID...`: removes stored sessions (state file and transcript). A session whose stored phase
 * is not `stopped` may still be running in another process (or was left by one that died), so it is
 * kept unless `--force` says otherwise.
 */
import { AseError, isAseError } from '../index.js';
import { openData } from './data-dir.js';
import { formatTime } from './format.js';
import type { Output } from './render.js';

export async function runRm(options: { dataDir: string; sessionIds: string[]; force: boolean }, output: Output): Promise<number> {
  const { store, journal } = openData(options.dataDir);
  let failures = 0;
  for (const sessionId of options.sessionIds) {
    try {
      let stored;
      try {
        stored = await store.load(sessionId);
      } catch (error) {
        // An unreadable state file is what `rm` is for, once forced.
        if (!(isAseError(error, 'STORE_CORRUPT') && options.force)) throw error;
      }
      const transcript = await journal.read(sessionId).catch(() => [{}]);
      if (!stored && transcript.length === 0 && !options.force) throw new AseError('INVALID_INPUT', `no session "${sessionId}" under ${options.dataDir}`);
      if (stored && stored.state.phase !== 'stopped' && !options.force) {
        throw new AseError(
          'INVALID_INPUT',
          `session "${sessionId}" is ${stored.state.phase} (last written ${formatTime(stored.state.updatedAt)}): it may be running in another process; stop it first, or pass --force`,
        );
      }
      await store.delete(sessionId);
      await journal.delete(sessionId);
      output.err(`removed ${sessionId}\n`);
    } catch (error) {
      if (!isAseError(error)) throw error;
      failures++;
      output.err(`ase rm: ${error.code}: ${error.message}\n`);
    }
  }
  await journal.close();
  return failures > 0 ? 1 : 0;
}
