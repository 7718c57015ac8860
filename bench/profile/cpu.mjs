// CPU time (process.cpuUsage: user + system of this process, the consumer) per Claude turn of the
// side-by-side stream, for a bare read (spawn, split, parse), the Claude Agent SDK's `query()` (when
// it can be installed: bench/support/claude-agent-sdk.ts), the engine alone and the session with the
// default and the in-memory store and journal: a measure that a loaded machine inflates far less than wall time. With
// ASE_DIST set it measures another build too, interleaved with this one (before/after a change).
//   npm run build && [ASE_DIST=<other build>/dist] [ASE_THIS=<a build to measure instead of this tree's dist>] node bench/profile/cpu.mjs [lines] [rounds] [repeated|dense]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { claudeDenseTurn, claudeTurn, standInDir } from '../support/agent-streams.ts';
import { loadClaudeAgentSdk } from '../support/claude-agent-sdk.ts';
import { engineTurn } from '../support/engine-turn.ts';

const [lines = '50000', rounds = '3', repeated] = process.argv.slice(2);
const builds = { this: process.env.ASE_THIS ?? new URL('../../dist', import.meta.url).pathname, ...(process.env.ASE_DIST && { other: process.env.ASE_DIST }) };
const { dir, workDir, bin, env } = standInDir('ase-cpu-', 'claude.mjs', (repeated === 'dense' ? claudeDenseTurn({ lines: Number(lines) }) : claudeTurn({ lines: Number(lines), repeatedIds: repeated === 'repeated' })), { protocol: 'claude' });
let n = 0;
const sdk = await loadClaudeAgentSdk();
if (!sdk.ok) console.error(`Claude Agent SDK not measured: ${sdk.reason}`);

async function consumers(dist) {
  const lib = await import(`${dist}/index.js`);
  const { ClaudeEngine } = await import(`${dist}/claude.js`);
  const session = (memory) => async () => {
    const dataDir = path.join(dir, `data-${n++}`);
    const s = await lib.createSession({ agent: 'claude', workDir, dataDir, bin, engineOptions: { env }, ...(memory && { store: new lib.MemoryStore(), journal: new lib.MemoryJournal() }) });
    const ended = new Promise((resolve) => s.on('agent', (notice) => notice.event.type === 'turn_complete' && resolve()));
    void s.send('go');
    await ended;
    return () => s.stop();
  };
  return {
    // The reference: spawn the stand-in, split stdout, JSON.parse every line (bench/support/consumers.ts's bare()).
    bare: async () => {
      const child = spawn(process.execPath, [bin], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
      child.stdin.write(`${JSON.stringify({ type: 'control_request', request_id: 'bare-1', request: { subtype: 'initialize' } })}\n${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: [{ type: 'text', text: 'go' }] }, parent_tool_use_id: null })}\n`);
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
            if (JSON.parse(line.toString('utf8')).type === 'result') resolve();
          }
          if (start < chunk.length) pending.push(chunk.subarray(start));
        });
      });
      return async () => {
        child.stdin.end();
        await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      };
    },
    engine: () => engineTurn(new ClaudeEngine({ now: () => Date.now(), setTimeout, clearTimeout, bin }, { env }), workDir),
    // The peer (the same for every build; measured with this one): its query() with partial messages, until `result`.
    ...(sdk.ok && dist === builds.this && {
      sdk: async () => {
        const q = sdk.query({ prompt: 'go', options: { pathToClaudeCodeExecutable: bin, includePartialMessages: true, cwd: workDir, env: { ...process.env, ...env }, settingSources: [] } });
        for await (const message of q) if (message.type === 'result') break;
        return async () => undefined;
      },
    }),
    session: session(false),
    memory: session(true),
  };
}

const sets = Object.fromEntries(await Promise.all(Object.entries(builds).map(async ([name, dist]) => [name, await consumers(dist)])));
// CONSUMERS=engine,session measures only those (e.g. one per process, from a shell loop: each then
// starts from its own heap instead of the one the consumer before it left).
const KINDS = process.env.CONSUMERS ? process.env.CONSUMERS.split(',') : ['bare', 'sdk', 'engine', 'session', 'memory'];
const results = {};
const WARMUP = Number(process.env.WARMUP ?? 1);
// WARMUP=<n> warm-up rounds (default 1): a Claude session's code takes ~9 dense turns to settle in a process of its own, its engine ~3 (docs/performance-notes.md 13, pass 6).
for (let round = 0; round < Number(rounds) + WARMUP; round++) {
  for (const kind of KINDS) {
    // Which build goes first alternates by round: the first of a pair measured ~10% slower.
    const order = Object.entries(sets);
    if (round % 2 === 1) order.reverse();
    for (const [build, set] of order) {
      if (!set[kind]) continue;
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
console.log(`| consumer | build | CPU ms (median of ${rounds}) | wall ms (median) |\n|---|---|---:|---:|`);
for (const [key, runs] of Object.entries(results)) {
  const [kind, build] = key.split(' ');
  console.log(`| ${kind} | ${build} | ${median(runs.map((r) => r.cpu)).toFixed(0)} | ${median(runs.map((r) => r.wall)).toFixed(0)} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
