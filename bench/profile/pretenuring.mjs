// Where V8 allocates an engine's AgentEvents: how many of each type were born in the old generation
// (V8's allocation-site pretenuring: it allocates a site's objects there for good once it judged
// them long-lived) in the last of N dense Claude turns, per consumer, each in a process of its own.
// An event seen by the session's listener is the engine's own object, checked right where it was
// made (the engine emits synchronously), so "old at birth" means its allocation site is tenured.
// A session's events should be born young as its engine's are (docs/performance-notes.md 13, pass 8); the last
// columns say what each scavenge of the last turn copied out of the young generation (pass 9).
// CHUNK=<bytes> makes the stand-in write the turn slowly, that many bytes per timer tick (then the
// output mostly comes one event at a time: try 20000 lines, CHUNK=400).
//   npm run build && [CHUNK=<bytes>] [ASE_THIS=<another build>/dist] node bench/profile/pretenuring.mjs [lines] [turns] [engine,session,memory,inspected]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

const [lines = '50000', turns = '3', kinds = 'engine,session,memory', child] = process.argv.slice(2);

if (child !== '--child') {
  console.log(`| consumer | events in the last turn | born in the old generation | scavenges in the last turn | promoted per scavenge, median | scavenge pause, median |\n|---|---:|---|---:|---:|---:|`);
  for (const each of kinds.split(',')) {
    // A fresh process each: the decisions are the process's for good. --trace-gc-nvp prints a line per collection.
    const out = execFileSync(process.execPath, ['--trace-gc-nvp', new URL(import.meta.url).pathname, lines, turns, each, '--child'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
    const printed = out.trim().split('\n');
    // The child's result is its last JSON line (a collection may still print after it).
    const { total, old } = JSON.parse(printed.findLast((line) => line.startsWith('{')));
    const byType = Object.entries(old).map(([type, n]) => `${type} ${n}`).join(', ') || 'none';
    // What a young-generation collection copied out of it, in the last turn: objects that survived it twice or were kept alive from the old generation.
    const scavenges = printed.slice(printed.lastIndexOf('LAST TURN')).filter((line) => / gc=s /.test(line));
    const field = (line, name) => Number(new RegExp(` ${name}=([0-9.]+)`).exec(line)?.[1] ?? NaN);
    const median = (values) => values.sort((a, b) => a - b)[values.length >> 1] ?? NaN;
    const promoted = median(scavenges.map((line) => field(line, 'promoted')));
    const pause = median(scavenges.map((line) => field(line, 'pause')));
    console.log(`| ${each} | ${total} | ${byType} | ${scavenges.length} | ${(promoted / 1024).toFixed(0)} KB | ${pause.toFixed(1)} ms |`);
  }
} else {
  const kind = kinds; // a child measures one consumer
  // The one V8 intrinsic that says where an object lives; parsed only once the flag is on.
  v8.setFlagsFromString('--allow-natives-syntax');
  const isYoung = new Function('o', 'return %InYoungGeneration(o)');
  const { claudeDenseTurn, standInDir } = await import('../support/agent-streams.ts');
  const { engineTurn } = await import('../support/engine-turn.ts');
  const dist = process.env.ASE_THIS ?? new URL('../../dist', import.meta.url).pathname;
  const lib = await import(`${dist}/index.js`);
  const { ClaudeEngine } = await import(`${dist}/claude.js`);
  const { dir, workDir, bin, env: standInEnv } = standInDir('ase-pretenuring-', 'claude.mjs', claudeDenseTurn({ lines: Number(lines) }), { protocol: 'claude' });
  const env = { ...standInEnv, ...(process.env.CHUNK && { STANDIN_CHUNK: process.env.CHUNK }) };
  let total = 0;
  let old = {};
  const look = (event) => {
    total++;
    if (!isYoung(event)) old[event.type] = (old[event.type] ?? 0) + 1;
  };
  for (let turn = 0; turn < Number(turns); turn++) {
    total = 0;
    old = {};
    if (turn === Number(turns) - 1) console.log('LAST TURN');
    if (kind === 'engine') {
      const stop = await engineTurn(new ClaudeEngine({ now: () => Date.now(), setTimeout, clearTimeout, bin }, { env }), workDir, look);
      await stop();
    } else {
      const memory = kind === 'memory';
      // `inspected`: with an inspect hook that keeps the last KEEP (default 1,000) inspection events raw, as `ase serve`'s hub does for inspectors that join later.
      const kept = [];
      const keep = Number(process.env.KEEP ?? 1_000);
      const inspect = (event) => void (kept.push(event) > keep && kept.shift());
      const s = await lib.createSession({ agent: 'claude', workDir, dataDir: path.join(dir, `data-${turn}`), bin, engineOptions: { env }, ...(memory && { store: new lib.MemoryStore(), journal: new lib.MemoryJournal() }), ...(kind === 'inspected' && { inspect }) });
      const ended = new Promise((resolve) =>
        s.on('agent', ({ event }) => {
          look(event);
          if (event.type === 'turn_complete') resolve();
        }),
      );
      void s.send('go');
      await ended;
      await s.stop();
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ total, old }));
}
