/**
 * Two `ase serve` processes (the built CLI, as a user runs it) on one PostgreSQL, each with its own
 * data dir and token: both list both hosts' sessions, a session owned by A is listed on B with its
 * owner, B's event stream of A's session replays and then hears A's new entries live (through the
 * journal's LISTEN/NOTIFY hint and a read of the table), a message and an abort sent to B for A's
 * session are carried to A through the command table and answered (a retry is the same command), and
 * after A is SIGKILLed B takes the session over: every message once, the stream without a gap.
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
  proc: ResultPromise;
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
  return { origin, pid: proc.pid!, proc, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

async function api<T>(s: Serve, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${s.origin}${route}`, { method: body === undefined ? 'GET' : 'POST', headers: s.headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as T };
}

describePostgres('two ase serve on one PostgreSQL', () => {
  it("each lists both hosts' sessions; B streams A's session live and drives it through A; A SIGKILLed: nothing lost or repeated", async () => {
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
    
    // B drives A's session: the command goes to A through the command table, A applies it and answers.
    const routed = await api<{ localId: string; status: string }>(b, `/api/sessions/${idA}/messages`, { text: 'from b', localId: 'm3' });
    expect(routed).toMatchObject({ status: 200, body: { localId: 'm3' } });
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"from b"'), 20_000);
    // A retry of the same message is the same command: answered again, delivered once.
    expect((await api(b, `/api/sessions/${idA}/messages`, { text: 'from b', localId: 'm3' })).status).toBe(200);
    // A's refusal comes back to B's caller with its own code (once the turn of "from b" is over: nothing to abort then).
    const fromB = Number(stream.frames.find((f) => f.event === 'entry' && f.data.includes('"from b"'))!.id);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('turn_complete') && Number(f.id) > fromB, 20_000);
    const idle = await api<{ error: { code: string } }>(b, `/api/sessions/${idA}/abort`, {});
    expect(idle.body.error.code).toBe('NOTHING_TO_ABORT');
    expect(idle.status).toBe(409);

    // A is SIGKILLed. On this machine B sees its pid is dead and takes the session over at once.
    process.kill(a.pid, 'SIGKILL');
    await a.proc.catch(() => undefined); // reaped: until then its pid is a zombie of this process, still there
    const after = await api<{ localId: string }>(b, `/api/sessions/${idA}/messages`, { text: 'after the kill', localId: 'm4' });
    expect(after.status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"after the kill"'), 20_000);
    const texts = stream.frames
      .filter((f) => f.event === 'entry' && f.data.includes('"user_message"'))
      .map((f) => (JSON.parse(f.data) as { payload: { text: string } }).payload.text);
    expect(texts, 'each message delivered once').toEqual(['first', 'second', 'from b', 'after the kill']);
    const seqs = stream.frames.filter((f) => f.event === 'entry').map((f) => Number(f.id));
    expect(seqs, 'the stream on B: no gap, no repeat').toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    stream.cut();
  });
});
