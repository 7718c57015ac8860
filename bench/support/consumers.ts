/**
 * The consumers of the side-by-side benchmark: each reads one agent turn from a stand-in agent
 * (stand-in-agent.mjs) in its own way and reports how long it took, from the moment it started
 * the agent (or read the file) to the turn's last message. Every consumer also returns how many
 * text deltas it saw, so a consumer that skipped work cannot look fast.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClaudeEngine } from '../../src/engines/claude/index.js';
import { acpEngine } from '../../src/engines/acp/index.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import type { AgentEngine, EngineContext } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';
import { createSession } from '../../src/session/create-session.js';
import type { SdkQuery } from './claude-agent-sdk.js';

export { STAND_IN } from './agent-streams.js';
import { STAND_IN } from './agent-streams.js';

export interface Run {
  ms: number;
  /** Text deltas seen (or, for the raw readers, lines of the turn parsed). */
  deltas: number;
}

export type Protocol = 'claude' | 'codex' | 'acp';

/** The stand-in under the name each engine looks for (`--version` answers by that name). */
export function standInBins(dir: string): Record<Protocol, string> {
  fs.mkdirSync(dir, { recursive: true });
  const bins = { claude: path.join(dir, 'claude.mjs'), codex: path.join(dir, 'codex.mjs'), acp: path.join(dir, 'acp.mjs') };
  for (const bin of Object.values(bins)) if (!fs.existsSync(bin)) fs.symlinkSync(STAND_IN, bin);
  return bins;
}

function realContext(): EngineContext {
  return {
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as { readonly id: number },
    clearTimeout: (h) => clearTimeout(h as unknown as NodeJS.Timeout),
  };
}

// ------------------------------------------------------------------ reading the bytes only

/** Read the stream file, split it into lines, `JSON.parse` each: no process at all. */
export function inProcess(streamPath: string): Run {
  const t0 = performance.now();
  const buf = fs.readFileSync(streamPath);
  let lines = 0;
  for (let start = 0, nl = buf.indexOf(10); nl !== -1; start = nl + 1, nl = buf.indexOf(10, start)) {
    JSON.parse(buf.toString('utf8', start, nl));
    lines++;
  }
  return { ms: performance.now() - t0, deltas: lines };
}

/** What a bare reader writes to start the turn, and how it knows the turn ended. */
const BARE: Record<Protocol, { requests: unknown[]; ends(message: { type?: unknown; method?: unknown; id?: unknown }): boolean }> = {
  claude: {
    requests: [
      { type: 'control_request', request_id: 'bare-1', request: { subtype: 'initialize' } },
      { type: 'user', session_id: '', message: { role: 'user', content: [{ type: 'text', text: 'go' }] }, parent_tool_use_id: null },
    ],
    ends: (m) => m.type === 'result',
  },
  codex: {
    requests: [
      { id: 1, method: 'initialize', params: { clientInfo: { name: 'bare', title: null, version: '0' } } },
      { method: 'initialized' },
      { id: 2, method: 'thread/start', params: { cwd: '/tmp' } },
      { id: 3, method: 'turn/start', params: { threadId: 't', input: [{ type: 'text', text: 'go', text_elements: [] }] } },
    ],
    ends: (m) => m.method === 'turn/completed',
  },
  acp: {
    requests: [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } },
      { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } },
      { jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'go' }] } },
    ],
    ends: (m) => m.id === 2 && m.method === undefined,
  },
};

/** Spawn the stand-in, write the turn's requests, split stdout and `JSON.parse` every line until the turn ends. */
export function bare(protocol: Protocol, bin: string, script: string): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin], { env: { ...process.env, STANDIN_SCRIPT: script }, stdio: ['pipe', 'pipe', 'inherit'] });
  const { requests, ends } = BARE[protocol];
  child.stdin.write(requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return new Promise((resolve, reject) => {
    let pending: Buffer[] = [];
    let lines = 0;
    let done = false;
    child.on('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      if (done) return;
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        let line: Buffer = chunk.subarray(start, nl);
        if (pending.length > 0) {
          line = Buffer.concat([...pending, line]);
          pending = [];
        }
        start = nl + 1;
        const message = JSON.parse(line.toString('utf8')) as { type?: unknown; method?: unknown; id?: unknown };
        lines++;
        if (ends(message)) {
          done = true;
          const ms = performance.now() - t0;
          child.stdin.end();
          child.once('exit', () => resolve({ ms, deltas: lines }));
          return;
        }
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    });
  });
}

// ------------------------------------------------------------------ the peer

