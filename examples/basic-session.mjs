// @ts-check
/**
 * A session on the built-in fake engine: run one turn, watch the notices, stop.
 *
 * Nothing is written to disk: the store and the journal are in memory. The fake engine echoes
 * each message ("echo: <text>") with no delays, so this finishes in a few milliseconds.
 *
 * Run it with plain Node: `node examples/basic-session.mjs` (in this repository after
 * `npm run build`; in your project, with agent-session-engine installed).
 * `test/unit/examples.test.ts` runs it too.
 */
import { pathToFileURL } from 'node:url';
import { createSession, MemoryJournal, MemoryStore } from 'agent-session-engine';

/** @returns {Promise<import('agent-session-engine').SessionSnapshot>} */
export async function main() {
  const store = new MemoryStore();
  const journal = new MemoryJournal();
  const session = await createSession({ agent: 'fake', workDir: process.cwd(), store, journal });

  session.on('status', (n) => console.log(`[${n.phase}] mode=${n.mode} gen=${n.gen}`));
  session.on('error', ({ error }) => console.log(`error ${error.code}: ${error.message}`));

  // The engine is still starting: the message waits in the queue and goes out once it is ready.
  // run() resolves when its turn has ended, with what the turn produced.
  const turn = await session.run('hello', { localId: 'msg-1' });
  console.log(`agent: ${turn.text}`);
  console.log(`turn ${turn.localId} ${turn.status}: ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens, $${turn.costUsd}`);

  // stop() ends the engine, writes the final state, and resolves once everything has settled.
  const final = await session.stop();
  const stored = await store.load(session.id);
  const transcript = await journal.read(session.id);
  console.log(`stored phase=${stored?.state.phase} version=${stored?.version}`);
  console.log(`transcript: ${transcript.map((e) => e.type).join(', ')}`);
  console.log(`usage: ${final.usage.turns} turn(s), ${final.usage.inputTokens} in / ${final.usage.outputTokens} out, $${final.usage.costUsd.toFixed(4)}`);
  return final;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
