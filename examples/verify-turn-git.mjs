// @ts-check
/**
 * The completion backstop: the agent saying "done" is not enough. `verifyTurn` runs the host's own
 * check after every turn the agent completed; here a git worktree check (everything committed),
 * and the verdict is a durable `turn_verified` transcript entry (`verified` / `unverified` + reason).
 *
 * Runs on the built-in fake engine in a throw-away git repository: the first turn leaves the
 * worktree clean (verified); then a file is left uncommitted, as an agent that claims completion
 * too early would, and the second turn is `unverified` with the file named.
 *
 * Run it with plain Node: `node examples/verify-turn-git.mjs` (in this repository after
 * `npm run build`; in your project, with agent-session-engine installed). Needs `git` on PATH.
 * `test/unit/examples.test.ts` runs it too.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSession, MemoryJournal, MemoryStore } from 'agent-session-engine';

/**
 * The check: the worktree has no uncommitted change. Only runs after an authoritative turn end.
 * @type {import('agent-session-engine').VerifyTurn}
 */
export function worktreeCommitted(turn) {
  const status = execFileSync('git', ['status', '--porcelain'], { cwd: turn.workDir, encoding: 'utf8' }).trim();
  return status === '' ? { ok: true, reason: 'git worktree clean: everything committed' } : { ok: false, reason: `uncommitted changes: ${status.split('\n').join(', ')}` };
}

/** @returns {Promise<import('agent-session-engine').TranscriptEntry[]>} the `turn_verified` entries */
export async function main() {
  const repo = mkdtempSync(join(tmpdir(), 'ase-verify-'));
  try {
    const git = (/** @type {string[]} */ ...args) => execFileSync('git', ['-c', 'user.name=ase', '-c', 'user.email=ase@example.invalid', ...args], { cwd: repo });
    git('init', '-q');
    writeFileSync(join(repo, 'README.md'), '# demo\n');
    git('add', '.');
    git('commit', '-qm', 'start');

    const journal = new MemoryJournal();
    const session = await createSession({ agent: 'fake', workDir: repo, store: new MemoryStore(), journal, verifyTurn: worktreeCommitted });
    session.on('transcript', ({ entry }) => {
      if (entry.type === 'turn_verified') {
        const { localId, verdict, reason } = /** @type {{localId: string, verdict: string, reason: string}} */ (entry.payload);
        console.log(`turn ${localId}: ${verdict} (${reason})`);
      }
    });

    // The verdict follows the turn's end: wait for it (subscribed before the turn starts).
    const verdictOf = (/** @type {string} */ localId) =>
      session.waitFor('transcript', (n) => n.entry.type === 'turn_verified' && /** @type {{localId: string}} */ (n.entry.payload).localId === localId);
    let verdict = verdictOf('turn-1');
    await session.run('tidy up', { localId: 'turn-1' });
    await verdict;
    // The agent "finished" but left work uncommitted.
    writeFileSync(join(repo, 'notes.txt'), 'half done\n');
    verdict = verdictOf('turn-2');
    await session.run('finish the notes', { localId: 'turn-2' });
    await verdict;
    await session.stop();
    return (await journal.read(session.id)).filter((e) => e.type === 'turn_verified');
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
