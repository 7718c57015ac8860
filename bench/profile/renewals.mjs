// The lease renewals of N idle sessions on the default FileStore, alone: one renewal every
// ttl/3/N ms (the pattern of N runtimes renewing every third of a 30 s ttl), and the process's own
// CPU over the window (issue 24: idle cost). Runs against a build (ASE_DIST, default dist/), so the
// same script measures main's per-session locked renewal and the owner heartbeat side by side.
// ASE_RENEWALS_BASELINE=1 runs the same loop without renewing (the script's own timers).
//   node bench/profile/renewals.mjs [sessions=100] [seconds=10] [ttlMs=30000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dist = process.env.ASE_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { FileStore } = await import(`${dist}/index.js`);
const [sessions = '100', seconds = '10', ttl = '30000'] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-renewals-'));
try {
  const store = new FileStore({ dir });
  const ttlMs = Number(ttl);
  const leases = await Promise.all(Array.from({ length: Number(sessions) }, (_, i) => store.acquire(`s${i}`, { ttlMs })));
  const gap = ttlMs / 3 / leases.length;
  const before = process.cpuUsage();
  const t0 = performance.now();
  let renewed = 0;
  const pending = [];
  for (let i = 0; performance.now() - t0 < Number(seconds) * 1000; i++) {
    const k = i % leases.length;
    if (process.env.ASE_RENEWALS_BASELINE) renewed++;
    else pending.push(store.renew(leases[k]).then((lease) => ((leases[k] = lease), renewed++)));
    await new Promise((resolve) => setTimeout(resolve, gap));
  }
  await Promise.all(pending);
  const used = process.cpuUsage(before);
  const wall = performance.now() - t0;
  const ms = (used.user + used.system) / 1000;
  console.log(
    `${sessions} leases, ttl ${ttlMs} ms: ${renewed} renewals in ${(wall / 1000).toFixed(1)} s, CPU ${((ms / wall) * 100).toFixed(2)}% of a core (${(ms / renewed).toFixed(3)} ms per renewal, timers included); load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
  await Promise.all(leases.map((lease) => store.release(lease)));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
