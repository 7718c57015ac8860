/**
 * Two `ase serve` processes (the built CLI, as a user runs it) on one PostgreSQL, each with its own
 * data dir and token: both list both hosts' sessions, a session owned by A is listed on B with its
 * owner, B's event stream of A's session replays and then hears A's new entries live (through the
 * journal's LISTEN/NOTIFY hint and a read of the table), and a message sent to B for A's session is
 * refused at once with SESSION_OWNED naming A (not hung).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { describePostgres, PG_URL, testDatabase } from '../support/postgres.js';
import { openSse } from '../support/sse-client.js';

const db = PG_URL ? testDatabase(4) : undefined;
let tmp: string;
const servers: ResultPromise[] = [];

beforeAll(async () => {
  await ensureBuiltCli();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-pg-serve-'));
}, 120_000);
afterAll(async () => {
  for (const s of servers) s.kill('SIGTERM');
  await Promise.all(servers.map((s) => s.catch(() => undefined)));
  await db?.dropAll();
  await fs.rm(tmp, { recursive: true, force: true });
});

interface Serve {
  origin: string;
  pid: number;
  headers: Record<string, string>;
}

async function serve(name: string, schema: string): Promise<Serve> {
  const token = `${name}-token-0123456789abcdef`;
  const tokenFile = path.join(tmp, `${name}.token`);
  await fs.writeFile(tokenFile, token);
  const proc = execa(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--token-file', tokenFile, '--data-dir', path.join(tmp, name), '--store', `${PG_URL}?schema=${schema}`], {
    cwd: REPO_ROOT,
    env: { HOME: tmp, NO_COLOR: '1' },
    stdin: 'ignore',
    reject: false,
  });
  servers.push(proc);
  let out = '';
  const origin = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m && out.includes('PostgreSQL')) resolve(m[1]!);
    });
    void proc.then((r) => reject(new Error(`ase serve exited: ${r.stderr}`)));
  });
  return { origin, pid: proc.pid!, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

async function api<T>(s: Serve, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${s.origin}${route}`, { method: body === undefined ? 'GET' : 'POST', headers: s.headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as T };
}

describePostgres('two ase serve on one PostgreSQL', () => {
  it("each lists both hosts' sessions; B streams A's session live; B refuses to drive it with SESSION_OWNED naming A", async () => {
    const schema = db!.schema('serve');
    const [a, b] = await Promise.all([serve('a', schema), serve('b', schema)]);
    const onA = await api<{ sessionId: string }>(a, '/api/sessions', { agent: 'fake', workDir: tmp });
    const onB = await api<{ sessionId: string }>(b, '/api/sessions', { agent: 'fake', workDir: tmp });
    expect([onA.status, onB.status]).toEqual([201, 201]);
    const idA = onA.body.sessionId;
    const idB = onB.body.sessionId;
    expect((await api(a, `/api/sessions/${idA}/messages`, { text: 'first', localId: 'm1' })).status).toBe(200);

    for (const [self, other, mine, theirs] of [[a, b, idA, idB], [b, a, idB, idA]] as const) {
      const { sessions } = (await api<{ sessions: { sessionId: string; status: string; owner?: { pid: number } }[] }>(self, '/api/sessions')).body;
      expect(sessions.find((s) => s.sessionId === mine)).toMatchObject({ status: 'running' });
      expect(sessions.find((s) => s.sessionId === theirs)).toMatchObject({ status: 'elsewhere', owner: { pid: other.pid } });
    }

    // B streams A's session: the replay, then A's next turn live.
    const stream = await openSse(`${b.origin}/api/sessions/${idA}/events`, { authorization: b.headers.authorization! });
    expect(stream.status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"first"'), 20_000);
    await stream.waitFor((f) => f.event === 'live', 20_000);
    expect((await api(a, `/api/sessions/${idA}/messages`, { text: 'second', localId: 'm2' })).status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"second"'), 20_000);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('turn_complete') && Number(f.id) > Number(stream.frames.find((x) => x.data.includes('"second"'))!.id), 20_000);
    const ids = stream.frames.filter((f) => f.event === 'entry').map((f) => Number(f.id));
    expect(ids, 'every entry once, in order, no gap').toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    stream.cut();

    // Driving A's session through B is refused at once, naming its owner.
    const refused = await api<{ error: { code: string; details?: { owner?: { pid: number } } } }>(b, `/api/sessions/${idA}/messages`, { text: 'from b', localId: 'm3' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('SESSION_OWNED');
  });
});
