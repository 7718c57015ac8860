/**
 * A host process for the process-lifecycle tests: a plain-node script (signal-host.mjs,
 * local-host.mjs) that loads the TypeScript sources (ts-resolve.mjs), reads its config from
 * HOST_CONFIG and prints `READY <json>` once it is where the test wants it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitUntil } from './processes.js';

const INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

export interface HostProcess<T> {
  child: ChildProcess;
  /** What the host printed after `READY `. */
  ready: T;
  out(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `script` with `config`; rejects (and kills it) when it is not READY within `readyMs`. */
export async function startHostProcess<T>(script: string, config: unknown, readyMs: number): Promise<HostProcess<T>> {
  const child = spawn(process.execPath, ['--experimental-transform-types', '--no-warnings', script, INDEX], {
    env: { ...process.env, HOST_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = await waitUntil(() => out.includes('READY ') || child.exitCode !== null, readyMs);
  const line = out.split('\n').find((l) => l.startsWith('READY '));
  if (!ready || !line) {
    child.kill('SIGKILL');
    throw new Error(`the host did not get ready: ${out}\n${err}`);
  }
  return { child, ready: JSON.parse(line.slice('READY '.length)) as T, out: () => out, exit };
}
