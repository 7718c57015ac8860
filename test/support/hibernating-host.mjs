/**
 * A host process for the hibernation crash test: a supervisor from the built library (dist/) over
 * a data dir, with the fake engine and `hibernateAfterMs`. It creates session `sessionId`, runs one
 * turn, waits until the session hibernated and its state write landed, reports `{asleep, resumeToken}`
 * as a JSON line, and then waits to be killed.
 *
 * Usage: node hibernating-host.mjs '{"dataDir": "...", "workDir": "...", "sessionId": "...", "hibernateAfterMs": 200}'
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/index.js');
const { createSupervisor, fakeEngine } = await import(dist);

const config = JSON.parse(process.argv[2] ?? '{}');
const say = (message) => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...message })}\n`);

const supervisor = createSupervisor({ dataDir: config.dataDir, engines: [fakeEngine({ startDelayMs: 0 })], hibernateAfterMs: config.hibernateAfterMs });
const session = await supervisor.create({ agent: 'fake', workDir: config.workDir, sessionId: config.sessionId, config: { persistDebounceMs: 20 } });
await session.run('before the crash');
await session.waitFor('status', (n) => n.phase === 'hibernated', { timeoutMs: 10_000 });
while (session.snapshot().liveGen !== null) await new Promise((resolve) => setTimeout(resolve, 10));
// The debounced write of the hibernated phase lands within persistDebounceMs plus one save.
await new Promise((resolve) => setTimeout(resolve, 500));
say({ asleep: true, resumeToken: session.snapshot().resumeToken });
setInterval(() => {}, 60_000);
