/**
 * 15. `ase serve` on a long session: 100,000 journaled entries (FileJournal), read back by seq.
 * The last 100 entries, a replay from the middle, 10 full replays at once (time and the server's
 * RSS), a trivial GET's latency meanwhile, and the server's longest event-loop stall through all of
 * it (`perf_hooks.monitorEventLoopDelay`), told apart (stall-meter.ts): the CPU its thread spent
 * in each stall (work or GC holding the loop) and the rest (the process waiting for a core). The stream clients run in a child process
 * (bench/support/replay-clients.mjs), so the server's loop and memory are measured alone.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { FileJournal, MemoryStore, type TranscriptEntry } from '../src/index.js';
import { startServer } from '../src/server.js';
import { bytes, count, ms, writeSection, type Row } from './support/report.js';
import { StallMeter } from './support/stall-meter.js';

const ENTRIES = 100_000;
const CONCURRENT = 10;
const CLIENTS = fileURLToPath(new URL('./support/replay-clients.mjs', import.meta.url));
const run = promisify(execFile);

/** Nearest-rank percentile of samples (ms). */
const pct = (samples: readonly number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? NaN;
};

/**
 * Before the index (commit a9c0531: every read parsed the whole file), measured on this machine on
 * 2026-11-26 with the same 100,000 entries, at a 1-minute load average of 31 (2 cores shared):
 * the last 100 entries took 2.5-8.8 s (3 reads), one replay page of 500 entries 1.8-4.2 s, and the
 * event loop stalled up to 6.8 s (the whole file parsed in one synchronous loop). The replay rows
 * were not run on that code: they are extrapolated from the page cost (a replay reads a page per
 * 500 entries), and say so. Kept as text: that code is gone.
 */
const BEFORE = {
  last100: '2.5-8.8 s',
  middle: '~100 pages × 1.8-4.2 s ≈ 3-7 min (extrapolated)',
  concurrent: '~200 pages × 1.8-4.2 s each, 10 at once on 2 cores: well over 10 min (extrapolated; the issue measured 39 s for 10 replays of 24,500 entries)',
  getP99: 'any request waited for a whole-file parse in progress (up to 6.8 s)',
  maxStall: '6.8 s',
};

const entry = (n: number): TranscriptEntry => ({
  ts: 1_700_000_000_000 + n,
  sessionId: 'long',
  agent: 'fake',
  gen: 1,
  eventId: `1-${n}`,
  type: 'agent_message',
  payload: { text: `entry ${n}: ${'lorem ipsum dolor sit amet '.repeat(7)}` },
});

