// The session layer alone (issue 24): the AgentEvents the claude engine makes of the dense Claude
// stream (21k of them) are captured once, then replayed into `createSession` (MemoryStore +
// MemoryJournal) by an engine that emits them straight from memory, 64 per macrotask (about what
// one 64 KiB stdout chunk carries), with no process and no parsing. The CPU time from `send` to
// `turn_complete` is then the session's own per-event cost (statechart, journal, notices), which
// a loaded machine disturbs far less than a whole spawned turn. With ASE_DIST set, another build
// runs interleaved with this one (before/after a change). `file` runs the default session instead
// (FileStore + FileJournal in a temp data dir).
//   npm run build && [ASE_DIST=<other build>/dist] node bench/profile/session-layer.mjs [lines] [rounds] [memory|file]
import fs from 'node:fs';
import path from 'node:path';
import { claudeDenseTurn, standInDir } from '../support/agent-streams.ts';
import { engineTurn } from '../support/engine-turn.ts';

const [lines = '50000', rounds = '7', stores = 'memory'] = process.argv.slice(2);
const builds = { this: new URL('../../dist', import.meta.url).pathname, ...(process.env.ASE_DIST && { other: process.env.ASE_DIST }) };
const { dir, workDir, bin, env } = standInDir('ase-session-layer-', 'claude.mjs', claudeDenseTurn({ lines: Number(lines) }), { protocol: 'claude' });

// Capture what the real engine makes of the stream (the turn's events, between `ready` and `exited`).
const { ClaudeEngine } = await import(`${builds.this}/claude.js`);
const captured = [];
{
  const stop = await engineTurn(new ClaudeEngine({ now: () => Date.now(), setTimeout, clearTimeout, bin }, { env }), workDir, (e) => e.type !== 'exited' && captured.push(e));
  await stop();
}
const turn = captured.filter((e) => e.type !== 'session_identified' && e.type !== 'ready');
const identified = captured.find((e) => e.type === 'session_identified');
const CHUNK = 64;

/** An engine that plays `turn` back on `send`, CHUNK events per macrotask. */
function cannedFactory(capabilities) {
  return {
    name: 'canned',
    capabilities,
    create: (context) => {
      let listener = () => undefined;
      let gen = 0;
      const emit = (body) => listener({ ...body, gen, at: context.now() });
      return {
        capabilities,
        onEvent: (l) => void (listener = l),
        start: async (spec) => {
          gen = spec.gen;
          setImmediate(() => {
            emit({ type: 'ready' });
            if (identified) emit(identified);
          });
        },
        send: async () => {
          let i = 0;
          const next = () => {
            for (const end = Math.min(turn.length, i + CHUNK); i < end; i++) emit(turn[i]);
            if (i < turn.length) setImmediate(next);
          };
          setImmediate(next);
        },
        abort: async () => undefined,
        answerPermission: async () => undefined,
        stop: async () => setImmediate(() => emit({ type: 'exited', code: 0, signal: null })),
      };
    },
  };
}

async function consumer(dist) {
  const lib = await import(`${dist}/index.js`);
  const capabilities = lib.FakeEngine.capabilities;
  const factory = cannedFactory(capabilities);
  return async () => {
    const where = stores === 'file' ? { dataDir: fs.mkdtempSync(path.join(dir, 'data-')) } : { store: new lib.MemoryStore(), journal: new lib.MemoryJournal() };
    const session = await lib.createSession({ agent: 'canned', engines: [factory], workDir, ...where });
    await session.waitFor('agent', (n) => n.event.type === 'ready', { timeoutMs: 60_000 });
    let seen = 0;
    const ended = new Promise((resolve) =>
      session.on('agent', (n) => {
        seen++;
        if (n.event.type === 'turn_complete') resolve();
      }),
    );
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    void session.send('go');
    await ended;
    const wall = performance.now() - t0;
    const { user, system } = process.cpuUsage(c0);
    await session.stop();
    if (seen < turn.length) throw new Error(`saw ${seen} of ${turn.length} events`);
    return { cpu: (user + system) / 1000, wall };
  };
}

const sets = Object.fromEntries(await Promise.all(Object.entries(builds).map(async ([name, dist]) => [name, await consumer(dist)])));
const results = {};
for (let round = 0; round <= Number(rounds); round++) {
  for (const [build, run] of Object.entries(sets)) {
    const r = await run();
    if (round > 0) (results[build] ??= []).push(r);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${turn.length} AgentEvents per turn, ${stores} store and journal; median of ${rounds} interleaved rounds`);
console.log('| build | CPU ms | µs CPU per event | wall ms |\n|---|---:|---:|---:|');
for (const [build, runs] of Object.entries(results)) {
  const cpu = median(runs.map((r) => r.cpu));
  console.log(`| ${build} | ${cpu.toFixed(0)} | ${((cpu * 1000) / turn.length).toFixed(2)} | ${median(runs.map((r) => r.wall)).toFixed(0)} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
