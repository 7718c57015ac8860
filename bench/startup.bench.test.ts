/**
 * 5. Start-up latency through the public API: `createSession()` with the fake engine on the real
 * clock (startDelayMs 0) and the default file store and journal (in a temp data dir), until the
 * first `ready` from the engine; then `stop()` until `done`. One session at a time, each stopped
 * before the next starts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fakeEngine } from '../src/engines/fake/index.js';
import { createSession } from '../src/session/create-session.js';
import { type Session } from '../src/session/session.js';
import { latency } from './support/measure.js';
import { ms, writeSection } from './support/report.js';

const SESSIONS = 50;
const WARMUP = 5;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-bench-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

interface Timing {
  created: number;
  ready: number;
  idle: number;
  stopped: number;
}

async function oneSession(): Promise<Timing> {
  const t0 = performance.now();
  const session: Session = await createSession({
    agent: 'fake',
    workDir: dir,
    dataDir: path.join(dir, 'data'),
    engines: [fakeEngine({ startDelayMs: 0 })],
  });
  const created = performance.now() - t0;
  // Subscribing after createSession resolved misses nothing: the runtime starts the engine on a
  // promise chain and the fake engine reports `ready` from a (0 ms) timer.
  const firstReady = new Promise<number>((resolve) => {
    const off = session.on('agent', (notice) => {
      if (notice.event.type !== 'ready') return;
      off();
      resolve(performance.now() - t0);
    });
  });
  const firstIdle = new Promise<number>((resolve) => {
    const off = session.on('status', (notice) => {
      if (notice.phase !== 'idle') return;
      off();
      resolve(performance.now() - t0);
    });
  });
  const [ready, idle] = await Promise.all([firstReady, firstIdle]);
  const t1 = performance.now();
  const final = await session.stop();
  const stopped = performance.now() - t1;
  expect(final.phase).toBe('stopped');
  return { created, ready, idle, stopped };
}

describe('createSession start-up', () => {
  it('measures createSession → first ready', async () => {
    for (let i = 0; i < WARMUP; i++) await oneSession();
    const timings: Timing[] = [];
    for (let i = 0; i < SESSIONS; i++) timings.push(await oneSession());
    const created = latency(timings.map((t) => t.created));
    const ready = latency(timings.map((t) => t.ready));
    const idle = latency(timings.map((t) => t.idle));
    const stopped = latency(timings.map((t) => t.stopped));

    writeSection(inject('benchResultsDir'), {
      id: 'startup',
      order: 5,
      title: '5. Start-up: createSession → ready',
      method:
        `\`createSession({ agent: 'fake', engines: [fakeEngine({ startDelayMs: 0 })], dataDir })\` on the real clock with the default ` +
        `FileStore and FileJournal in a temp data dir; ${SESSIONS} sessions one after another (after ${WARMUP} warm-up sessions), ` +
        'each stopped before the next. Times are from calling `createSession` to the first notice of each kind.',
      rows: [
        {
          measurement: '`createSession` resolves (options validated, store looked up, actor started)',
          result: `p50 ${ms(created.p50)}, p95 ${ms(created.p95)}`,
          meaning: 'The library\'s own set-up, including reading the store for a session to resume.',
        },
        {
          measurement: 'First `ready` from the engine (`agent` notice)',
          result: `p50 ${ms(ready.p50)}, p95 ${ms(ready.p95)}`,
          meaning: 'What the engine layer adds to start-up: a real agent CLI such as Claude Code takes seconds to start, so the session\'s share is negligible.',
        },
        {
          measurement: 'Phase `idle` (`status` notice: ready for a send)',
          result: `p50 ${ms(idle.p50)}, p95 ${ms(idle.p95)}`,
          meaning: 'The session accepts and delivers messages from this point; sends made earlier are queued, not lost.',
        },
        {
          measurement: '`stop()` → `done` (engine exit, final state fsynced, journal closed)',
          result: `p50 ${ms(stopped.p50)}, p95 ${ms(stopped.p95)}`,
          meaning: 'A clean shutdown costs one durable save plus the engine\'s exit, so stopping many sessions on host shutdown is quick.',
        },
      ],
    });
  });
});
