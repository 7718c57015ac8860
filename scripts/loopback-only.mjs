#!/usr/bin/env node
// Usage: node scripts/loopback-only.mjs <cmd> [args...]
//
// Runs <cmd> inside a fresh network namespace where only loopback is up
// (`unshare -n sh -c 'ip link set lo up && exec "$@"' sh <cmd> <args...>`), so nothing in it —
// the test process, the mock API and the CLI under test — can reach anything but 127.0.0.1.
// When `unshare -n` is not permitted here (probed once, with `ip link set lo up` inside), runs <cmd>
// directly and prints one line to stderr saying the guard is unavailable.
// stdio is inherited; the exit code is forwarded, signals are forwarded to the child and a
// child killed by a signal makes this process die of the same signal.
import { spawn, spawnSync } from 'node:child_process';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  process.stderr.write('usage: node scripts/loopback-only.mjs <cmd> [args...]\n');
  process.exit(2);
}

// The probe also brings loopback up, so a machine without `ip` falls back instead of failing.
const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
const guarded = probe.status === 0;

let child;
if (guarded) {
  child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', cmd, ...args], { stdio: 'inherit' });
} else {
  const why = probe.error ? probe.error.message : `exit ${probe.status ?? probe.signal}`;
  process.stderr.write(`loopback-only: network guard unavailable (unshare -n: ${why}); running without it\n`);
  child = spawn(cmd, args, { stdio: 'inherit' });
}

const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.on('error', (error) => {
  process.stderr.write(`loopback-only: failed to start ${cmd}: ${error.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  for (const s of forwarded) process.off(s, forward);
  if (signal) {
    process.kill(process.pid, signal);
    // if the signal is ignored/handled somehow, still exit non-zero
    setTimeout(() => process.exit(128 + 1), 100).unref();
    return;
  }
  process.exit(code ?? 1);
});
