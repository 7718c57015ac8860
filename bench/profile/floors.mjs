// The floors under a durable session's turn (issue 24, Deliver 3): what the default store and
// journal must spend, whatever the statechart does, on the dense 50,000-line Claude turn. One real
// default session runs the turn once; its transcript (8,331 entries, ~3 MB) and state are read
// back, then each floor is measured alone, in this process's CPU time (process.cpuUsage: user +
// system, the libuv threads' fsyncs included), medians of interleaved rounds:
//   - serialize: JSON.stringify of every entry (what any durable journal of these entries does);
//   - journal: FileJournal.appendMany of the entries in the runs a turn hands it (~40 group commits);
//   - store: a FileStore's lease, the turn's state writes (5, as the turn above made) and release;
//   - the same with MemoryStore / MemoryJournal, for what the file adds.
//   npm run build && node bench/profile/floors.mjs [lines] [rounds]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeDenseTurn, standInDir } from '../support/agent-streams.ts';

const [lines = '50000', rounds = '9'] = process.argv.slice(2);
const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { createSession, FileJournal, FileStore, MemoryJournal, MemoryStore } = await import(`${dist}/index.js`);
const { dir, workDir, bin, env } = standInDir('ase-floors-', 'claude.mjs', claudeDenseTurn({ lines: Number(lines) }), { protocol: 'claude' });

// One real turn, to read back what a turn stores.
const captureDir = path.join(dir, 'capture');
const session = await createSession({ agent: 'claude', workDir, dataDir: captureDir, bin, engineOptions: { env } });
const ended = new Promise((resolve) => session.on('agent', (n) => n.event.type === 'turn_complete' && resolve()));
void session.send('go');
await ended;
const sessionId = session.id;
await session.stop();
const find = (root, suffix) => fs.readdirSync(root, { recursive: true }).map((f) => path.join(root, f)).find((f) => f.endsWith(suffix));
const entries = fs
  .readFileSync(find(captureDir, `${sessionId}.jsonl`), 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => {
    const { seq: _seq, ...entry } = JSON.parse(line);
    return entry;
  });
const state = JSON.parse(fs.readFileSync(find(captureDir, `${sessionId}.json`), 'utf8'));
const persisted = state.state ?? state;
const bytes = entries.reduce((n, e) => n + JSON.stringify(e).length, 0);
const RUNS = 40; // about the group commits a dense turn makes (strace: 40-49 datasyncs)
const runSize = Math.ceil(entries.length / RUNS);
const SAVES = 5;
const entryRuns = [];
for (let i = 0; i < entries.length; i += runSize) entryRuns.push(entries.slice(i, i + runSize));

let n = 0;
const floors = {
  serialize: async () => {
    let total = 0;
    for (const entry of entries) total += JSON.stringify(entry).length;
    return total;
  },
  journal: async (memory) => {
    // A new journal (and directory) each round, so the session id of the captured entries serves every round.
    const journal = memory ? new MemoryJournal() : new FileJournal({ dir: path.join(dir, `journal-${n++}`) });
    const runs = [];
    // Issued as the runtime issues them: a run per batch, a turn of the event loop apart, without
    // awaiting the one before (the journal group-commits what arrives meanwhile).
    for (const run of entryRuns) {
      runs.push(journal.appendMany(run));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(runs);
    await journal.close?.();
  },
  store: async (memory) => {
    const store = memory ? new MemoryStore() : new FileStore({ dir: path.join(dir, `store-${n++}`) });
    const id = `floors-${n++}`;
    const lease = await store.acquire(id, { ttlMs: 15_000 });
    let version = 0;
    for (let i = 0; i < SAVES; i++) {
      const result = await store.save(id, { ...persisted, sessionId: id }, version, lease.fence);
      if (!result.ok) throw new Error(`save ${i} conflicted at version ${result.version}`);
      version = result.version;
    }
    await store.release(lease);
  },
};

const results = {};
for (let round = 0; round <= Number(rounds); round++) {
  for (const [name, run] of [
    ['serialize', () => floors.serialize()],
    ['journal file', () => floors.journal(false)],
    ['journal memory', () => floors.journal(true)],
    ['store file', () => floors.store(false)],
    ['store memory', () => floors.store(true)],
  ]) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    const wall = performance.now() - t0;
    const { user, system } = process.cpuUsage(c0);
    if (round > 0) (results[name] ??= []).push({ cpu: (user + system) / 1000, wall });
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${entries.length} transcript entries (${(bytes / 1e6).toFixed(2)} MB of JSON) in ${RUNS} runs; ${SAVES} state writes; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`| floor | CPU ms (median of ${rounds}) | wall ms |\n|---|---:|---:|`);
for (const [name, runs] of Object.entries(results)) console.log(`| ${name} | ${median(runs.map((r) => r.cpu)).toFixed(1)} | ${median(runs.map((r) => r.wall)).toFixed(1)} |`);
fs.rmSync(dir, { recursive: true, force: true });
