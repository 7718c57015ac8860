// @ts-check
/**
 * A remote client answering a permission request.
 *
 * The fake engine plays a script: its turn asks to run `Bash { command: 'ls' }` and waits. The
 * session records the request in its durable ledger, persists it, and prompts the clients
 * (`permission_prompt`). This "client" allows it with a modified input (`updatedInput`), the turn
 * goes on, and the ledger then shows the request `approved`. A second answer to the same request
 * is refused with PERMISSION_ALREADY_DECIDED.
 *
 * Nothing is written to disk (in-memory store and journal). Run it with plain Node:
 * `node examples/remote-permissions.mjs` (see basic-session.mjs); `test/unit/examples.test.ts`
 * runs it too.
 */
import { pathToFileURL } from 'node:url';
import { createSession, fakeEngine, isAseError, MemoryJournal, MemoryStore } from 'agent-session-engine';

/** @type {import('agent-session-engine').FakeScript} */
const script = {
  turns: [
    [
      { text: 'I will list the files first.' },
      {
        ask: { requestId: 'perm-1', toolName: 'Bash', input: { command: 'ls' }, callId: 'call-1' },
        afterMs: 5,
        // What the agent does once allowed (without onAllow it would report a plain tool_result).
        onAllow: [
          { emit: { type: 'tool_call', callId: 'call-1', toolName: 'Bash', input: { command: 'ls -la' } } },
          { emit: { type: 'tool_result', callId: 'call-1', status: 'completed', output: 'README.md  src/', isError: false } },
          { text: 'There are two entries.' },
          { complete: { usage: { inputTokens: 1200, outputTokens: 80, costUsd: 0.0042 } } },
        ],
      },
    ],
  ],
};

/** @returns {Promise<import('agent-session-engine').SessionSnapshot>} */
export async function main() {
  const session = await createSession({
    agent: 'fake',
    workDir: process.cwd(),
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    // Replaces the built-in (echoing) `fake` engine for this session with the scripted one.
    engines: [fakeEngine(script)],
    // Unanswered requests would be denied (and the turn interrupted) after this long.
    config: { permissionTimeoutMs: 60_000 },
  });
  session.on('permission_resolved', (n) => console.log(`permission ${n.requestId}: ${n.status}`));
  session.on('agent', ({ event }) => {
    if (event.type === 'tool_call') console.log(`tool call ${event.toolName} ${JSON.stringify(event.input)}`);
    if (event.type === 'tool_result') console.log(`tool result ${event.status}: ${String(event.output)}`);
  });

  // waitFor() subscribes now, so it cannot miss a prompt that comes while run() is starting the turn.
  const prompt = session.waitFor('permission_prompt');
  const turn = session.run('What files are here?');

  // Answer from the awaiting code, not synchronously inside a listener: an input given while the
  // session is still handling an event is queued behind it, and a refusal would then only be
  // reported as an `error` notice instead of thrown.
  const p = await prompt;
  console.log(`the agent asks to run ${p.toolName} ${JSON.stringify(p.input)} (deadline ${new Date(p.deadline ?? 0).toISOString()})`);
  console.log('open requests:', session.snapshot().requests);
  await session.decide(p.requestId, 'allow', { updatedInput: { command: 'ls -la' } });

  try {
    await session.decide(p.requestId, 'deny');
  } catch (error) {
    if (!isAseError(error, 'PERMISSION_ALREADY_DECIDED')) throw error;
    console.log(`a second answer is refused: ${error.code}`);
  }

  const { status, text, costUsd } = await turn;
  console.log(`turn ${status}: "${text}" ($${costUsd})`);
  console.log('ledger after the turn:', session.snapshot().completed);
  return session.stop();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (final) => console.log(`done: phase=${final.phase}, ${final.usage.turns} turn(s), $${final.usage.costUsd.toFixed(4)}`),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
