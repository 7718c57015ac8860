/**
 * An in-process stand-in for an ACP agent process (plugged in through the engine's `spawn`
 * option): the engine writes NDJSON to `stdin` and reads the agent's lines from `stdout`, exactly
 * as with a real child, so the engine's reader (agent-stream.ts) runs unchanged. Tests read
 * what the client sent (`next()`), write the agent's messages (`send()`), and end the "process"
 * (`exit()`). `stop()` (the engine's stop ladder) exits it with the configured status.
 */
import { PassThrough } from 'node:stream';
import type { AgentProcess, AgentSpawner } from '../../src/engines/acp/index.js';
import type { ProcessExit } from '../../src/engines/transport/process-supervisor.js';

type Json = Record<string, any>;

export class FakeAgentProcess implements AgentProcess {
  readonly pid = 0;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly exited: Promise<ProcessExit>;
  /** Everything the client wrote, decoded, in order. */
  readonly received: Json[] = [];
  /** How `stop()` ends the process (the recorded exit of a replay). */
  stopExit: ProcessExit = { code: 0, signal: null };
  stdinEnded = false;
  #resolveExit!: (exit: ProcessExit) => void;
  #buffer = '';
  #cursor = 0;
  #waiters: Array<() => void> = [];
  #exit: ProcessExit | undefined;
  /** What the agent wrote since the last delivery, handed to the reader in one chunk. */
  #unread: string[] = [];

  constructor() {
    this.exited = new Promise((resolve) => (this.#resolveExit = resolve));
    this.stdin.setEncoding('utf8');
    this.stdin.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.trim() !== '') this.received.push(JSON.parse(line) as Json);
      }
      this.#wake();
    });
    this.stdin.on('end', () => {
      this.stdinEnded = true;
      this.#wake();
    });
  }

  /**
   * Writes one agent→client message. Like a real pipe, the engine reads it on a later turn of the
   * event loop, never inside this call (a PassThrough would hand it over synchronously), together
   * with whatever else was written in the meantime, as one chunk.
   */
  send(message: unknown): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Writes a raw line (e.g. not JSON). */
  sendRaw(line: string): void {
    if (this.#exit) return;
    if (this.#unread.length === 0) setImmediate(() => this.#deliver());
    this.#unread.push(`${line}\n`);
  }

  #deliver(): void {
    const chunk = this.#unread.join('');
    this.#unread = [];
    if (chunk) this.stdout.write(chunk);
  }

  /** The next client message not consumed yet (optionally the next matching one, skipping others). */
  async next(pred: (m: Json) => boolean = () => true, ms = 5_000): Promise<Json> {
    const deadline = Date.now() + ms;
    for (;;) {
      while (this.#cursor < this.received.length) {
        const message = this.received[this.#cursor++]!;
        if (pred(message)) return message;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`fake agent: no client message within ${ms} ms (received so far: ${this.received.map((m) => m.method ?? `response ${String(m.id)}`).join(', ')})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next client request/notification with this method. */
  nextMethod(method: string, ms?: number): Promise<Json> {
    return this.next((m) => m.method === method, ms);
  }

  /** Answers a client request. */
  respond(request: Json, result: unknown): void {
    this.send({ jsonrpc: '2.0', id: request.id, result });
  }

  /** The process ends (stdout closes first, as with a real exit). */
  exit(exit: ProcessExit = { code: 0, signal: null }): void {
    if (this.#exit) return;
    this.#exit = exit;
    setImmediate(() => {
      this.#deliver();
      this.stdout.end();
    });
    setImmediate(() => this.#resolveExit(exit));
  }

  async stop(): Promise<void> {
    this.exit(this.stopExit);
    await this.exited;
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** A spawner handing out `agent` (and recording the spawn request). */
export function fakeSpawner(agent: FakeAgentProcess, requests: unknown[] = []): AgentSpawner {
  return async (request) => {
    requests.push(request);
    return agent;
  };
}

/** The usual handshake answers: initialize, then session/new with `sessionId`. */
export async function handshake(agent: FakeAgentProcess, sessionId = 'sess-1', agentCapabilities: Json = {}): Promise<{ initialize: Json; sessionNew: Json }> {
  const initialize = await agent.nextMethod('initialize');
  agent.respond(initialize, { protocolVersion: 1, agentCapabilities, authMethods: [] });
  const sessionNew = await agent.nextMethod('session/new');
  agent.respond(sessionNew, { sessionId });
  return { initialize, sessionNew };
}

export function update(sessionId: string, update: Json): Json {
  return { jsonrpc: '2.0', method: 'session/update', params: { sessionId, update } };
}

export const text = (sessionId: string, value: string): Json => update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: value } });

export const OPTIONS = [
  { optionId: 'always', name: 'Always', kind: 'allow_always' },
  { optionId: 'once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'no', name: 'Reject', kind: 'reject_once' },
];

export function permissionRequest(id: number | string, sessionId: string, toolCallId: string, extra: Json = {}): Json {
  return {
    jsonrpc: '2.0',
    id,
    method: 'session/request_permission',
    params: { sessionId, options: OPTIONS, toolCall: { toolCallId, title: 'touch x', kind: 'execute', rawInput: { command: 'touch x' }, ...extra } },
  };
}
