/**
 * A stand-in host process for the crash, ownership and fencing tests: it runs a real session from
 * the built library (dist/) on a FileStore and FileJournal in a data dir, so the tests can SIGKILL,
 * SIGSTOP and race real processes. It reports what it does as JSON lines on stdout (writes to a
 * pipe are synchronous on Linux, so a line printed is a line the test will read, even if the
 * process is killed right after).
 *
 * The agent is the fake engine, wrapped to behave like an agent with a durable transcript of its
 * own (what a resume token gives a real agent): every message it is handed is appended to
 * `<dataDir>/agent.log` first, and `wasReceived()` answers from that file.
 *
 * Usage: node durable-host.mjs <mode> '<json config>'
 *   soak   {dataDir, sessionId, tag, final?, leaseTtlMs?}  send, decide and abort at random until
 *          killed; `final` sends nothing, waits until everything queued went out, then stops.
 *   race   {dataDir}   per stdin line `go <id>`: try to open session <id>; `release <id>`: stop it.
 *   stall  {dataDir, sessionId, leaseTtlMs}   open, run one turn, report ready; on SIGCONT send again.
 *   lock   {dataDir, sessionId}   block forever while holding the FileStore lock of <id>.
 *   own    {dataDir, sessionId}   open <id> and hold it until killed.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/index.js');
const { createSession, EngineRegistry, FakeEngine, FileJournal, FileStore } = await import(dist);

const [mode, rawConfig] = process.argv.slice(2);
const config = JSON.parse(rawConfig ?? '{}');
const say = (message) => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...message })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const agentLog = path.join(config.dataDir, 'agent.log');

/** Turn shapes the agent cycles through: plain text, a permission ask, a longer stream. */
const SHAPES = [
  [{ text: 'working', afterMs: 15 }, { complete: {} }],
  [{ ask: { toolName: 'Bash', input: { command: 'ls' } }, afterMs: 5 }, { text: 'listed', afterMs: 10 }, { complete: {} }],
  [{ text: 'part one', afterMs: 25 }, { text: 'part two', afterMs: 25 }, { complete: {} }],
];
const script = { turns: Array.from({ length: 300 }, (_, i) => SHAPES[i % SHAPES.length]) };

class LoggingAgent extends FakeEngine {
  async send(message) {
    appendFileSync(agentLog, `${message.localId}\n`);
    return super.send(message);
  }

  async wasReceived(message) {
    let log = '';
    try {
      log = readFileSync(agentLog, 'utf8');
    } catch {
      // No message was ever handed to an agent.
    }
    return log.split('\n').includes(message.localId);
  }

  async stop() {
    say({ engineStopped: true });
    return super.stop();
  }
}

function registry() {
  return new EngineRegistry().register({ name: 'fake', capabilities: FakeEngine.capabilities, create: (context) => new LoggingAgent(context, script) });
}

function open(sessionId, extra = {}) {
  return createSession({
    agent: 'fake',
    workDir: config.dataDir,
    sessionId,
    registry: registry(),
    store: new FileStore({ dir: path.join(config.dataDir, 'sessions') }),
    journal: new FileJournal({ dir: path.join(config.dataDir, 'transcripts') }),
    // A turn never stalls long in these tests; a lost answer must not hang a run for minutes.
    config: { stallTimeoutMs: 5_000, interruptGraceMs: 1_000 },
    ...extra,
  });
}

function reportErrors(session) {
  session.on('error', ({ error }) => say({ error: error.code, message: error.message }));
}

function decideAtRandom(session) {
  session.on('permission_prompt', (prompt) => {
    say({ prompt: prompt.requestId });
    setTimeout(() => {
      session.decide(prompt.requestId, Math.random() < 0.8 ? 'allow' : 'deny').catch(() => undefined);
    }, Math.random() * 20);
  });
}

async function soak() {
  const session = await open(config.sessionId, config.leaseTtlMs ? { leaseTtlMs: config.leaseTtlMs } : {});
  reportErrors(session);
  decideAtRandom(session);
  say({ ready: true });
  if (config.final) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const snap = session.snapshot();
      if (snap.queue.length === 0 && JSON.stringify(snap.state) === JSON.stringify({ remote: 'idle' })) break;
      if (Date.now() > deadline) {
        say({ stuck: snap });
        process.exit(1);
      }
      await sleep(10);
    }
    const final = await session.stop();
    say({ done: true, phase: final.phase, queue: final.queue.length, requests: Object.keys(final.requests).length });
    process.exit(0);
  }
  for (let n = 0; ; n++) {
    await sleep(Math.random() * 25);
    if (session.snapshot().queue.length >= 4) continue;
    const localId = `${config.tag}-${n}`;
    session.send(`message ${localId}`, { localId }).then(
      () => {
        appendFileSync(path.join(config.dataDir, 'resolved.log'), `${localId}\n`);
        say({ resolved: localId });
      },
      (error) => say({ rejected: localId, code: error.code }),
    );
    if (Math.random() < 0.05) session.abort().catch(() => undefined);
  }
}

async function race() {
  const sessions = new Map();
  for await (const line of createInterface({ input: process.stdin })) {
    const [verb, id] = line.trim().split(' ');
    if (verb === 'go') {
      try {
        const session = await open(id);
        sessions.set(id, session);
        say({ id, owner: true });
      } catch (error) {
        say({ id, owner: false, code: error.code, message: error.message, details: error.details });
      }
    } else if (verb === 'release') {
      await sessions.get(id)?.stop();
      sessions.delete(id);
      say({ id, released: true });
    }
  }
  for (const session of sessions.values()) await session.stop();
}

async function stall() {
  const session = await open(config.sessionId, { leaseTtlMs: config.leaseTtlMs });
  reportErrors(session);
  decideAtRandom(session);
  await session.send('before the stall', { localId: 'before' });
  while (session.snapshot().usage.turns < 1 || session.snapshot().phase !== 'idle') await sleep(5);
  process.on('SIGCONT', () => {
    say({ resumed: true });
    session.send('after the stall', { localId: 'after' }).then(
      () => say({ afterResume: 'resolved' }),
      (error) => say({ afterResume: 'rejected', code: error.code }),
    );
  });
  say({ ready: true });
  const final = await session.done;
  say({ done: true, phase: final.phase });
  process.exit(0);
}

async function lock() {
  // `now` is read while the lease is decided, inside the lock: block there, holding it, until killed.
  const store = new FileStore({
    dir: path.join(config.dataDir, 'sessions'),
    now: () => {
      say({ locked: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      return Date.now();
    },
  });
  await store.acquire(config.sessionId, { ttlMs: 60_000 });
}

async function own() {
  await open(config.sessionId, { leaseTtlMs: 60_000 });
  say({ owned: true });
  await new Promise(() => undefined);
}

const modes = { soak, race, stall, lock, own };
if (!modes[mode]) {
  say({ fatal: `unknown mode ${mode}` });
  process.exit(2);
}
modes[mode]().catch((error) => {
  say({ fatal: String(error?.stack ?? error), code: error?.code });
  process.exit(1);
});
