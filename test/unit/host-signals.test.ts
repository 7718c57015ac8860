/**
 * Who listens for SIGTERM/SIGINT/SIGHUP (host-signals.ts), checked on the listener lists without
 * sending a signal (test/integration/host-processes.test.ts sends real ones to a host process):
 * the library listens only while supervised processes live and nobody else listens, steps aside
 * the moment the host adds a handler, comes back when the host's last one is removed, and the
 * opt-out removes it.
 */
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { setHostSignalHandling } from '../../src/engines/transport/host-signals.js';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const shutdown = { stdinGraceMs: 50, termGraceMs: 1_000 };
const started: SupervisedProcess[] = [];
afterEach(async () => {
  setHostSignalHandling(true);
  await Promise.all(started.splice(0).map((p) => p.stop()));
});

const count = (signal: NodeJS.Signals) => process.listenerCount(signal);
const tick = () => new Promise((r) => setTimeout(r, 0));

// The test worker may have signal handlers of its own: then the library correctly never listens,
// and there is nothing to observe here.
const workerListens = ['SIGTERM', 'SIGINT', 'SIGHUP'].some((s) => count(s as NodeJS.Signals) > 0);

describe.skipIf(workerListens)('host signal listeners', () => {
  it('are held only while supervised processes live', async () => {
    expect(count('SIGTERM')).toBe(0);
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(p);
    expect([count('SIGTERM'), count('SIGINT'), count('SIGHUP')]).toEqual([1, 1, 1]);
    await p.stop();
    expect([count('SIGTERM'), count('SIGINT'), count('SIGHUP')]).toEqual([0, 0, 0]);
  });

  it("step aside when the host adds its own handler, and come back when it is removed", async () => {
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(p);
    const mine = () => undefined;
    process.on('SIGTERM', mine);
    expect(process.listeners('SIGTERM')).toEqual([mine]); // only the host's
    expect(count('SIGINT')).toBe(1); // other signals unaffected
    process.off('SIGTERM', mine);
    await tick();
    expect(count('SIGTERM')).toBe(1); // ours again
  });

  it('are not added for a signal the host already handles', async () => {
    const mine = () => undefined;
    process.on('SIGHUP', mine);
    try {
      const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
      started.push(p);
      expect(process.listeners('SIGHUP')).toEqual([mine]);
      expect(count('SIGTERM')).toBe(1);
    } finally {
      process.off('SIGHUP', mine);
    }
  });

  it('setHostSignalHandling(false) removes them and keeps them off', async () => {
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(p);
    setHostSignalHandling(false);
    expect([count('SIGTERM'), count('SIGINT'), count('SIGHUP')]).toEqual([0, 0, 0]);
    const q = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(q);
    expect(count('SIGTERM')).toBe(0);
    setHostSignalHandling(true);
    expect(count('SIGTERM')).toBe(1);
  });
});
