/**
 * 14. Scale: what sessions cost while they sit still, and what a host with many stored sessions
 * costs to open (issue 24).
 *
 * - Idle CPU: one supervisor, N awake claude sessions on a stand-in CLI (a node process speaking
 *   stream-json), one turn each, then the host process's own CPU time (`process.cpuUsage()`, user +
 *   system: not wall time, so other work on a shared machine does not count) over quiet windows,
 *   with extra sleeping processes on the machine (`sleep` children of one shell, killed after).
 *   ASE_BENCH_IDLE_SESSIONS / ASE_BENCH_IDLE_EXTRA (comma lists) narrow the matrix.
 * - Memory per session at 1,000: heap (after a full GC) and RSS per awake and per hibernated
 *   session (fake engine: a real agent process per session would measure the agent, not us).
 * - `supervisor.list()` with 10,000 stored sessions in the default FileStore, and `ase serve`
 *   start-up (process start → listening) over the same data dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { claudeEngine } from '../src/engines/claude/index.js';
import { hostScan } from '../src/engines/transport/descendant-scan.js';
import type { Session } from '../src/session/session.js';
import { createSupervisor } from '../src/session/supervisor.js';
import { fakeEngine } from '../src/engines/fake/index.js';
import { ASE_BIN } from '../test/support/built-cli.js';
import { collectGarbage, median, settledHeapUsed } from './support/measure.js';
import { bytes, ms, writeSection, type Row } from './support/report.js';

const STAND_IN = fileURLToPath(new URL('../test/support/claude-stand-in.mjs', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'ase-bench-scale-'));
const rows: Row[] = [];
const list = (name: string, fallback: number[]): number[] =>
  process.env[name] ? process.env[name]!.split(',').map(Number).filter((n) => Number.isInteger(n) && n >= 0) : fallback;
const IDLE_SESSIONS = list('ASE_BENCH_IDLE_SESSIONS', [1, 10, 100]);
const IDLE_EXTRA = list('ASE_BENCH_IDLE_EXTRA', [0, 100, 1000]);
const WINDOW_MS = 5_000;
const WINDOWS = 3;
const PER_SESSION = 1_000;
const STORED = 10_000;

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (msDelay: number) => new Promise<void>((resolve) => setTimeout(resolve, msDelay));
const processCount = (): number => readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;

/** `count` sleeping processes (children of one shell, in its group); resolves once all run. */
async function sleepers(count: number): Promise<{ stop(): Promise<void> }> {
  if (count === 0) return { stop: async () => {} };
  const shell: ChildProcess = spawn('sh', ['-c', `i=0; while [ $i -lt ${count} ]; do sleep 3600 & i=$((i+1)); done; echo started; wait`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    shell.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('started') && resolve());
    shell.once('exit', () => reject(new Error('sleeper shell exited early')));
  });
  return {
    stop: async () => {
      const gone = new Promise((resolve) => shell.once('exit', resolve));
      process.kill(-shell.pid!, 'SIGKILL');
      await gone;
    },
  };
}

/** The host's own CPU (user + system) over `ms`, as a fraction of one core. */
async function ownCpu(ms: number): Promise<number> {
  const before = process.cpuUsage();
  const t0 = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (performance.now() - t0);
}

const percent = (fraction: number) => `${(fraction * 100).toFixed(2)}%`;

interface IdleResult {
  sessions: number;
  extra: number;
  machine: number;
  cpu: number[];
  load: number;
  ticks: number;
  quiet: number;
  reads: number;
  full: number;
  seconds: number;
}

