/**
 * `ase rm ID...`: removes stored sessions (state file and transcript). It takes the session's
 * ownership lease first, so a session another live process drives is never removed (SESSION_OWNED,
 * even with `--force`). A session whose stored phase is not `stopped` was left by a host that died
 * mid-session (the next open would recover it), so it is kept unless `--force` says otherwise. The
 * released lease stays behind, so the session's fence never starts over.
 */
import { AseError, isAseError } from '../index.js';
import { openData } from './data-dir.js';
import { formatTime } from './format.js';
import type { Output } from './render.js';

/** Long enough for two deletes; a crashed `rm` blocks nobody (a dead pid's lease is taken at once). */
const RM_LEASE_TTL_MS = 10_000;

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
          `session "${sessionId}" is ${stored.state.phase} (last written ${formatTime(stored.state.updatedAt)}): it did not stop cleanly, and opening it again would recover it; stop it first, or pass --force`,
        );
      }
      const lease = await store.acquire(sessionId, { ttlMs: RM_LEASE_TTL_MS });
      try {
        await store.delete(sessionId);
        await journal.delete(sessionId);
      } finally {
        await store.release(lease);
      }
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