/** The Claude Agent SDK's `query()` with partial messages, until its `result`. */
export async function sdk(query: SdkQuery, bin: string, script: string, workDir: string): Promise<Run> {
  const t0 = performance.now();
  let deltas = 0;
  const q = query({
    prompt: 'go',
    options: { pathToClaudeCodeExecutable: bin, includePartialMessages: true, cwd: workDir, env: { ...process.env, STANDIN_SCRIPT: script }, settingSources: [] },
  });
  let ms = NaN;
  for await (const message of q) {
    const m = message as { type: string; event?: { type?: string; delta?: { type?: string } } };
    if (m.type === 'stream_event' && m.event?.delta?.type === 'text_delta') deltas++;
    if (m.type === 'result') {
      ms = performance.now() - t0;
      break;
    }
  }
  return { ms, deltas };
}

// ------------------------------------------------------------------ this project

function engineFor(protocol: Protocol, bin: string, script: string): AgentEngine {
  const env = { STANDIN_SCRIPT: script };
  const context = { ...realContext(), bin };
  if (protocol === 'claude') return new ClaudeEngine(context, { env });
  if (protocol === 'codex') return codexEngine({ env }).create(context);
  return acpEngine({ command: process.execPath, args: [bin], env, home: 'inherit' }).create(realContext());
}

/** The engine alone: start → `ready` → send → `turn_complete`. */
export async function engineOnly(protocol: Protocol, bin: string, script: string, workDir: string): Promise<Run> {
  const t0 = performance.now();
  const engine = engineFor(protocol, bin, script);
  let deltas = 0;
  const ended = new Promise<number>((resolve) => {
    engine.onEvent((event: AgentEvent) => {
      if (event.type === 'text_delta') deltas++;
      else if (event.type === 'ready') void engine.send({ localId: 'l1', text: 'go' });
      else if (event.type === 'turn_complete') resolve(performance.now() - t0);
    });
  });
  await engine.start({ gen: 1, mode: 'remote', workDir, options: {} });
  const ms = await ended;
  await engine.stop();
  return { ms, deltas };
}

export interface SessionRunOptions {
  /** `MemoryStore` + `MemoryJournal` instead of the default FileStore + FileJournal. */
  memory?: boolean;
}

const AGENT: Record<Protocol, string> = { claude: 'claude', codex: 'codex', acp: 'acp' };

/** `createSession` → `send` → the `turn_complete` AgentEvent through `on('agent')`. */
export async function sessionRun(protocol: Protocol, bin: string, script: string, workDir: string, { memory = false }: SessionRunOptions = {}): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-bench-side-'));
  try {
    const t0 = performance.now();
    const engineOptions: Record<string, unknown> =
      protocol === 'acp' ? { command: process.execPath, args: [bin], env: { STANDIN_SCRIPT: script }, home: 'inherit' } : { env: { STANDIN_SCRIPT: script } };
    const session = await createSession({
      agent: AGENT[protocol],
      workDir,
      dataDir,
      ...(protocol !== 'acp' && { bin }),
      engineOptions,
      ...(memory && { store: new MemoryStore(), journal: new MemoryJournal() }),
    });
    let deltas = 0;
    const ended = new Promise<number>((resolve) => {
      session.on('agent', (notice) => {
        if (notice.event.type === 'text_delta') deltas++;
        else if (notice.event.type === 'turn_complete') resolve(performance.now() - t0);
      });
    });
    void session.send('go');
    const ms = await ended;
    await session.stop();
    return { ms, deltas };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ start-up

/** The stand-in's own start: spawn → the `initialize` answer read back. */
export function standInInitialize(bin: string, script: string): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin], { env: { ...process.env, STANDIN_SCRIPT: script }, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.write(JSON.stringify({ type: 'control_request', request_id: 'i-1', request: { subtype: 'initialize' } }) + '\n');
  return new Promise((resolve) => {
    let ms = NaN;
    child.stdout.once('data', () => {
      ms = performance.now() - t0;
      child.stdin.end();
    });
    child.once('exit', () => resolve(ms));
  });
}

/** `createSession` → the engine's `ready` (the claude engine's `initialize` answered). */
export async function sessionReady(bin: string, script: string, workDir: string): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-bench-ready-'));
  try {
    const t0 = performance.now();
    let ready = NaN;
    const session = await createSession({
      agent: 'claude',
      workDir,
      dataDir,
      bin,
      engineOptions: { env: { STANDIN_SCRIPT: script } },
      onNotice: (notice) => {
        if (notice.type === 'agent' && notice.event.type === 'ready' && Number.isNaN(ready)) ready = performance.now() - t0;
      },
    });
    if (Number.isNaN(ready)) await session.waitFor('agent', (n) => n.event.type === 'ready', { timeoutMs: 30_000 });
    await session.stop();
    return ready;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