/** One supervisor, `sessionCounts` awake idle claude stand-in sessions (one turn each), its own CPU with each number of extra sleeping processes. */
async function idleCpu(sessionCounts: number[], extras: number[], leaseTtlMs?: number): Promise<IdleResult[]> {
  const bin = path.join(dir, 'claude');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`);
  chmodSync(bin, 0o755);
  const supervisor = createSupervisor({
    dataDir: path.join(dir, `idle-${leaseTtlMs ?? 'default'}`),
    engines: [claudeEngine()],
    defaults: { bin, engineOptions: { env: { STANDIN: '' } } },
    ...(leaseTtlMs !== undefined && { leaseTtlMs }),
  });
  const sessions: Session[] = [];
  const results: IdleResult[] = [];
  try {
    for (const n of sessionCounts) {
      while (sessions.length < n) {
        const batch = await Promise.all(Array.from({ length: Math.min(10, n - sessions.length) }, () => supervisor.create({ agent: 'claude', workDir: dir })));
        await Promise.all(batch.map((s) => s.run('hello')));
        sessions.push(...batch);
      }
      for (const extra of extras) {
        const extraProcesses = await sleepers(extra);
        try {
          await sleep(1_000);
          const machine = processCount();
          const cpu: number[] = [];
          const before = { ...hostScan.counts };
          const t0 = performance.now();
          for (let i = 0; i < WINDOWS; i++) cpu.push(await ownCpu(WINDOW_MS));
          const c = hostScan.counts;
          results.push({
            sessions: n,
            extra,
            machine,
            cpu,
            load: os.loadavg()[0] ?? 0,
            ticks: c.ticks - before.ticks,
            quiet: c.quiet - before.quiet,
            reads: c.statReads - before.statReads,
            full: c.full - before.full,
            seconds: (performance.now() - t0) / 1000,
          });
          console.log(`idle: ${n} sessions, +${extra} processes (${machine} on the machine), lease ${leaseTtlMs ?? 'default'}: ${cpu.map(percent).join(', ')}; load ${os.loadavg()[0]}`);
        } finally {
          await extraProcesses.stop();
        }
      }
    }
  } finally {
    await supervisor.shutdown();
  }
  return results;
}

function idleRow(r: IdleResult, leaseTtlMs: number | undefined): Row {
  const lease = leaseTtlMs === undefined ? '' : `, lease ${leaseTtlMs / 60_000} min (no renewal in the window)`;
  return {
    measurement: `Host CPU, ${r.sessions} awake idle session${r.sessions === 1 ? '' : 's'} (claude stand-in)${lease}, ${r.extra === 0 ? 'no' : `+${r.extra.toLocaleString('en-US')}`} extra sleeping processes (${r.machine} on the machine)`,
    result: `${percent(median(r.cpu))} of a core (windows: ${r.cpu.map(percent).join(', ')}; load average ${r.load.toFixed(1)}); descendant ticks ${r.ticks}, of which ${r.quiet} read nothing, ${(r.reads / r.seconds).toFixed(0)} /proc stat reads/s, ${r.full} whole-table reads`,
    meaning:
      leaseTtlMs !== undefined
        ? 'Everything but the lease renewals: descendant tracking, timers, the engines. The difference to the row with the default lease is the FileStore renewing 100 leases every 10 s (≈ 2 ms of CPU each).'
        : r.sessions === 100
          ? 'Target ≤ 1% of a core at 100 sessions, whatever else runs on the machine. Most of it is the FileStore renewing each lease every third of its 30 s (≈ 2 ms of CPU each): compare the rows with a 60 min lease.'
          : 'The host process’s own CPU time while its sessions wait for a person.',
  };
}

describe('scale', () => {
  it('idle CPU of awake sessions', { timeout: 1_800_000 }, async () => {
    const results = await idleCpu(IDLE_SESSIONS, IDLE_EXTRA);
    expect(results.length).toBe(IDLE_SESSIONS.length * IDLE_EXTRA.length);
    for (const r of results) rows.push(idleRow(r, undefined));
  });

  it('idle CPU of 100 awake sessions, lease renewals out of the window', { timeout: 1_800_000 }, async () => {
    // The same sessions with a lease of an hour, so none is renewed while measured: what the
    // sessions cost besides the store's lease renewals (a third of the lease each, 30 s by default).
    const extras = IDLE_EXTRA.filter((n) => n === 0 || n === Math.max(...IDLE_EXTRA));
    const results = await idleCpu([100], extras, 3_600_000);
    for (const r of results) rows.push(idleRow(r, 3_600_000));
  });

  it(`heap and RSS per awake and per hibernated session at ${PER_SESSION.toLocaleString('en-US')}`, { timeout: 900_000 }, async () => {
    const rss = () => {
      collectGarbage();
      return process.memoryUsage().rss;
    };
    const measure = async (hibernate: boolean) => {
      const supervisor = createSupervisor({
        dataDir: path.join(dir, hibernate ? 'mem-hibernated' : 'mem-awake'),
        engines: [fakeEngine({ startDelayMs: 0 })],
        ...(hibernate && { hibernateAfterMs: 300 }),
      });
      const heap0 = await settledHeapUsed();
      const rss0 = rss();
      const sessions: Session[] = [];
      for (let i = 0; i < PER_SESSION; i += 100) {
        sessions.push(...(await Promise.all(Array.from({ length: 100 }, () => supervisor.create({ agent: 'fake', workDir: dir })))));
      }
      const settled = (s: Session) => (hibernate ? s.snapshot().phase === 'hibernated' && s.snapshot().liveGen === null : s.snapshot().phase === 'idle');
      for (const deadline = Date.now() + 300_000; !sessions.every(settled); ) {
        if (Date.now() > deadline) throw new Error('sessions did not settle');
        await sleep(50);
      }
      await sleep(1_000);
      const heap = (await settledHeapUsed()) - heap0;
      const resident = rss() - rss0;
      await supervisor.shutdown();
      return { heap: heap / PER_SESSION, rss: resident / PER_SESSION };
    };
    const awake = await measure(false);
    const hibernated = await measure(true);
    rows.push({
      measurement: `Memory per awake session, ${PER_SESSION.toLocaleString('en-US')} idle sessions (fake engine, default FileStore + FileJournal)`,
      result: `heap ${bytes(awake.heap)}, RSS ${bytes(awake.rss)} per session`,
      meaning: 'What one open session costs the host itself (a real agent process is extra, and is its own process).',
    });
    rows.push({
      measurement: `Memory per hibernated session, ${PER_SESSION.toLocaleString('en-US')} sessions`,
      result: `heap ${bytes(hibernated.heap)}, RSS ${bytes(hibernated.rss)} per session`,
      meaning: 'A hibernated session keeps its actor and handle but no engine and no process.',
    });
    expect(awake.heap).toBeGreaterThan(0);
  });

  it(`supervisor list() and \`ase serve\` start-up with ${STORED.toLocaleString('en-US')} stored sessions`, { timeout: 900_000 }, async () => {
    const dataDir = path.join(dir, 'stored');
    // One real stored session (a stopped fake session), copied under new ids: what 10,000 runs leave.
    const seed = createSupervisor({ dataDir, engines: [fakeEngine({ startDelayMs: 0 })] });
    const first = await seed.create({ agent: 'fake', workDir: dir });
    await first.run('hello');
    await first.stop();
    await seed.shutdown();
    const sessionsDir = path.join(dataDir, 'sessions');
    const text = readFileSync(path.join(sessionsDir, `${first.id}.json`), 'utf8');
    mkdirSync(sessionsDir, { recursive: true });
    for (let i = 1; i < STORED; i++) {
      const id = `${first.id.slice(0, -8)}${i.toString(16).padStart(8, '0')}`;
      writeFileSync(path.join(sessionsDir, `${id}.json`), text.split(first.id).join(id));
    }
    const lists: number[] = [];
    let listed = 0;
    for (let i = 0; i < 3; i++) {
      const supervisor = createSupervisor({ dataDir, engines: [fakeEngine({ startDelayMs: 0 })] });
      const t0 = performance.now();
      listed = (await supervisor.list()).length;
      lists.push(performance.now() - t0);
      await supervisor.shutdown();
    }
    expect(listed).toBe(STORED);
    const startups: number[] = [];
    const emptyStartups: number[] = [];
    const emptyDir = path.join(dir, 'empty');
    for (let i = 0; i < 6; i++) {
      // Interleaved with an empty data dir: on a loaded machine only the difference says what the sessions cost.
      const empty = i % 2 === 1;
      const t0 = performance.now();
      const serve = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', empty ? emptyDir : dataDir], { env: { HOME: dir, NO_COLOR: '1', PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        let out = '';
        serve.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (/open http:\/\/127\.0\.0\.1:\d+/.test(out)) resolve();
        });
        serve.once('exit', (code) => reject(new Error(`ase serve exited (${code}) before listening`)));
      });
      (empty ? emptyStartups : startups).push(performance.now() - t0);
      const exited = new Promise((resolve) => serve.once('exit', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    rows.push({
      measurement: `\`supervisor.list()\` with ${STORED.toLocaleString('en-US')} stored sessions (default FileStore; a fresh supervisor each time)`,
      result: `${ms(median(lists))} (runs: ${lists.map(ms).join(', ')})`,
      meaning: 'Every stored session file is read and checked once: the cost of a dashboard listing a large data dir.',
    });
    rows.push({
      measurement: `\`ase serve\` start-up with ${STORED.toLocaleString('en-US')} stored sessions (process start → listening)`,
      result: `${ms(median(startups))} (runs: ${startups.map(ms).join(', ')}); with an empty data dir ${ms(median(emptyStartups))} (runs: ${emptyStartups.map(ms).join(', ')})`,
      meaning: 'The server does not read the stored sessions before it listens (they are read when a client lists them): the difference to an empty data dir is what 10,000 stored sessions cost its start-up.',
    });
  });

  afterAll(() => {
    if (rows.length === 0) return;
    writeSection(inject('benchResultsDir'), {
      id: 'scale',
      order: 14,
      title: '14. Scale: idle sessions, memory per session, large data dirs',
      method:
        `Figures taken on a shared 2-core machine loaded by other builds and tests (CPU time is the host's own, so that load inflates it only indirectly). Idle CPU: one \`createSupervisor()\` (default FileStore, journal and process registry in a temp dir), N awake claude sessions on a stand-in CLI (a node process speaking stream-json), one turn each; then the host process's own CPU time (\`process.cpuUsage()\`, user + system, so other load on a shared machine is not counted) over ${WINDOWS} windows of ${WINDOW_MS / 1000} s, median reported; extra processes are \`sleep\` children of one shell, started before and killed after each measurement. Memory: 1,000 sessions through one supervisor on the fake engine (default FileStore and FileJournal), heap after a full GC and RSS against before; then 1,000 that hibernate after 300 ms. Stored sessions: one real stored session copied under 10,000 ids; \`list()\` from a fresh supervisor, and \`ase serve\` (the built CLI) from spawn to its URL line, 3 runs each.`,
      rows,
    });
  });
});
