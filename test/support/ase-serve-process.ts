/**
 * The built `ase serve` as a child process on a data dir, as a person starts it, for the tests of
 * issue 20 (desk and phone): waits for its serve.json (this pid's), reads the token the way the
 * other `ase` commands do, and gives the API and page addresses. A restart on the same data dir is
 * another call (the SIGKILLed server's stale serve.json is waited past: the pid must be the new one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ASE_BIN } from './built-cli.js';
import { waitUntil } from './processes.js';
import { serverApi, type ServerApi } from './server-api.js';

export interface AseServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  readonly tokenFile: string;
  readonly serveFile: string;
  /** The page, logged in (`/?token=…`). */
  readonly pageUrl: string;
  /** stdout and stderr so far. */
  output(): string;
  /** A JSON request with the bearer token; the body parsed (undefined when not JSON). */
  api: ServerApi;
  /** Sends `signal` and waits until the process is gone (reaped, so its pid reads dead); resolves its exit code or signal. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | NodeJS.Signals | null>;
}

/** `ase serve --port 0 --data-dir dataDir`; `env` is added to this process's environment (e.g. TMPDIR for its hook directories). */
export async function startAseServe(options: { dataDir: string; env?: Record<string, string>; args?: string[]; timeoutMs?: number }): Promise<AseServeProcess> {
  const child = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', options.dataDir, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const serveFile = join(options.dataDir, 'serve.json');
  const ours = () => {
    if (!existsSync(serveFile)) return false;
    try {
      return (JSON.parse(readFileSync(serveFile, 'utf8')) as { pid: number }).pid === child.pid;
    } catch {
      return false; // being replaced
    }
  };
  if (!(await waitUntil(() => ours() || child.exitCode !== null, options.timeoutMs ?? 60_000)) || !ours()) {
    child.kill('SIGKILL');
    throw new Error(`ase serve did not write its serve.json:\n${out}`);
  }
  const entry = JSON.parse(readFileSync(serveFile, 'utf8')) as { url: string; tokenFile: string };
  const token = readFileSync(entry.tokenFile, 'utf8').trim();
  return {
    child,
    url: entry.url,
    token,
    tokenFile: entry.tokenFile,
    serveFile,
    pageUrl: `${entry.url}/?token=${encodeURIComponent(token)}`,
    output: () => out,
    api: serverApi(entry.url, token),
    async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`ase serve did not exit on ${signal}:\n${out}`)), timeoutMs))]);
    },
  };
}
