/**
 * The parent-death signal (`setpriv --pdeathsig KILL`) as the supervisor uses it. PR_SET_PDEATHSIG
 * fires when the THREAD that forked the child ends, not the process: these tests pin down what that
 * means in Node. A child spawned from the main thread survives worker threads coming and going;
 * one spawned from inside a worker is SIGKILLed when that worker ends (documented in
 * parent-death-signal.ts and docs/api.md). The wrapper execs: the supervised pid is the agent's.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { executableProblem, setprivPath } from '../../src/engines/transport/parent-death-signal.js';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';
import { isAlive } from '../support/processes.js';

const linux = process.platform === 'linux';
const started: SupervisedProcess[] = [];
const strays: number[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});


const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
/** `sleep` ignores stdin EOF: go to SIGTERM quickly. */
const shutdown = { stdinGraceMs: 50, termGraceMs: 1_000 };

describe.runIf(linux)('parent-death signal', () => {
  it('setpriv is found on this machine and supports --pdeathsig', async () => {
    expect(await setprivPath()).toMatch(/\/setpriv$/);
  });

  it('the supervised pid is the agent itself (setpriv execs), and its command line is the agent\'s', async () => {
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(p);
    await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').filter(Boolean)).toEqual(['sleep', '30']);
  });

  it('a child spawned from the main thread survives a worker thread that ends', async () => {
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown });
    started.push(p);
    const worker = new Worker('setTimeout(() => {}, 50)', { eval: true });
    await new Promise((r) => worker.once('exit', r));
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(p.pid)).toBe(true);
  });

  // The raw API inside the worker: the supervisor's TypeScript cannot be loaded there without the test's transform.
  it('a child spawned from inside a worker thread is killed when that worker ends', async () => {
    const setpriv = (await setprivPath())!;
    const code = `
      const { spawn } = require('node:child_process');
      const { parentPort, workerData } = require('node:worker_threads');
      const child = spawn(workerData.setpriv, ['--pdeathsig', 'KILL', '--', 'sleep', '30'], { stdio: 'ignore', detached: true });
      child.once('spawn', () => parentPort.postMessage(child.pid));
      setInterval(() => {}, 1000);`;
    const worker = new Worker(code, { eval: true, workerData: { setpriv } });
    const pid = await new Promise<number>((resolve) => worker.once('message', resolve));
    strays.push(pid);
    await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(pid)).toBe(true);
    await worker.terminate();
    const deadline = Date.now() + 2_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(isAlive(pid)).toBe(false);
  });

  it('without the signal (parentDeathSignal: false) the child is spawned directly', async () => {
    const p = await spawnSupervised({ file: 'sleep', args: ['30'], cwd: tmpdir(), env, shutdown, parentDeathSignal: false });
    started.push(p);
    expect(readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').filter(Boolean)).toEqual(['sleep', '30']);
  });
});

describe('executableProblem (a missing binary is refused before the wrapper runs)', () => {
  it('finds names on PATH and paths relative to cwd; reports ENOENT and EACCES like spawn()', () => {
    expect(executableProblem('sh', '/', env)).toBeUndefined();
    expect(executableProblem('/bin/sh', '/', {})).toBeUndefined();
    expect(executableProblem('./sh', '/bin', {})).toBeUndefined();
    expect(executableProblem('no-such-agent-bin', '/', env)).toBe('ENOENT');
    expect(executableProblem('/nonexistent/agent', '/', env)).toBe('ENOENT');
    expect(executableProblem('/etc/passwd', '/', env)).toBe('EACCES'); // not executable
    expect(executableProblem('/tmp', '/', env)).toBe('EACCES'); // a directory
  });

  it.runIf(linux)('spawnSupervised rejects a missing binary with ENGINE_START_FAILED naming the errno', async () => {
    await expect(spawnSupervised({ file: 'no-such-agent-bin', args: [], cwd: tmpdir(), env })).rejects.toMatchObject({
      code: 'ENGINE_START_FAILED',
      message: expect.stringContaining('spawn no-such-agent-bin ENOENT'),
    });
    // Same outcome without the wrapper (spawn() itself reports it).
    await expect(spawnSupervised({ file: 'no-such-agent-bin', args: [], cwd: tmpdir(), env, parentDeathSignal: false })).rejects.toMatchObject({
      code: 'ENGINE_START_FAILED',
      message: expect.stringContaining('ENOENT'),
    });
  });
});

