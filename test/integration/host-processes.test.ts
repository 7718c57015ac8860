/**
 * Nothing left running (issue 12, item 4), with real processes: a host process (support/signal-host.mjs)
 * runs a claude session whose agent is a stand-in CLI that starts a `setsid` child (its own
 * session: out of the agent's process group) and a plain child and that, like Gemini CLI (or
 * Claude Code busy with a long turn), does not end on stdin EOF; then the host is signalled.
 *
 * - SIGTERM, SIGINT, SIGHUP: the stop ladders run, then the signal takes its default effect (the host
 *   dies of that signal): 0 survivors, no record left in `<dataDir>/processes`.
 * - SIGKILL: the agent dies at once of its parent-death signal; its two children survive until the
 *   data dir is opened again (createSession), which reaps them: then 0 survivors.
 * - A host with its own SIGTERM handler keeps it: the signal is the host's, nothing is stopped.
 * - `setHostSignalHandling(false)`: SIGTERM ends the host at once, as if the library were not there;
 *   the next open reaps.
 *
 * Survivors are counted twice: the three pids the stand-in reported (alive = in /proc, not a zombie)
 * and every process whose environment carries this test's marker (the suite's orphan-check
 * mechanism: the marker is in the agent's environment, which its children inherit).
 */
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/index.js';
import { testRunEnv } from '../support/orphan-check.js';
import { startHostProcess } from '../support/host-process.js';
import { isAlive, processesUnder, waitNoProcessesUnder, waitUntil } from '../support/processes.js';

const linux = process.platform === 'linux';
const HOST = fileURLToPath(new URL('../support/signal-host.mjs', import.meta.url));
const STAND_IN = fileURLToPath(new URL('../support/claude-stand-in.mjs', import.meta.url));

interface Pids {
  agent: number;
  setsid: number;
  plain: number;
}

const roots: string[] = [];
const markers: string[] = [];
afterAll(() => {
  // Whatever a failed test left: killed here so the suite's orphan check stays about real leaks.
  for (const marker of markers) for (const pid of processesUnder(marker)) tryKill(pid);
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}



interface Host {
  child: ChildProcess;
  pids: Pids;
  dataDir: string;
  workDir: string;
  marker: string;
  out: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startHost(extra: { ownHandler?: NodeJS.Signals; optOut?: boolean } = {}, standIn = 'fork,ignore-eof'): Promise<Host> {
  const root = mkdtempSync(join(tmpdir(), 'ase-host-'));
  roots.push(root);
  const marker = `ase-host-probe-${randomUUID()}`;
  markers.push(marker);
  const bin = join(root, 'claude');
  // exec keeps the pid: the agent the engine spawned IS the stand-in.
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`);
  chmodSync(bin, 0o755);
  const config = {
    dataDir: join(root, 'data'),
    workDir: root,
    bin,
    env: { ...testRunEnv(), ASE_HOST_PROBE: marker, STANDIN: standIn, STANDIN_PIDS: join(root, 'pids.json') },
    // Short rungs: the stand-in ignores stdin EOF, so every stop goes on to SIGTERM.
    shutdown: { stdinGraceMs: 200, termGraceMs: 1_000, killWaitMs: 1_000 },
    ...extra,
  };
  const { child, ready: pids, out, exit } = await startHostProcess<Pids>(HOST, config, 30_000);
  return { child, pids, dataDir: config.dataDir, workDir: root, marker, out, exit };
}

function records(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'processes'));
  } catch {
    return [];
  }
}

describe.runIf(linux)('nothing left running when the host ends', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal}: the stop ladders run, then the host dies of ${signal}; 0 survivors, no record left`, async () => {
      const host = await startHost();
      const all = [host.pids.agent, host.pids.setsid, host.pids.plain];
      expect(all.every(isAlive)).toBe(true);
      expect(records(host.dataDir)).toHaveLength(1);
      host.child.kill(signal);
      const exit = await host.exit;
      expect(exit).toEqual({ code: null, signal }); // the default effect, not a clean exit
      expect(all.filter(isAlive)).toEqual([]);
      expect(await waitNoProcessesUnder(host.marker, 1_000)).toEqual([]);
      expect(records(host.dataDir)).toEqual([]);
    });
  }

  it('SIGKILL: the agent dies of its parent-death signal; its children die when the data dir is opened again', async () => {
    const host = await startHost();
    host.child.kill('SIGKILL');
    await host.exit;
    // The agent: killed by the kernel (setpriv --pdeathsig KILL), not by anyone's handler.
    expect(await waitUntil(() => !isAlive(host.pids.agent), 2_000)).toBe(true);
    // Its children outlive it (no one can run code in a SIGKILLed host): the documented limit.
    expect(isAlive(host.pids.setsid) && isAlive(host.pids.plain)).toBe(true);
    expect(records(host.dataDir)).toHaveLength(1);

    // Opening the data dir again reaps them (checked by pid AND start time, tag and group).
    const session = await createSession({ agent: 'fake', workDir: host.workDir, dataDir: host.dataDir });
    expect([host.pids.setsid, host.pids.plain].filter(isAlive)).toEqual([]);
    expect(processesUnder(host.marker)).toEqual([]);
    expect(records(host.dataDir)).toEqual([]);
    await session.stop();
  });

  it("a host's own SIGTERM handler keeps the signal: nothing is stopped, the host lives on", async () => {
    const host = await startHost({ ownHandler: 'SIGTERM' });
    host.child.kill('SIGTERM');
    expect(await waitUntil(() => host.out().includes('HANDLED SIGTERM'), 5_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(host.child.exitCode).toBeNull();
    expect([host.pids.agent, host.pids.setsid, host.pids.plain].every(isAlive)).toBe(true);
    // SIGINT has no handler of the host's: ours runs the ladders.
    host.child.kill('SIGINT');
    expect(await host.exit).toEqual({ code: null, signal: 'SIGINT' });
    expect([host.pids.agent, host.pids.setsid, host.pids.plain].filter(isAlive)).toEqual([]);
  });

  it('setHostSignalHandling(false): SIGTERM ends the host at once; the next open reaps what it left', async () => {
    const host = await startHost({ optOut: true });
    host.child.kill('SIGTERM');
    expect(await host.exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await waitUntil(() => !isAlive(host.pids.agent), 2_000)).toBe(true); // parent-death signal
    expect(isAlive(host.pids.setsid) && isAlive(host.pids.plain)).toBe(true);
    const session = await createSession({ agent: 'fake', workDir: host.workDir, dataDir: host.dataDir });
    expect([host.pids.setsid, host.pids.plain].filter(isAlive)).toEqual([]);
    expect(processesUnder(host.marker)).toEqual([]);
    await session.stop();
  });
});
