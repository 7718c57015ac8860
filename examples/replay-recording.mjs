// @ts-check
/**
 * Replay a recorded Claude Code session: the real claude engine (its protocol client and its
 * translation) runs against a stand-in process that answers from the recording, so no agent CLI,
 * no credentials and no network are needed, and a bug seen once can be run again as often as you
 * like. The recording (recordings/claude-list-files.jsonl) was made with
 * `createSession({ ..., record: 'claude-list-files.jsonl' })`; `ase run --record FILE` makes them too.
 *
 * The session is driven as the recorded one was (the same prompt; permissions allowed): every
 * line the engine writes is checked against the recording, and a different one fails with
 * REPLAY_MISMATCH (try another prompt).
 *
 * Run it with plain Node: `node examples/replay-recording.mjs`. `test/unit/examples.test.ts` runs it too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createSession, MemoryJournal, MemoryStore, replayEngine } from 'agent-session-engine';

export async function main(prompt = 'What is in this directory?') {
  const engine = replayEngine(fileURLToPath(new URL('./recordings/claude-list-files.jsonl', import.meta.url)));
  const { header } = engine.recording;
  console.log(`recording: ${header.agent}, ${engine.recording.records.length} records, made by agent-session-engine ${header.aseVersion}`);

  // The recorded directory is mapped to this one; the recorded engine options are applied under ours.
  const workDir = mkdtempSync(join(tmpdir(), 'ase-replay-example-'));
  try {
    const session = await createSession({ agent: engine.name, engines: [engine], workDir, store: new MemoryStore(), journal: new MemoryJournal() });
    session.on('permission_prompt', (p) => {
      console.log(`permission: ${p.toolName} ${JSON.stringify(p.input)} → allow`);
      void session.decide(p.requestId, 'allow');
    });
    session.on('agent', ({ event }) => {
      if (event.type === 'tool_call') console.log(`tool call: ${event.toolName}`);
    });
    const turn = await session.run(prompt);
    console.log(`turn ${turn.status}: ${turn.text}`);
    await session.stop();
    engine.assertReplayed(); // throws REPLAY_MISMATCH if the engine went another way
    console.log('replayed: every host line matched the recording');
    return turn;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
