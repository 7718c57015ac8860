// Profiles `ase serve` during the replay benchmark's worst case (issue 23: the event loop stalled
// 275 ms during 10 concurrent full replays of a 100,000-entry session; profile first): a FileJournal
// of ENTRIES entries, a server on it, 10 stream clients in a child process (bench/support/
// replay-clients.mjs) reading to their `live` frame. Prints the longest event-loop stalls and the
// full replays' time; with --cpu-prof, `node bench/profile/top.mjs <file>` names what ran.
// Runs against the build (`npm run build` first); ASE_DIST=<other build> profiles another one;
// ASE_SNAPSHOT_AT=<ms> writes a heap snapshot that long into the replays (what is live then).
// GC detail: add --trace-gc-nvp (survivors and promotion per scavenge); the young generation as
// `ase serve` runs it: add --max-semi-space-size=8 (src/cli/serve-heap.ts).
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/replay.mjs [entries] [clients]
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { promisify } from 'node:util';

const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { FileJournal, MemoryStore } = await import(`${dist}/index.js`);
const { startServer } = await import(`${dist}/server.js`);
const [entriesArg = '100000', clientsArg = '10'] = process.argv.slice(2);
const ENTRIES = Number(entriesArg);
const CLIENTS = fileURLToPath(new URL('../support/replay-clients.mjs', import.meta.url));
const run = promisify(execFile);

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-profile-replay-'));
const dir = path.join(tmp, 'transcripts');
const writer = new FileJournal({ dir });
const entry = (n) => ({ ts: 1_700_000_000_000 + n, sessionId: 'long', agent: 'fake', gen: 1, eventId: `1-${n}`, type: 'agent_message', payload: { text: `entry ${n}: ${'lorem ipsum dolor sit amet '.repeat(7)}` } });
for (let n = 1; n <= ENTRIES; n += 2000) await Promise.all(Array.from({ length: Math.min(2000, ENTRIES - n + 1) }, (_, i) => writer.append(entry(n + i))));
await writer.close();

const journal = new FileJournal({ dir });
const server = await startServer({ port: 0, dataDir: tmp, store: new MemoryStore(), journal });
// Stalls: a 5 ms ticker; a gap over 50 ms between ticks is the loop held that long, or this
// process not scheduled (a loaded machine): the CPU time its main thread used in the gap (process.threadCpuUsage) tells the two apart.
const stalls = [];
let last = performance.now();
let lastCpu = process.threadCpuUsage();
const ticker = setInterval(() => {
  const now = performance.now();
  const cpu = process.threadCpuUsage(lastCpu);
  if (now - last > 50) stalls.push({ at: Math.round(last), ms: Math.round(now - last - 5), cpu: Math.round((cpu.user + cpu.system) / 1000) });
  last = now;
  lastCpu = process.threadCpuUsage();
}, 5);
const gcs = [];
const gcObserver = new PerformanceObserver((list) => gcs.push(...list.getEntries().map((e) => ({ start: e.startTime, ms: e.duration, kind: ({ 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak', 16: 'cppgc' })[e.detail?.kind] ?? e.detail?.kind }))));
gcObserver.observe({ entryTypes: ['gc'] });
const started = performance.now();
try {
  await fetch(`${server.url}/api/sessions/long/transcript?before_seq=${ENTRIES + 1}&limit=100`, { headers: { authorization: `Bearer ${server.token}` } }).then((r) => r.text());
  const cpuBefore = process.threadCpuUsage();
  if (process.env.ASE_SNAPSHOT_AT) setTimeout(async () => process.stdout.write(`heap snapshot: ${(await import('node:v8')).writeHeapSnapshot()}\n`), Number(process.env.ASE_SNAPSHOT_AT));
  const { stdout } = await run(process.execPath, [CLIENTS, JSON.stringify({ url: server.url, token: server.token, sessionId: 'long', clients: Number(clientsArg), afterSeq: 0 })], { maxBuffer: 1 << 20 });
  const cpuUsed = process.threadCpuUsage(cpuBefore);
  const results = JSON.parse(stdout);
  const load = os.loadavg()[0].toFixed(1);
  process.stdout.write(`${clientsArg} full replays of ${ENTRIES}: ${Math.max(...results.map((r) => r.ms)).toFixed(0)} ms (entries ${results.map((r) => r.entries).join(',')}), main-thread CPU ${((cpuUsed.user + cpuUsed.system) / 1000).toFixed(0)} ms; load ${load}\n`);
  stalls.sort((a, b) => b.ms - a.ms);
  process.stdout.write(`stalls over 50 ms: ${stalls.length}; longest (wall / CPU used in it): ${stalls.slice(0, 8).map((s) => `${s.ms}/${s.cpu} ms at +${Math.round(s.at - started)}`).join(', ')}\n`);
  stalls.sort((a, b) => b.cpu - a.cpu);
  gcs.sort((a, b) => b.ms - a.ms);
  process.stdout.write(`GC pauses: ${gcs.length}, longest ${gcs.slice(0, 5).map((g) => `${g.ms.toFixed(0)} ms ${g.kind}`).join(', ')}; in all ${gcs.reduce((t, g) => t + g.ms, 0).toFixed(0)} ms\n`);
  // Each of the stalls that used the most CPU, with the GC pauses inside it (what else held the loop).
  const gcIn = (s) => gcs.filter((g) => g.start + g.ms > s.at && g.start < s.at + s.ms + 5).reduce((t, g) => t + g.ms, 0);
  process.stdout.write(`most CPU in one stall: ${stalls.slice(0, 5).map((s) => `${s.cpu} ms CPU in ${s.ms} ms at +${Math.round(s.at - started)} (GC ${gcIn(s).toFixed(0)} ms)`).join(', ')}\n`);
} finally {
  clearInterval(ticker);
  gcObserver.disconnect();
  await server.close();
  await journal.close();
  await fs.rm(tmp, { recursive: true, force: true });
}
