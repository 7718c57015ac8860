// Where a durable session's turn goes beyond its engine (issue 24): the dense Claude turn through
// the engine alone and through `createSession` with each half of the default durability swapped
// for memory (store, journal), CPU time of this process (process.cpuUsage), medians of interleaved
// rounds. The differences between rows say what the FileStore, the FileJournal and the session
// layer itself each add to a turn.
//   npm run build && node [--expose-gc] bench/profile/decompose.mjs [lines] [rounds]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeDenseTurn, standInDir } from '../support/agent-streams.ts';
import { engineTurn } from '../support/engine-turn.ts';

const [lines = '50000', rounds = '9'] = process.argv.slice(2);
const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { createSession, FileJournal, FileStore, MemoryJournal, MemoryStore } = await import(`${dist}/index.js`);
const { ClaudeEngine } = await import(`${dist}/claude.js`);
const { dir, workDir, bin, env } = standInDir('ase-decompose-', 'claude.mjs', claudeDenseTurn({ lines: Number(lines) }), { protocol: 'claude' });
let n = 0;

const engine = () => engineTurn(new ClaudeEngine({ now: () => Date.now(), setTimeout, clearTimeout, bin }, { env }), workDir);
const session = (store, journal) => async () => {
  const dataDir = path.join(dir, `data-${n++}`);
  // Given a journal, the session leaves it open at stop (the caller owns it): closed here.
  const given = journal === 'memory' ? new MemoryJournal() : new FileJournal({ dir: path.join(dataDir, 'transcripts') });
  const s = await createSession({
    agent: 'claude',
    workDir,
    dataDir,
    bin,
    engineOptions: { env },
    ...(store === 'memory' ? { store: new MemoryStore() } : { store: new FileStore({ dir: path.join(dataDir, 'sessions') }) }),
    journal: given,
  });
  const ended = new Promise((resolve) => s.on('agent', (notice) => notice.event.type === 'turn_complete' && resolve()));
  void s.send('go');
  await ended;
  return async () => {
    await s.stop();
    await given.close?.();
  };
};
const consumers = {
  'engine alone': engine,
  'session, memory store + memory journal': session('memory', 'memory'),
  'session, file store + memory journal': session('file', 'memory'),
  'session, memory store + file journal': session('memory', 'file'),
  'session, file store + file journal (default)': session('file', 'file'),
};
const results = {};
for (let round = 0; round <= Number(rounds); round++) {
  const order = Object.entries(consumers);
  if (round % 2 === 1) order.reverse();
  for (const [name, run] of order) {
    // Under --expose-gc every consumer starts from a collected heap: otherwise each inherits what the
    // one before it left, and a major collection lands in whichever run happens to trigger it.
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    const stop = await run();
    const { user, system } = process.cpuUsage(c0);
    await stop();
    if (round > 0) (results[name] ??= []).push((user + system) / 1000);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const base = median(results['engine alone']);
console.log(`dense Claude turn, ${lines} lines; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`| consumer | CPU ms (median of ${rounds}) | over the engine |\n|---|---:|---:|`);
for (const name of Object.keys(consumers)) {
  const m = median(results[name]);
  console.log(`| ${name} | ${m.toFixed(0)} | ${name === 'engine alone' ? '' : `+${(m - base).toFixed(0)}`} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
