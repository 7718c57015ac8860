/**
 * A minimal newline-delimited JSON-RPC driver for a child process (codex `mcp-server` 0.153.4 and
 * codex `app-server` 0.169.0 in tests): requests with ids, notifications, answers to server
 * requests, waiting on incoming messages (no sleeps), and a record of all traffic with timestamps
 * (for fixtures). Spawns in its own process group; stop() ends stdin, then SIGTERM, then SIGKILL
 * of the group (codex does not exit on stdin EOF while a command runs: reference codex.md §4.8).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { LineCarry, Wakeup } from './ndjson-stream.js';

type Json = Record<string, any>;

export interface TrafficEntry {
  /** ms since spawn */
  t: number;
  dir: 'host->agent' | 'agent->host';
  msg: Json;
}

export interface JsonRpcChildOptions {
  env: Record<string, string>;
  cwd: string;
  /** answers server→client requests (e.g. approvals); return undefined to leave one unanswered */
  onServerRequest?: (msg: Json) => unknown;
  /** sees every incoming message as it arrives */
  onMessage?: (msg: Json) => void;
}

const WAIT_MS = 20_000;

export class JsonRpcChild {
  readonly messages: Json[] = [];
  readonly traffic: TrafficEntry[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly t0 = performance.now();
  private readonly lines = new LineCarry();
  private nextId = 1;
  private readonly wakeup = new Wakeup();
  private exitedFlag = false;

  constructor(bin: string, args: string[], private readonly options: JsonRpcChildOptions) {
    this.child = spawn(bin, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdin.on('error', () => {}); // EPIPE after the child died: reported via exit instead
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-16_384)));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitedFlag = true;
        this.wakeup.wake();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private now(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  private onData(chunk: string): void {
    for (const line of this.lines.push(chunk)) {
      let msg: Json;
      try {
        msg = JSON.parse(line) as Json;
      } catch {
        msg = { __unparseable__: line };
      }
      this.messages.push(msg);
      this.traffic.push({ t: this.now(), dir: 'agent->host', msg });
      this.options.onMessage?.(msg);
      if (typeof msg.method === 'string' && msg.id !== undefined && this.options.onServerRequest) {
        const result = this.options.onServerRequest(msg);
        if (result !== undefined) this.write({ jsonrpc: '2.0', id: msg.id, result });
      }
    }
    this.wakeup.wake();
  }

  write(msg: Json): void {
    this.traffic.push({ t: this.now(), dir: 'host->agent', msg });
    this.child.stdin.write(JSON.stringify(msg) + '\n');
  }

  notify(method: string, params?: unknown): void {
    this.write({ jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) });
  }

  /** Sends a request; returns its id (use {@link response} to wait for the answer). */
  send(method: string, params?: unknown): number {
    const id = this.nextId++;
    this.write({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
    return id;
  }

  /** Waits for the response to request `id`; throws on a JSON-RPC error. */
  async response(id: number, timeoutMs = WAIT_MS): Promise<any> {
    const msg = await this.waitFor((m) => m.id === id && m.method === undefined && ('result' in m || 'error' in m), `response ${id}`, timeoutMs);
    if (msg.error) throw new Error(`JSON-RPC error for ${id}: ${JSON.stringify(msg.error)}`);
    return msg.result;
  }

  async request(method: string, params?: unknown, timeoutMs = WAIT_MS): Promise<any> {
    return this.response(this.send(method, params), timeoutMs);
  }

  /** The first message at index ≥ `from` matching `pred`; waits for it. */
  async waitFor(pred: (m: Json) => boolean, what: string, timeoutMs = WAIT_MS, from = 0): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = from; i < this.messages.length; i++) if (pred(this.messages[i]!)) return this.messages[i]!;
      if (this.exitedFlag) throw new Error(`process exited while waiting for ${what}; stderr: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`);
      await this.wakeup.sleep(left);
    }
  }

  /** stdin EOF, then SIGTERM of the group after `graceMs`, then SIGKILL after 3 s more. */
  async stop(graceMs = 500): Promise<void> {
    if (this.exitedFlag) return;
    this.child.stdin.end();
    const pid = this.child.pid;
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (pid) process.kill(-pid, signal);
      } catch {
        // group already gone
      }
    };
    const timeout = (ms: number) => new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
    if ((await Promise.race([this.exited, timeout(graceMs)])) !== 'timeout') return;
    kill('SIGTERM');
    if ((await Promise.race([this.exited, timeout(3000)])) !== 'timeout') return;
    kill('SIGKILL');
    await this.exited;
  }
}