describe('ase serve: replay of a 100,000-entry session', () => {
  it('reads by seq in time linear in what is read', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-bench-replay-'));
    const dir = path.join(tmp, 'transcripts');
    const writer = new FileJournal({ dir });
    for (let n = 1; n <= ENTRIES; n += 2000) await Promise.all(Array.from({ length: Math.min(2000, ENTRIES - n + 1) }, (_, i) => writer.append(entry(n + i))));
    await writer.close();
    const fileBytes = (await fs.stat(path.join(dir, 'long.jsonl'))).size;

    // The server as a process starting on that data dir would: a fresh journal, no index yet.
    const journal = new FileJournal({ dir });
    const server = await startServer({ port: 0, dataDir: tmp, store: new MemoryStore(), journal });
    const headers = { authorization: `Bearer ${server.token}` };
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const stalls = new StallMeter();
    const loadAtStart = os.loadavg()[0]!;
    const rows: Row[] = [];
    try {
      const lastPage = async () => {
        const t = performance.now();
        const r = await fetch(`${server.url}/api/sessions/long/transcript?before_seq=${ENTRIES + 1}&limit=100`, { headers });
        const body = (await r.json()) as { entries: { seq: number }[] };
        expect(body.entries.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => ENTRIES - 99 + i));
        return performance.now() - t;
      };
      const t0 = performance.now();
      const last100Direct = (await journal.read('long', { beforeSeq: ENTRIES + 1, limit: 100 })).length;
      const coldMs = performance.now() - t0;
      expect(last100Direct).toBe(100);
      const warmDirect: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        await journal.read('long', { beforeSeq: ENTRIES + 1, limit: 100 });
        warmDirect.push(performance.now() - t);
      }
      const overHttp: number[] = [];
      for (let i = 0; i < 30; i++) overHttp.push(await lastPage());

      const clients = async (n: number, afterSeq: number) => {
        const { stdout } = await run(process.execPath, [CLIENTS, JSON.stringify({ url: server.url, token: server.token, sessionId: 'long', clients: n, afterSeq })], { maxBuffer: 1 << 20 });
        return JSON.parse(stdout) as { ms: number; entries: number }[];
      };
      const middle = await clients(1, ENTRIES / 2);
      expect(middle[0]!.entries).toBe(ENTRIES / 2);

      // 10 full replays at once, a trivial GET every 20 ms meanwhile, RSS sampled.
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
      const gets: number[] = [];
      let replaying = true;
      const probe = (async () => {
        while (replaying) {
          const t = performance.now();
          await (await fetch(`${server.url}/api/agents`, { headers })).text();
          gets.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const full = await clients(CONCURRENT, 0);
      replaying = false;
      await probe;
      clearInterval(sampler);
      for (const client of full) expect(client.entries).toBe(ENTRIES);
      const fullMs = Math.max(...full.map((c) => c.ms));
      const maxStall = loop.max / 1e6;
      const stall = stalls.stop();
      const load = `load ${loadAtStart.toFixed(1)}→${os.loadavg()[0]!.toFixed(1)}`;
      // `ase serve` runs with SERVE_SEMI_SPACE_FLAG (src/cli/serve-heap.ts); this process has it only when given (NODE_OPTIONS).
      const heap = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)].find((a) => /^--max[-_]semi[-_]space[-_]size=/.test(a)) ?? 'V8 default young generation';

      rows.push(
        { measurement: `last 100 entries, first read of a fresh journal (builds the index: one pass over ${bytes(fileBytes).replace(/^\+/, "")})`, result: ms(coldMs), meaning: `Once per session per server process; before: every read cost this much (${BEFORE.last100}).` },
        { measurement: 'last 100 entries, `journal.read` (index built)', result: ms(pct(warmDirect, 50)), meaning: `Goal ≤ 5 ms. Before: ${BEFORE.last100}, the whole file parsed for 100 entries.` },
        { measurement: 'last 100 entries, `GET /transcript?before_seq=&limit=100` over HTTP', result: `p50 ${ms(pct(overHttp, 50))}, p99 ${ms(pct(overHttp, 99))}`, meaning: 'What the page pays to show the end of a long session.' },
        { measurement: `replay from the middle (${count(ENTRIES / 2)} entries, one SSE client to its \`live\` frame)`, result: `${ms(middle[0]!.ms)} (${count((ENTRIES / 2 / middle[0]!.ms) * 1000)} entries/s)`, meaning: `Linear in the entries sent. Before: ${BEFORE.middle}.` },
        { measurement: `${CONCURRENT} full replays at once (${count(ENTRIES)} entries each)`, result: `${ms(fullMs)} for all; server RSS ${bytes(rssPeak - rssBefore)} (peak ${bytes(rssPeak).replace(/^\+/, '')})`, meaning: `Each replay waits for its client (bounded queue), so memory does not grow with the session. Before: ${BEFORE.concurrent}.` },
        { measurement: '`GET /api/agents` while the 10 replays run', result: `p50 ${ms(pct(gets, 50))}, p99 ${ms(pct(gets, 99))} (${gets.length} requests)`, meaning: `Other requests are still served. Before: ${BEFORE.getP99}.` },
        { measurement: 'longest event-loop stall of the server through all of the above (wall)', result: `${ms(maxStall)} (\`monitorEventLoopDelay\`); the 5 ms ticker's longest: ${ms(stall.longest.wallMs)} wall, of which ${ms(stall.longest.cpuMs)} on this thread's CPU (${load}; ${heap})`, meaning: `Goal: never over 50 ms. In wall time this counts the process waiting for a core too. Before the index: ${BEFORE.maxStall}; 275 ms before the replays shared the loop (loop-budget.ts).` },
        { measurement: 'most CPU this thread used within one stall (`process.threadCpuUsage` per 5 ms tick), and the GC in that stall', result: `${ms(stall.mostCpu.cpuMs)} CPU in a ${ms(stall.mostCpu.wallMs)} stall (GC ${ms(stall.mostCpu.gcMs)}); longest GC pause ${ms(stall.longestGcMs)} wall (${heap})`, meaning: 'What the loop was really held for by work (page reads, frames, GC on this thread): the stall goal in CPU terms. A parallel GC pause also waits for its helper threads, which this does not count.' },
        { measurement: 'stalls over 50 ms wall: all / held by over 50 ms of CPU / the rest (the thread had the CPU for under 50 ms of it)', result: `${stall.over50} / ${stall.over50Cpu} / ${stall.over50 - stall.over50Cpu}`, meaning: 'Those held by CPU are the loop blocked by this process; the rest are the scheduler (the 10 clients and other processes on 2 cores).' },      );
    } finally {
      stalls.stop();
      loop.disable();
      await server.close();
      await journal.close();
      await fs.rm(tmp, { recursive: true, force: true });
    }
    writeSection(inject('benchResultsDir'), {
      id: 'replay',
      order: 15,
      title: '15. `ase serve`: replay of a 100,000-entry session',
      method: `One session of ${count(ENTRIES)} \`agent_message\` entries (~260 bytes each) in a FileJournal, a server started on it as a fresh process would be (no index yet). Stream clients in a child process read to their \`live\` frame; RSS is the server process's; the event-loop stall is \`monitorEventLoopDelay\`'s max over the whole run, and a 5 ms ticker's gaps with this thread's CPU in each (\`process.threadCpuUsage\`) and the GC pauses in them, so a stall held by work is told from one spent waiting for a core. \`ase serve\` runs with \`--max-semi-space-size=8\` (src/cli/serve-heap.ts); to measure the server as it runs, give the bench the same: \`NODE_OPTIONS=--max-semi-space-size=8 npx vitest run --config bench/vitest.config.ts bench/replay.bench.test.ts\`. "Before" figures: the same runs on the journal that parsed the whole file per read (commit a9c0531).`,
      rows,
    });
  }, 600_000);
});
