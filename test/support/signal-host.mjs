// A host process for the process-lifecycle tests (test/integration/host-processes.test.ts): it
// creates one claude session whose agent is the stand-in CLI (claude-stand-in.mjs, STANDIN=fork:
// a `setsid` child and a plain child), prints `READY <pids JSON>` once those children run, then
// idles until a signal decides its fate.
//
// argv[2]: the path of src/index.ts (loaded as TypeScript). HOST_CONFIG (JSON):
//   dataDir, workDir, bin    for createSession
//   env                      the agent's extra environment (engineOptions.env)
//   shutdown                 the claude engine's stop ladder (ShutdownOptions)
//   ownHandler               a signal name: the host installs its own handler for it (prints HANDLED <sig>)
//   optOut                   true: setHostSignalHandling(false)
import { readFileSync } from 'node:fs';
import './ts-resolve.mjs';

const config = JSON.parse(process.env.HOST_CONFIG);
const { createSession, claudeEngine, setHostSignalHandling } = await import(process.argv[2]);
if (config.optOut) setHostSignalHandling(false);
if (config.ownHandler) process.on(config.ownHandler, (signal) => process.stdout.write(`HANDLED ${signal}\n`));

await createSession({
  agent: 'claude',
  workDir: config.workDir,
  dataDir: config.dataDir,
  bin: config.bin,
  engines: [claudeEngine({ shutdown: config.shutdown })],
  engineOptions: { env: config.env },
});

const pidsFile = config.env.STANDIN_PIDS;
const deadline = Date.now() + 20_000;
for (;;) {
  let pids;
  try {
    pids = JSON.parse(readFileSync(pidsFile, 'utf8'));
  } catch {
    if (Date.now() > deadline) throw new Error('the stand-in never reported its children');
    await new Promise((r) => setTimeout(r, 20));
    continue;
  }
  // One descendant poll (250 ms) so the supervisor has collected the children too.
  await new Promise((r) => setTimeout(r, 400));
  process.stdout.write(`READY ${JSON.stringify(pids)}\n`);
  break;
}
setInterval(() => {}, 60_000);
