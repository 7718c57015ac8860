// @ts-check
/**
 * Several sessions in one supervisor: a subscriber that hears all of them (a snapshot of what is
 * open first, then every notice tagged with its session id), a turn on each, the list of open and
 * stored sessions, the `maxSessions` limit, and one `shutdown()` for all.
 *
 * Nothing is written to disk: the store and the journal are in memory, the agent is the built-in
 * fake engine (it echoes). Run it with plain Node: `node examples/supervisor.mjs` (in this
 * repository after `npm run build`). `test/unit/examples.test.ts` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { createSupervisor, isAseError, MemoryJournal, MemoryStore } from 'agent-session-engine';

/** @returns {Promise<import('agent-session-engine').SupervisedSessionInfo[]>} */
export async function main() {
  const supervisor = createSupervisor({ store: new MemoryStore(), journal: new MemoryJournal(), maxSessions: 2 });

  const alpha = await supervisor.create({ agent: 'fake', workDir: process.cwd(), sessionId: 'alpha' });

  // A client connecting now first learns what is open, then hears every session.
  supervisor.subscribeAll((notice) => {
    if (notice.type === 'snapshot') console.log(`snapshot ${notice.sessionId}: ${notice.session.status} (${notice.session.phase})`);
    else if (notice.type === 'agent' && notice.event.type === 'message') console.log(`${notice.sessionId} says: ${notice.event.blocks.map((b) => (b.type === 'text' ? b.text : '')).join('')}`);
  });

  const beta = await supervisor.create({ agent: 'fake', workDir: process.cwd(), sessionId: 'beta' });
  await Promise.all([alpha.run('hello from alpha'), beta.run('hello from beta')]);

  // The limit is two open sessions.
  try {
    await supervisor.create({ agent: 'fake', workDir: process.cwd() });
  } catch (error) {
    console.log(`a third session is refused: ${isAseError(error) ? error.code : String(error)}`);
  }

  await supervisor.stop('alpha'); // alpha stays in the store
  const sessions = await supervisor.list();
  for (const s of sessions) console.log(`${s.sessionId}: ${s.status}, phase ${s.phase}, ${s.usage.turns} turn(s)`);

  await supervisor.shutdown();
  console.log(`after shutdown: ${supervisor.size} open`);
  return sessions;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
