/**
 * The CLI side of issue 13, run as a user runs it (`node dist/cli/bin.js`): `ase diagram` in each
 * format, `ase serve` (prints a URL that serves the page, refuses a public bind without a token
 * file, stops its sessions on SIGTERM) and `ase inspect` replaying a session's durable log.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessionMachine } from '../../src/actors/session.js';
import { SERVE_SEMI_SPACE_FLAG } from '../../src/cli/serve-heap.js';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

let tmp: string;
let dataDir: string;
beforeAll(async () => {
  await ensureBuiltCli();
}, 120_000);
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-cli-serve-'));
  dataDir = path.join(tmp, 'data');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function spawnAse(args: string[]) {
  return execa(process.execPath, [ASE_BIN, ...args], { cwd: REPO_ROOT, env: { HOME: tmp, NO_COLOR: '1' }, stdin: 'ignore', reject: false, timeout: 30_000 });
}

describe('ase diagram --format', () => {
  it('prints mermaid, dot, json and an svg laid out by elkjs, all from the machine', async () => {
    const mermaid = await spawnAse(['diagram', '--format', 'mermaid']);
    expect(mermaid.stdout.startsWith('stateDiagram-v2')).toBe(true);
    const dot = await spawnAse(['diagram', '--format', 'dot']);
    expect(dot.stdout).toMatch(/^digraph SessionActor \{/);
    expect(dot.stdout).toContain('subgraph "cluster_session.remote"');
    expect(dot.stdout).toContain('"session.remote.idle" -> "session.remote.running" [label="send [isNewSend]"]');
    const json = JSON.parse((await spawnAse(['diagram', '--format', 'json'])).stdout);
    expect(json.root.children.map((c: { key: string }) => c.key)).toEqual(Object.keys(sessionMachine.root.states));
    expect(json.edges).toContainEqual(expect.objectContaining({ source: 'session.remote.running', target: 'session.remote.interrupting', event: 'abort' }));
    const svg = (await spawnAse(['diagram', '--format', 'svg'])).stdout;
    expect(svg.startsWith('<svg')).toBe(true);
    // Compound states drawn around their children: remote's rectangle contains idle's.
    const rect = (id: string) => {
      const m = new RegExp(`data-state="${id.replace(/\./g, '\\.')}">\\s*<rect x="([\\d.]+)" y="([\\d.]+)" width="([\\d.]+)" height="([\\d.]+)"`).exec(svg);
      expect(m, id).not.toBeNull();
      return m!.slice(1).map(Number) as [number, number, number, number];
    };
    const [rx, ry, rw, rh] = rect('session.remote');
    const [ix, iy, iw, ih] = rect('session.remote.idle');
    expect(ix).toBeGreaterThan(rx);
    expect(iy).toBeGreaterThan(ry);
    expect(ix + iw).toBeLessThan(rx + rw);
    expect(iy + ih).toBeLessThan(ry + rh);
    const bad = await spawnAse(['diagram', '--format', 'png']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--format must be one of mermaid, dot, svg, json');
  });
});

describe('ase serve', () => {
  it('prints a URL with the token that serves the page, and stops its sessions on SIGTERM', async () => {
    const serve = spawnAse(['serve', '--port', '0', '--data-dir', dataDir]);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      serve.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(out);
        if (m && out.includes('token: ')) resolve(m[1]!);
      });
      void serve.then((r) => reject(new Error(`exited: ${r.stderr}`)));
    });
    const token = /token: (\S+)/.exec(out)![1]!;
    expect(url).toContain(encodeURIComponent(token));
    // Started again in place with its heap flag (src/cli/serve-heap.ts): the same pid, which SIGTERM below still stops.
    if (process.platform === 'linux') expect((await fs.readFile(`/proc/${serve.pid}/cmdline`, 'utf8')).split('\0')).toContain(SERVE_SEMI_SPACE_FLAG);
    const origin = new URL(url).origin;
    const login = await fetch(url, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const page = await fetch(`${origin}/`, { headers: { cookie: login.headers.get('set-cookie')!.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>ase serve</title>');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${origin}/api/sessions`, { method: 'POST', headers, body: JSON.stringify({ agent: 'fake', workDir: tmp }) });
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    serve.kill('SIGTERM');
    const result = await serve;
    expect(result.exitCode).toBe(0);
    const stored = JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${sessionId}.json`), 'utf8'));
    expect(stored.state.phase).toBe('stopped');
  });

  it('refuses a non-loopback bind without --token-file, and binds with one', async () => {
    const refused = await spawnAse(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir]);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain('--token-file');
    const short = path.join(tmp, 'short');
    await fs.writeFile(short, 'abc\n');
    const tooShort = await spawnAse(['serve', '--token-file', short, '--port', '0', '--data-dir', dataDir]);
    expect(tooShort.exitCode).not.toBe(0);
    expect(tooShort.stderr).toContain('at least 16 characters');
    const file = path.join(tmp, 'token');
    await fs.writeFile(file, 'a-long-enough-secret-token-1234\n');
    const serve = spawnAse(['serve', '--host', '0.0.0.0', '--port', '0', '--token-file', file, '--data-dir', dataDir]);
    let out = '';
    const origin = await new Promise<string>((resolve, reject) => {
      serve.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /open (http:\/\/0\.0\.0\.0:\d+)\//.exec(out);
        if (m) resolve(m[1]!.replace('0.0.0.0', '127.0.0.1'));
      });
      void serve.then((r) => reject(new Error(`exited: ${r.stderr}`)));
    });
    expect(out).not.toContain('token: '); // a given token is not printed
    expect((await fetch(`${origin}/api/sessions`, { headers: { authorization: 'Bearer a-long-enough-secret-token-1234' } })).status).toBe(200);
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    serve.kill('SIGTERM');
    expect((await serve).exitCode).toBe(0);
  });
});

describe('ase inspect', () => {
  it('replays a session log through the chart, at the end or at a past seq', async () => {
    const script = path.join(tmp, 'script.json');
    await fs.writeFile(script, JSON.stringify({ turns: [[{ ask: { toolName: 'Bash', input: { command: 'ls' } } }, { text: 'after' }]] }));
    const run = await spawnAse(['run', '--agent', 'fake', '--script', script, '--yes', '--cwd', tmp, '--data-dir', dataDir, 'hello']);
    expect(run.exitCode).toBe(0);
    const id = /session (\S+)/.exec(run.stderr)![1]!;
    const text = await spawnAse(['inspect', id, '--data-dir', dataDir]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/#\s+2 user_message\s+→ \{"remote":"running"\}/);
    expect(text.stdout).toMatch(/turn_complete\s+→ \{"remote":"idle"\}/);
    expect(text.stdout).toMatch(/chart at seq \d+: "stopped"/);
    const at = JSON.parse((await spawnAse(['inspect', id, '--at-seq', '3', '--json', '--data-dir', dataDir])).stdout);
    expect(at.chart).toMatchObject({ value: { remote: 'running' }, seq: 3, turn: expect.any(String) });
    expect(at.entries.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3]);
    const svg = (await spawnAse(['inspect', id, '--at-seq', '2', '--svg', '--data-dir', dataDir])).stdout;
    expect(svg).toContain('<g class="state active" data-state="session.remote.running">');
    expect(svg).toContain('<g class="state compound active" data-state="session.remote">');
    const missing = await spawnAse(['inspect', 'no-such', '--data-dir', dataDir]);
    expect(missing.exitCode).not.toBe(0);
    expect((await spawnAse(['inspect', id, '--at-seq', 'x'])).exitCode).toBe(2);
  });
});
