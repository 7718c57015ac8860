// CPU time (process.cpuUsage: user + system of this process, the consumer) and wall time per turn
// of the side-by-side benchmark's Codex app-server and ACP streams (issue 24): a bare read (spawn,
// split, parse), the engine alone, and the session with the default store and journal (`session`)
// and with MemoryStore + MemoryJournal (`memory`). With ASE_DIST set it measures another build too, interleaved with this one (before/after a change).
// With `profile` as the consumer it runs that one consumer 3 times, for `node --cpu-prof`.
//   npm run build && [ASE_DIST=<other build>/dist] node bench/profile/json-rpc-engines.mjs <codex|acp> [lines] [rounds]
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/json-rpc-engines.mjs <codex|acp> [lines] 0 <engine|session>
//   node bench/profile/top.mjs /tmp/prof/*.cpuprofile
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACP_ANSWERS, acpTurn, CODEX_ANSWERS, codexTurn, writeScript } from '../support/agent-streams.ts';
import { engineTurn } from '../support/engine-turn.ts';

const [protocol = 'acp', lines = '50000', rounds = '5', only] = process.argv.slice(2);
const builds = { this: process.env.ASE_THIS ?? new URL('../../dist', import.meta.url).pathname, ...(process.env.ASE_DIST && { other: process.env.ASE_DIST }) };
const STAND_IN = fileURLToPath(new URL('../support/stand-in-agent.mjs', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-json-rpc-cpu-'));
const workDir = path.join(dir, 'work');
fs.mkdirSync(workDir);
const bin = path.join(dir, `${protocol}.mjs`);
fs.symlinkSync(STAND_IN, bin);
const script =
  protocol === 'codex'
    ? writeScript(dir, 'codex', codexTurn({ lines: Number(lines) }), { protocol: 'jsonrpc', answers: CODEX_ANSWERS, trigger: 'turn/start' })
    : writeScript(dir, 'acp', acpTurn({ lines: Number(lines) }), { protocol: 'jsonrpc', answers: ACP_ANSWERS, trigger: 'session/prompt', answerTriggerLast: true, jsonrpc2: true });
const env = { STANDIN_SCRIPT: script };
const context = { now: () => Date.now(), setTimeout, clearTimeout };
// What the bare reader writes, and how it knows the turn ended (bench/support/consumers.ts's BARE).
const BARE = {
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
}[protocol];
let n = 0;

async function consumers(dist) {
  const lib = await import(`${dist}/index.js`);
  const engines = protocol === 'codex' ? await import(`${dist}/codex.js`) : await import(`${dist}/acp.js`);
  const engineOptions = protocol === 'acp' ? { command: process.execPath, args: [bin], env, home: 'inherit' } : { env };
  const sessions = sessionConsumers(lib, engineOptions);
  const newEngine = () => (protocol === 'codex' ? engines.codexEngine(engineOptions).create({ ...context, bin }) : engines.acpEngine(engineOptions).create(context));
  return {
    bare: async () => {
      const child = spawn(process.execPath, [bin], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
      child.stdin.write(BARE.requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
      await new Promise((resolve) => {
        let pending = [];
        child.stdout.on('data', (chunk) => {
          let start = 0;
          for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
            let line = chunk.subarray(start, nl);
            if (pending.length > 0) {
              line = Buffer.concat([...pending, line]);
              pending = [];
            }
            start = nl + 1;
            if (BARE.ends(JSON.parse(line.toString('utf8')))) resolve();
          }
          if (start < chunk.length) pending.push(chunk.subarray(start));
        });
      });
      return async () => {
        child.stdin.end();
        await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      };
    },
    engine: async () => {
      let deltas = 0;
      const stop = await engineTurn(newEngine(), workDir, (e) => void (e.type === 'text_delta' && deltas++));
      if (deltas === 0) throw new Error('the engine saw no text delta');
      return stop;
    },
    ...sessions,
  };
}

/** The default session (FileStore + FileJournal), and with `memory` the same on MemoryStore + MemoryJournal. */
function sessionConsumers(lib, engineOptions) {
  const session = (memory) => async () => {
    const dataDir = path.join(dir, `data-${n++}`);
    const s = await lib.createSession({ agent: protocol, workDir, dataDir, ...(protocol === 'codex' && { bin }), engineOptions, ...(memory && { store: new lib.MemoryStore(), journal: new lib.MemoryJournal() }) });
    const ended = new Promise((resolve) => s.on('agent', (notice) => notice.event.type === 'turn_complete' && resolve()));
    void s.send('go');
    await ended;
    return async () => {
      await s.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  };
  return { session: session(false), memory: session(true) };
}

const sets = Object.fromEntries(await Promise.all(Object.entries(builds).map(async ([name, dist]) => [name, await consumers(dist)])));
if (only) {
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const stop = await sets.this[only]();
    console.log(`${protocol} ${only} run ${i + 1}: ${(performance.now() - t0).toFixed(0)} ms`);
    await stop();
  }
} else {
  const results = {};
  const WARMUP = Number(process.env.WARMUP ?? 1);
  // WARMUP=<n> warm-up rounds (default 1): a Claude session's code takes ~9 dense turns to settle in a process of its own, its engine ~3 (docs/performance-notes.md 13, pass 6).
  for (let round = 0; round < Number(rounds) + WARMUP; round++) {
    // CONSUMERS=session measures only those (one per process, from a shell loop: each from its own heap; cpu.mjs does the same).
    for (const kind of process.env.CONSUMERS ? process.env.CONSUMERS.split(',') : ['bare', 'engine', 'memory', 'session']) {
      // The build that runs first in a round alternates: the first of a pair measured slower.
      const order = Object.entries(sets);
      if (round % 2 === 1) order.reverse();
      for (const [build, set] of order) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const stop = await set[kind]();
        const wall = performance.now() - t0;
        const { user, system } = process.cpuUsage(c0);
        await stop();
        // VERBOSE=1 prints every turn, warm-up included (how a process settles).
        if (process.env.VERBOSE) console.error(`${kind} ${build} round ${round}: ${((user + system) / 1000).toFixed(0)} ms CPU, ${wall.toFixed(0)} ms wall`);
        if (round < WARMUP) continue; // warm-up
        (results[`${kind} ${build}`] ??= []).push({ cpu: (user + system) / 1000, wall });
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const bare = results['bare this'] ?? [];
  const bareCpu = median(bare.map((r) => r.cpu));
  const bareWall = median(bare.map((r) => r.wall));
  console.log(`${protocol}, ${lines} lines, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`| consumer | build | CPU ms (median of ${rounds}) | × bare CPU | wall ms (median) | × bare wall |\n|---|---|---:|---:|---:|---:|`);
  for (const [key, runs] of Object.entries(results)) {
    const [kind, build] = key.split(' ');
    const cpu = median(runs.map((r) => r.cpu));
    const wall = median(runs.map((r) => r.wall));
    console.log(`| ${kind} | ${build} | ${cpu.toFixed(0)} | ${(cpu / bareCpu).toFixed(2)} | ${wall.toFixed(0)} | ${(wall / bareWall).toFixed(2)} |`);
  }
}
fs.rmSync(dir, { recursive: true, force: true });
