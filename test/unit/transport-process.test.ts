import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { registerHooks } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import { buildEnv, DEFAULT_ENV_ALLOW } from '../../src/engines/transport/env.js';
import { spawnSupervised, type SupervisedProcess } from '../../src/engines/transport/process-supervisor.js';
import { StderrTail } from '../../src/engines/transport/stderr-tail.js';
import { TREE_TAG_VAR } from '../../src/engines/transport/tree-tag.js';
import { isAlive } from '../support/processes.js';

const linux = process.platform === 'linux';
const env = buildEnv();
const shutdown = { stdinGraceMs: 200, termGraceMs: 200 };
const started: SupervisedProcess[] = [];
const strays: number[] = [];

function sh(script: string, extra: Partial<Parameters<typeof spawnSupervised>[0]> = {}) {
  return spawnSupervised({ file: 'sh', args: ['-c', script], cwd: tmpdir(), env, shutdown, ...extra }).then((p) => {
    started.push(p);
    return p;
  });
}

/** Resolves with the first `n` stdout lines. */
async function readLines(p: SupervisedProcess, n: number): Promise<string[]> {
  let buffered = '';
  for await (const chunk of p.stdout) {
    buffered += (chunk as Buffer).toString();
    const lines = buffered.split('\n');
    if (lines.length > n) return lines.slice(0, n);
  }
  return buffered.split('\n').slice(0, n);
}

/** Alive = /proc/<pid> exists and is not a zombie. */

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

