// A host process for test/real-cli/local-host-kill.test.ts: it opens a codex session in LOCAL mode
// (the real terminal UI in a PTY the session owns), types a prompt into that terminal as a person
// would, and prints `READY <json>` once the command the model asked for runs (its pid written by
// the command itself), then idles until the test kills it.
//
// argv[2]: the path of src/index.ts (loaded as TypeScript). HOST_CONFIG (JSON):
//   dataDir, workDir, bin, env    for createSession / engineOptions.env
//   model                         engineOptions.model
//   prompt                        typed into the terminal once it shows its prompt
//   pidFile                       where the command writes its pid
import { readFileSync } from 'node:fs';
import './ts-resolve.mjs';

const config = JSON.parse(process.env.HOST_CONFIG);
const { createSession, codexEngine } = await import(process.argv[2]);

const session = await createSession({
  agent: 'codex',
  workDir: config.workDir,
  dataDir: config.dataDir,
  mode: 'local',
  engines: [codexEngine({ bin: config.bin })],
  engineOptions: { env: config.env, model: config.model, approvalPolicy: 'never', sandbox: 'danger-full-access' },
});
let screen = '';
session.terminal.onData((data) => (screen += data));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const deadline = Date.now() + 30_000;
const waitUntil = async (check, what) => {
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`local host: no ${what}`);
    await sleep(20);
  }
};
await waitUntil(() => screen.includes('Ask Codex'), 'prompt on screen');
session.terminal.write(config.prompt);
await sleep(300);
session.terminal.write('\r');
let commandPid;
await waitUntil(() => {
  try {
    commandPid = Number(readFileSync(config.pidFile, 'utf8').trim());
    return commandPid > 0;
  } catch {
    return false;
  }
}, 'command pid');
// One descendant poll (250 ms) so the supervisor has collected the command too.
await sleep(400);
process.stdout.write(`READY ${JSON.stringify({ terminalUi: session.snapshot().liveGen !== null ? readTuiPid() : 0, command: commandPid })}\n`);
setInterval(() => {}, 60_000);

/** The terminal UI's pid: the child of this host whose command line is the codex binary. */
function readTuiPid() {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  for (const pid of children) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(config.bin)) return pid;
    } catch {
      // gone
    }
  }
  return 0;
}
