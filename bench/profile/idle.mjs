// Profiles a host of N awake idle claude sessions (the stand-in CLI, one turn each) over a quiet
// window: what the host spends its CPU on while every session waits for a person (issue 24). Runs
// against the build (`npm run build` first). Prints the host's own CPU over the window, the
// descendant tick's counters and the load average; writes the window's .cpuprofile.
//   node bench/profile/idle.mjs [sessions=100] [seconds=15] [extra sleeping processes=0] [out=/tmp/idle.cpuprofile]
//   node bench/profile/top.mjs /tmp/idle.cpuprofile
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { createSupervisor } = await import(`${dist}/index.js`);
const { claudeEngine } = await import(`${dist}/claude.js`);
const [sessions = '100', seconds = '15', extra = '0', out = '/tmp/idle.cpuprofile'] = process.argv.slice(2);
const STAND_IN = fileURLToPath(new URL('../../test/support/claude-stand-in.mjs', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-idle-profile-'));
const bin = path.join(dir, 'claude');
fs.writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`);
fs.chmodSync(bin, 0o755);
const { hostScan } = await import(`${dist}/engines/transport/descendant-scan.js`);
// ASE_LEASE_TTL_MS: the sessions' lease (renewed every third of it), to tell its cost from the rest.
const leaseTtlMs = process.env.ASE_LEASE_TTL_MS ? Number(process.env.ASE_LEASE_TTL_MS) : undefined;
const supervisor = createSupervisor({ dataDir: path.join(dir, 'data'), engines: [claudeEngine()], defaults: { bin, engineOptions: { env: { STANDIN: '' } } }, ...(leaseTtlMs && { leaseTtlMs }) });
let sleepers;
try {
  for (let open = 0; open < Number(sessions); ) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, Number(sessions) - open) }, () => supervisor.create({ agent: 'claude', workDir: dir })));
    await Promise.all(batch.map((s) => s.run('hello')));
    open += batch.length;
  }
  if (Number(extra) > 0) {
    sleepers = spawn('sh', ['-c', `i=0; while [ $i -lt ${extra} ]; do sleep 3600 & i=$((i+1)); done; echo started; wait`], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => sleepers.stdout.on('data', (c) => String(c).includes('started') && resolve()));
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // First a window without the profiler (its sampling costs CPU of its own), then the profiled one.
  const counts = { ...hostScan.counts };
  const plain = process.cpuUsage();
  const p0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000));
  const plainUsed = process.cpuUsage(plain);
  console.log(`tick: ${Object.entries(hostScan.counts).map(([k, v]) => `${k} ${v - counts[k]}`).join(', ')}`);
  console.log(`unprofiled: host CPU ${(((plainUsed.user + plainUsed.system) / 1000 / (performance.now() - p0)) * 100).toFixed(2)}% of a core (user ${(plainUsed.user / 1000).toFixed(0)} ms, system ${(plainUsed.system / 1000).toFixed(0)} ms)`);
  const inspector = new Inspector();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 1000 });
  await inspector.post('Profiler.start');
  const before = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000));
  const used = process.cpuUsage(before);
  const wall = performance.now() - t0;
  const { profile } = await inspector.post('Profiler.stop');
  fs.writeFileSync(out, JSON.stringify(profile));
  console.log(`${sessions} sessions, +${extra} processes: host CPU ${(((used.user + used.system) / 1000 / wall) * 100).toFixed(2)}% of a core over ${(wall / 1000).toFixed(1)} s (user ${(used.user / 1000).toFixed(0)} ms, system ${(used.system / 1000).toFixed(0)} ms); load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; profile ${out}`);
} finally {
  if (sleepers) process.kill(-sleepers.pid, 'SIGKILL');
  await supervisor.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
}
