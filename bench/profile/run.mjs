// Profiles one consumer of the side-by-side benchmark's Claude turn under `node --cpu-prof`
// (issue 11: profile first). Runs against the build (`npm run build` first) and the stand-in agent.
//
//   [ASE_DIST=<other build>] node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/run.mjs <engine|session|memory> [lines] [repeated|dense]
//   node bench/profile/top.mjs /tmp/prof/*.cpuprofile
import fs from 'node:fs';
import path from 'node:path';
import { claudeDenseTurn, claudeTurn, standInDir } from '../support/agent-streams.ts';
import { engineTurn } from '../support/engine-turn.ts';
// ASE_DIST: another build to profile (e.g. a worktree of the commit before a change), default ./dist.
const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { createSession, MemoryJournal, MemoryStore } = await import(`${dist}/index.js`);
const { ClaudeEngine } = await import(`${dist}/claude.js`);

const [consumer = 'session', lines = '50000', repeated] = process.argv.slice(2);
const { dir, workDir, bin, env } = standInDir('ase-profile-', 'claude.mjs', (repeated === 'dense' ? claudeDenseTurn({ lines: Number(lines) }) : claudeTurn({ lines: Number(lines), repeatedIds: repeated === 'repeated' })), { protocol: 'claude' });

async function engineRun() {
  const stop = await engineTurn(new ClaudeEngine({ now: () => Date.now(), setTimeout, clearTimeout, bin }, { env }), workDir);
  await stop();
}

async function sessionRun(memory) {
  const dataDir = fs.mkdtempSync(path.join(dir, 'data-'));
  const session = await createSession({ agent: 'claude', workDir, dataDir, bin, engineOptions: { env }, ...(memory && { store: new MemoryStore(), journal: new MemoryJournal() }) });
  const ended = new Promise((resolve) => session.on('agent', (n) => n.event.type === 'turn_complete' && resolve()));
  void session.send('go');
  await ended;
  await session.stop();
}

const run = consumer === 'engine' ? engineRun : () => sessionRun(consumer === 'memory');
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  await run();
  console.log(`${consumer} run ${i + 1}: ${(performance.now() - t0).toFixed(0)} ms`);
}
fs.rmSync(dir, { recursive: true, force: true });
