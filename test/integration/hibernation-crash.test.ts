/**
 * A host SIGKILLed while its session is hibernated: the next host (a supervisor over the same data
 * dir) takes the dead host's lease at once, restores the session asleep (no agent is started), and
 * its first send starts one that resumes the stored agent session.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSupervisor, fakeEngine, type EngineStartSpec, type Supervisor } from '../../src/index.js';
import { ensureBuiltCli } from '../support/built-cli.js';

const HOST = path.join(path.dirname(fileURLToPath(import.meta.url)), '../support/hibernating-host.mjs');

let dir: string;
let supervisor: Supervisor | undefined;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-hibernate-crash-'));
});

afterEach(async () => {
  await supervisor?.shutdown();
  supervisor = undefined;
  await fs.rm(dir, { recursive: true, force: true });
});

describe('hibernation across a host crash', () => {
  // The host runs the built library.
  beforeAll(ensureBuiltCli, 180_000);

  it('a session stored hibernated by a SIGKILLed host comes back asleep and wakes on the next send', async () => {
    const dataDir = path.join(dir, 'data');
    const config = { dataDir, workDir: dir, sessionId: 'napping', hibernateAfterMs: 200 };
    const host = spawn(process.execPath, [HOST, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    host.stdout.on('data', (c: Buffer) => (out += c.toString()));
    host.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => host.once('exit', (_code, signal) => resolve(signal)));
    await expect.poll(() => out.includes('"asleep":true') || host.exitCode !== null, { timeout: 30_000 }).toBe(true);
    expect(err).toBe('');
    const { resumeToken } = JSON.parse(out.trim().split('\n').at(-1)!) as { resumeToken: string };
    host.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const stored = JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', 'napping.json'), 'utf8')) as { state: { phase: string } };
    expect(stored.state.phase).toBe('hibernated');

    const starts: EngineStartSpec[] = [];
    const inner = fakeEngine({ startDelayMs: 0 });
    supervisor = createSupervisor({
      dataDir,
      engines: [
        {
          ...inner,
          create: (context) => {
            const engine = inner.create(context);
            const start = engine.start.bind(engine);
            engine.start = (spec) => {
              starts.push(spec);
              return start(spec);
            };
            return engine;
          },
        },
      ],
    });
    // The dead host's lease is taken at once (its pid is gone), not after the lease's 30 s.
    const session = await supervisor.open('napping');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.snapshot()).toMatchObject({ phase: 'hibernated', state: { hibernated: 'asleep' }, liveGen: null, resumeToken });
    expect(starts).toEqual([]);
    expect((await supervisor.list()).find((i) => i.sessionId === 'napping')?.status).toBe('hibernated');

    const turn = await session.run('after the crash');
    expect(turn.text).toBe('echo: after the crash');
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatchObject({ resumeToken, mode: 'remote' });
    expect(session.snapshot()).toMatchObject({ resumeToken, usage: { turns: 2 } });
  }, 60_000);
});
