/**
 * A session on the built-in fake engine: send one message, watch the notices, stop.
 *
 * Nothing is written to disk: the store and the journal are in memory. The fake engine echoes
 * each message ("echo: <text>") with no delays, so this finishes in a few milliseconds.
 *
 * Run it with `npx --yes tsx examples/basic-session.ts` (tsx is not a dependency of this package:
 * npx fetches it; it maps the `.js` import specifiers to the `.ts` sources).
 * `test/unit/examples.test.ts` runs it too.
 */
import { pathToFileURL } from 'node:url';
import {
  createSession,
  MemoryJournal,
  MemoryStore,
  type NoticeOf,
  type Session,
  type SessionNotice,
  type SessionSnapshot,
} from '../src/index.js';

/** Resolves with the first notice that matches. Subscribe before doing what causes it. */
function next<T extends SessionNotice>(session: Session, match: (notice: SessionNotice) => notice is T): Promise<T> {
  return new Promise((resolve) => {
    const off = session.on('*', (notice) => {
      if (match(notice)) {
        off();
        resolve(notice);
      }
    });
  });
}

const isTurnEnd = (notice: SessionNotice): notice is NoticeOf<'transcript'> =>
  notice.type === 'transcript' && notice.entry.type === 'turn_complete';

export async function main(): Promise<SessionSnapshot> {
  const store = new MemoryStore();
  const journal = new MemoryJournal();
  const session = await createSession({ agent: 'fake', workDir: process.cwd(), store, journal });

  session.on('status', (n) => console.log(`[${n.phase}] mode=${n.mode} gen=${n.gen}`));
  session.on('agent', ({ event }) => {
    if (event.type === 'message' && event.role === 'assistant') {
      for (const block of event.blocks) if (block.type === 'text') console.log(`agent: ${block.text}`);
    }
  });
  session.on('error', ({ error }) => console.log(`error ${error.code}: ${error.message}`));

  // The engine is still starting: the message waits in the queue and goes out once it is ready.
  const turnEnd = next(session, isTurnEnd);
  // Resolves with the localId once the message is stored (it then survives a crash of this process).
  const localId = await session.send('hello', { localId: 'msg-1' });
  const { entry } = await turnEnd;
  console.log(`turn for ${localId} ended:`, entry.payload);

  // stop() ends the engine, writes the final state, and resolves once everything has settled.
  const final = await session.stop();
  const stored = await store.load(session.id);
  const transcript = await journal.read(session.id);
  console.log(`stored phase=${stored?.state.phase} version=${stored?.version}`);
  console.log(`transcript: ${transcript.map((e) => e.type).join(', ')}`);
  console.log(`usage: ${final.usage.turns} turn(s), ${final.usage.inputTokens} in / ${final.usage.outputTokens} out, $${final.usage.costUsd}`);
  return final;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
