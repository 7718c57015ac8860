/**
 * 7. `ase serve`: fan-out of one session's event stream to 100 clients while 50 other sessions are
 * busy (each streaming to a client of its own), and what a connected client costs the server.
 * Clients run in a child process, so the server's heap and event loop are measured alone; a frame's
 * latency is from the engine emitting the event (its text carries the epoch time) to the client
 * having parsed the frame: actor, runtime, journal (FileJournal: datasync per entry for durable
 * frames), the hub, the HTTP stream over loopback, and the client's parser.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { FakeEngine, MemoryStore, type AgentEventBody, type EngineFactory } from '../src/index.js';
import { startServer } from '../src/server.js';
import { latency, settledHeapUsed } from './support/measure.js';
import { bytes, count, ms, writeSection, type Row } from './support/report.js';

const CLIENTS = 100;
const BUSY = 50;
const ROUNDS = 200;
const ROUND_MS = 20;
const CLIENT_SCRIPT = fileURLToPath(new URL('./support/sse-load-clients.mjs', import.meta.url));

const stamp = () => `T:${performance.timeOrigin + performance.now()}`;
const sleep = (delay: number) => new Promise((r) => setTimeout(r, delay));

describe('ase serve fan-out', () => {
  it('100 clients on one session, 50 busy sessions', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-bench-serve-'));
    const engines: FakeEngine[] = [];
    const factory: EngineFactory = { name: 'fake', capabilities: FakeEngine.capabilities, create: (c) => { const e = new FakeEngine(c, { manual: true }); engines.push(e); return e; } };
    const server = await startServer({ port: 0, dataDir: tmp, store: new MemoryStore(), engines: [factory], presenceGraceMs: 60_000 });
    const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const post = async (route: string, body: unknown) => {
      const r = await fetch(`${server.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${route}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<Record<string, unknown>>;
    };
    // One session, its engine ready and a turn running (so output events are accepted).
    const startOne = async (): Promise<{ id: string; engine: FakeEngine }> => {
      const before = engines.length;
      const { sessionId } = await post('/api/sessions', { agent: 'fake', workDir: tmp });
      while (engines.length === before) await sleep(1);
      const engine = engines.at(-1)!;
      for (let i = 0; ; i++) {
        try {
          engine.inject({ type: 'ready' });
          break;
        } catch (error) {
          if (i > 200) throw error;
          await sleep(1);
        }
      }
      await post(`/api/sessions/${sessionId as string}/messages`, { text: 'go', localId: 'go' });
      return { id: sessionId as string, engine };
    };
    const target = await startOne();
    const busy = [];
    for (let i = 0; i < BUSY; i++) busy.push(await startOne());

    const heapBefore = await settledHeapUsed();
    const rssBefore = process.memoryUsage().rss;
    const child = spawn(process.execPath, [CLIENT_SCRIPT, JSON.stringify({ url: server.url, token: server.token, streams: [{ sessionId: target.id, clients: CLIENTS, measure: true }, ...busy.map((b) => ({ sessionId: b.id, clients: 1, measure: false }))] })], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
    expect(await nextLine()).toBe('ready');
    await sleep(200);
    const heapAfter = await settledHeapUsed();
    const rssAfter = process.memoryUsage().rss;
    const streams = CLIENTS + BUSY;

    // The load: every round, a delta and (every other round) a message on each loaded session.
    const runLoad = async (loaded: FakeEngine[]) => {
      let messages = 0;
      const started = performance.now();
      for (let round = 0; round < ROUNDS; round++) {
        for (const engine of loaded) {
          engine.inject({ type: 'text_delta', messageId: `m${round}`, text: stamp() } as AgentEventBody);
          if (round % 2 === 0) engine.inject({ type: 'message', role: 'assistant', id: `m${round}`, blocks: [{ type: 'text', text: stamp() }] } as AgentEventBody);
        }
        if (round % 2 === 0) messages++;
        await sleep(ROUND_MS);
      }
      const loadMs = performance.now() - started;
      await sleep(1500);
      child.stdin!.write('report\n');
      const report = JSON.parse(await nextLine()) as { ephemeral: number[]; durable: number[]; frames: number };
      expect(report.ephemeral.length).toBe(ROUNDS * CLIENTS);
      expect(report.durable.length).toBe(messages * CLIENTS);
      return { report, loadMs };
    };
    const alone = await runLoad([target.engine]);
    const { report, loadMs } = await runLoad([target.engine, ...busy.map((b) => b.engine)]);
    child.stdin!.write('exit\n');
    await new Promise((r) => child.once('exit', r));
    await server.close();
    await fs.rm(tmp, { recursive: true, force: true });

    const eph = latency(report.ephemeral);
    const dur = latency(report.durable);
    const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(0.99 * samples.length) - 1]!;
    const quiet = (samples: number[]) => `p50 ${ms(latency(samples).p50)}, p99 ${ms(p99(samples))}`;
    const rows: Row[] = [
      {
        measurement: `${CLIENTS} clients of one session, the other ${BUSY} sessions quiet: text_delta / message entry`,
        result: `${quiet(alone.report.ephemeral)} / ${quiet(alone.report.durable)}`,
        meaning: 'The fan-out alone: one event reaches a hundred browsers in about this time.',
      },
      {
        measurement: `Ephemeral frame (text_delta) to ${CLIENTS} clients of one session, ${BUSY} other sessions streaming`,
        result: `p50 ${ms(eph.p50)}, p99 ${ms(p99(report.ephemeral))}, max ${ms(eph.max)} (${count(eph.count)} deliveries)`,
        meaning: 'From the engine emitting a delta to every phone or browser having it: far below what a reader notices.',
      },
      {
        measurement: `Durable frame (message entry, id = seq) to ${CLIENTS} clients, same load`,
        result: `p50 ${ms(dur.p50)}, p99 ${ms(p99(report.durable))}, max ${ms(dur.max)} (${count(dur.count)} deliveries)`,
        meaning: 'Includes the journal append and its datasync: a client only sees an entry once it is durable, so a reconnect can never lose it.',
      },
      {
        measurement: `Frames the clients received during the ${ROUNDS}-round load`,
        result: `${count(report.frames)} in ${ms(loadMs)} (${count((report.frames / loadMs) * 1000)}/s; planned ${ms(ROUNDS * ROUND_MS)})`,
        meaning: `Every frame of ${streams} streams (heartbeats, status, inspector off) over loopback HTTP.`,
      },
      {
        measurement: `Server heap per connected client (${streams} streams, after a full GC)`,
        result: `${bytes((heapAfter - heapBefore) / streams)} (RSS ${bytes((rssAfter - rssBefore) / streams)})`,
        meaning: 'What an idle open event stream costs the server: thousands of clients fit in a small heap.',
      },
    ];
    writeSection(inject('benchResultsDir'), {
      id: 'server',
      order: 8,
      title: '8. `ase serve`: event-stream fan-out',
      method:
        `One server (\`startServer\`, FileJournal in a temp dir, MemoryStore), ${1 + BUSY} sessions on manual fake engines, each ready with a turn running. ` +
        `A child process opens ${CLIENTS} event streams on one session and one on each of the ${BUSY} others. Twice, every ${ROUND_MS} ms for ${ROUNDS} rounds ` +
        '(first only the observed session, then all of them), each loaded session\'s engine emits a `text_delta` and, every other round, an assistant `message` (a journaled entry), carrying the epoch time. ' +
        'Latency is measured in the client process when it has parsed the frame. Memory is the server process\'s heap after a full GC before and after the streams connected.',
      rows,
    });
  }, 120_000);
});