describe('spawnSupervised stop ladder', () => {
  it('(a) a child that exits on stdin EOF stops on the first rung with code 0', async () => {
    const p = await sh('cat >/dev/null; exit 0');
    const result = await p.stop();
    expect(result.rung).toBe('stdin');
    expect(result.exit).toEqual({ code: 0, signal: null });
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(p.stop()).toBe(p.stop()); // idempotent
  });

  it('(b) a child that ignores EOF and traps TERM is ended by the SIGTERM rung', async () => {
    const p = await sh("trap 'exit 7' TERM; echo up; while :; do sleep 0.05; done");
    await readLines(p, 1);
    const result = await p.stop();
    expect(result.rung).toBe('term');
    expect(result.exit).toEqual({ code: 7, signal: null });
  });

  it('(c) a child that ignores TERM is ended by the SIGKILL rung', async () => {
    const p = await sh("trap '' TERM; echo up; while :; do sleep 0.05; done");
    await readLines(p, 1);
    const result = await p.stop();
    expect(result.rung).toBe('kill');
    expect(result.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(result.survivors).toEqual([]);
  });

  it.runIf(linux)('(d) kills setsid and background grandchildren, even after they are orphaned', async () => {
    const p = await sh(
      "(setsid sh -c 'echo S $$; exec sleep 300' & sleep 0.3) & sleep 300 & echo B $!; trap '' TERM; while :; do sleep 0.05; done",
      { descendantPollMs: 50 },
    );
    const lines = (await readLines(p, 2)).sort(); // 'B <pid>', 'S <pid>' (order races)
    const pids = [Number(lines[1]!.slice(2)), Number(lines[0]!.slice(2))]; // [setsid, background]
    strays.push(...pids);
    expect(pids.every((pid) => pid > 0 && isAlive(pid))).toBe(true);
    await new Promise((r) => setTimeout(r, 150)); // let a periodic snapshot run
    expect(p.descendants()).toEqual(expect.arrayContaining(pids));
    await new Promise((r) => setTimeout(r, 400)); // the intermediate subshell exits: orphaned
    const ppid = Number(readFileSync(`/proc/${pids[0]}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    expect(ppid).not.toBe(p.pid);
    expect(isAlive(pids[0]!)).toBe(true);
    // The setsid grandchild really left the group: a group kill alone would miss it.
    const sid = readFileSync(`/proc/${pids[0]}/stat`, 'utf8').split(') ')[1]!.split(' ')[3];
    expect(Number(sid)).toBe(pids[0]);
    const recorded = [p.pid, ...p.descendants()];
    const result = await p.stop();
    expect(result.rung).toBe('kill');
    for (const pid of [...recorded, ...pids]) expect(isAlive(pid), `pid ${pid} survived`).toBe(false);
  });

  it.runIf(linux)('(d2) kills a setsid grandchild left behind by a child that exits on EOF', async () => {
    const p = await sh("setsid sh -c 'echo $$; exec sleep 300' & cat >/dev/null; exit 0", { descendantPollMs: 50 });
    const [pid] = (await readLines(p, 1)).map(Number);
    strays.push(pid!);
    await new Promise((r) => setTimeout(r, 150));
    const result = await p.stop();
    expect(result.exit).toEqual({ code: 0, signal: null });
    expect(result.rung).toBe('term'); // the child left on EOF, its orphan needed SIGTERM
    expect(isAlive(pid!)).toBe(false);
  });

  it.runIf(linux)('(d3) stop() after the child already exited on its own: its setsid leftovers get SIGTERM without the stdin grace', async () => {
    // A crashed agent: nobody can act on stdin EOF any more, so waiting stdinGraceMs only keeps
    // its leftovers (and the engine's `exited`) waiting.
    const p = await sh("setsid sh -c 'echo $$; exec sleep 300' & sleep 0.3; exit 5", { descendantPollMs: 50, shutdown: { stdinGraceMs: 5_000, termGraceMs: 200 } });
    const [pid] = (await readLines(p, 1)).map(Number);
    strays.push(pid!);
    expect(await p.exited).toEqual({ code: 5, signal: null });
    const t = Date.now();
    const result = await p.stop();
    expect(result.rung).toBe('term');
    expect(isAlive(pid!)).toBe(false);
    expect(Date.now() - t).toBeLessThan(2_000);
  });

  it('(e) aborting the signal stops the process; an aborted signal prevents the spawn', async () => {
    const controller = new AbortController();
    const p = await sh("trap 'exit 3' TERM; echo up; while :; do sleep 0.05; done", { signal: controller.signal });
    await readLines(p, 1);
    controller.abort();
    expect(await p.exited).toEqual({ code: 3, signal: null });
    expect((await p.stop()).rung).toBe('term');

    const error = await sh('exit 0', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isAseError(error, 'ABORTED')).toBe(true);
  });

  it('reports a missing executable as ENGINE_START_FAILED', async () => {
    const error = await spawnSupervised({ file: '/nonexistent/agent-bin', args: [], cwd: tmpdir(), env }).catch((e: unknown) => e);
    expect(isAseError(error, 'ENGINE_START_FAILED')).toBe(true);
  });

  it('reports a missing working directory as such (INVALID_OPTIONS), not as ENOENT of the executable', async () => {
    const cwd = `${tmpdir()}/ase-no-such-dir-${process.pid}`;
    const error = await spawnSupervised({ file: 'sh', args: ['-c', 'exit 0'], cwd, env }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', message: `cannot start sh: the working directory ${cwd} does not exist or is not a directory` });
  });
});

/** Host script: supervises a tree with a setsid grandchild, then calls process.exit(). */
const HOST_SCRIPT = `
import { registerHooks } from 'node:module';
registerHooks({
  resolve(spec, ctx, next) {
    try { return next(spec, ctx); } catch (e) {
      if (spec.startsWith('.') && spec.endsWith('.js')) return next(spec.slice(0, -3) + '.ts', ctx);
      throw e;
    }
  },
});
const { spawnSupervised } = await import(process.argv[2]);
const script = "setsid sh -c 'echo S $$; exec sleep 300' & echo R $$; sleep 300";
const p = await spawnSupervised({ file: 'sh', args: ['-c', script], cwd: '/tmp', env: { PATH: process.env.PATH }, descendantPollMs: 20 });
let buf = '';
p.stdout.on('data', (c) => {
  buf += c;
  if (buf.split('\\n').length > 2) setTimeout(() => { process.stdout.write(buf); process.exit(0); }, 100);
});
`;

describe('exit safety net', () => {
  it.runIf(linux && typeof registerHooks === 'function')('(h) process.exit() of the host SIGKILLs the group and collected setsid descendants', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ase-exit-'));
    const host = join(dir, 'host.mjs');
    writeFileSync(host, HOST_SCRIPT);
    const supervisor = fileURLToPath(new URL('../../src/engines/transport/process-supervisor.ts', import.meta.url));
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--experimental-transform-types', '--no-warnings', host, supervisor], { timeout: 10_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
      ),
    );
    const pids = stdout
      .trim()
      .split('\n')
      .sort() // 'R <root pid>', 'S <setsid pid>' (their order races)
      .map((l) => Number(l.slice(2)));
    expect(pids).toHaveLength(2);
    strays.push(...pids, -pids[0]!); // cleanup also kills R's group if the hook failed
    rmSync(dir, { recursive: true, force: true });
    const deadline = Date.now() + 1000;
    while (pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const pid of pids) expect(isAlive(pid), `pid ${pid} survived the host's exit`).toBe(false);
  });
});

describe('child environment', () => {
  it('(f) the child sees only allow-listed and set variables, never NODE_OPTIONS', async () => {
    const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', SECRET_TOKEN: 's3cr3t', NODE_OPTIONS: '--inspect', HOME: '/h' };
    const childEnv = buildEnv({ allow: [...DEFAULT_ENV_ALLOW, 'NODE_OPTIONS'], set: { ASE_GEN: '4', LANG: 'C' }, base });
    const p = await spawnSupervised({ file: 'env', args: [], cwd: tmpdir(), env: childEnv, shutdown });
    started.push(p);
    const chunks: Buffer[] = [];
    p.stdout.on('data', (c: Buffer) => chunks.push(c));
    await Promise.all([p.exited, once(p.stdout, 'end')]);
    const seen = Object.fromEntries(
      Buffer.concat(chunks)
        .toString()
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    // Plus the tree's mark (tree-tag.ts), which finds a descendant that escaped the tree by setsid.
    const mark = linux ? { [TREE_TAG_VAR]: expect.stringMatching(/^[0-9a-f-]{36}$/) } : {};
    expect(seen).toEqual({ PATH: base.PATH, LANG: 'C', HOME: '/h', ASE_GEN: '4', ...mark });
  });

  it('buildEnv does not copy process.env', () => {
    const before = process.env.ASE_TRANSPORT_TEST;
    process.env.ASE_TRANSPORT_TEST = '1';
    try {
      expect(buildEnv()).not.toHaveProperty('ASE_TRANSPORT_TEST');
      expect(buildEnv({ allow: ['ASE_TRANSPORT_TEST'] })).toEqual({ ASE_TRANSPORT_TEST: '1' });
    } finally {
      if (before === undefined) delete process.env.ASE_TRANSPORT_TEST;
      else process.env.ASE_TRANSPORT_TEST = before;
    }
  });
});

describe('stderr tail', () => {
  it('(g) keeps the last bytes of stderr', async () => {
    const p = await sh("i=0; while [ $i -lt 300 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done; echo 'fatal: boom' >&2; exit 2", { stderrTailBytes: 256 });
    const [exit] = await Promise.all([p.exited, once(p.stderr, 'end')]);
    expect(exit.code).toBe(2);
    const text = p.stderrTail.text();
    expect(text.endsWith('noise line 299\nfatal: boom\n')).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(256);
    expect(p.stderrTail.truncated).toBe(true);
    expect(p.stderrTail.totalBytes).toBeGreaterThan(3000);
  });

  it('wraps correctly and drops a multi-byte character cut by the ring', () => {
    const tail = new StderrTail(8);
    tail.push('abc');
    expect(tail.text()).toBe('abc');
    tail.push('defgh');
    tail.push('ij');
    expect(tail.text()).toBe('cdefghij');
    tail.push(Buffer.from('x€yz12', 'utf8')); // € is 3 bytes: 'x€yz12' is 8 bytes
    tail.push('34'); // the ring now starts inside €
    expect(tail.text()).toBe('yz1234'); // the cut € is dropped, not rendered as U+FFFD
    tail.push('0123456789');
    expect(tail.text()).toBe('23456789');
  });
});
