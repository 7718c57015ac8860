/**
 * Drives test/support/durable-host.mjs: a real host process running a session from dist/, whose
 * JSON-line reports the test can wait for, and which it can kill, stop and continue.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuiltCli } from './built-cli.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'durable-host.mjs');

export type HostReport = Record<string, unknown> & { pid: number };

export class Host {
  readonly reports: HostReport[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;
  #waiters: { match: (r: HostReport) => boolean; resolve: (r: HostReport) => void }[] = [];
  readonly #listeners: ((r: HostReport) => void)[] = [];
  #stderr = '';
  #buffer = '';

  private constructor(mode: string, config: Record<string, unknown>) {
    this.#child = spawn(process.execPath, [SCRIPT, mode, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stdout!.setEncoding('utf8');
    this.#child.stdout!.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (let newline = this.#buffer.indexOf('\n'); newline >= 0; newline = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        if (line.trim() === '') continue;
        const report = JSON.parse(line) as HostReport;
        this.reports.push(report);
        for (const listener of this.#listeners) listener(report);
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.match(report)) return true;
          w.resolve(report);
          return false;
        });
      }
    });
    this.#child.stderr!.on('data', (chunk: Buffer) => (this.#stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.#child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Builds dist/ first if the sources are newer (the host runs the library as a user would). */
  static async start(mode: string, config: Record<string, unknown>): Promise<Host> {
    await ensureBuiltCli();
    return new Host(mode, config);
  }

  get pid(): number {
    return this.#child.pid!;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** The first report (already received or coming) that matches; fails after `timeoutMs`. */
  waitFor(match: (r: HostReport) => boolean, what: string, timeoutMs = 15_000): Promise<HostReport> {
    const seen = this.reports.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(new Error(`host ${this.pid}: no ${what} within ${timeoutMs} ms; reports: ${JSON.stringify(this.reports.slice(-5))}; stderr: ${this.#stderr.slice(-2000)}`));
      }, timeoutMs);
      const done = (r: HostReport) => {
        clearTimeout(timer);
        resolve(r);
      };
      this.#waiters.push({ match, resolve: done });
      void this.exited.then(() => {
        if (this.#waiters.some((w) => w.resolve === done)) {
          clearTimeout(timer);
          reject(new Error(`host ${this.pid} exited before ${what}; reports: ${JSON.stringify(this.reports.slice(-5))}; stderr: ${this.#stderr.slice(-2000)}`));
        }
      });
    });
  }

  /** Calls `onReport` for every report from now on (synchronously as it is read). */
  onReport(onReport: (r: HostReport) => void): void {
    this.#listeners.push(onReport);
  }

  send(line: string): void {
    this.#child.stdin!.write(`${line}\n`);
  }

  signal(signal: NodeJS.Signals): void {
    this.#child.kill(signal);
  }

  /** SIGKILL, and wait until the process is gone and reaped. */
  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
    await this.exited;
  }
}
