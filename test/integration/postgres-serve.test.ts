/**
 * Two `ase serve` processes (the built CLI, as a user runs it) on one PostgreSQL, each with its own
 * data dir and token: both list both hosts' sessions, a session owned by A is listed on B with its
 * owner, B's event stream of A's session replays and then hears A's new entries live (through the
 * journal's LISTEN/NOTIFY hint and a read of the table), a message and an abort sent to B for A's
 * session are carried to A through the command table and answered (a retry is the same command), and
 * after A is SIGKILLed B takes the session over: every message once, the stream without a gap.
 *
 * Then what is not journaled: a page on B sees the text deltas and the permission prompt of A's
 * session (the live relay), its answer given on B reaches A's ledger once; A stalls (SIGSTOP) past
 * its lease: the session is orphaned, a stray command on B is refused, POST adopt on B takes it, and
 * A, woken, writes nothing more under its stale fence; A is SIGKILLed and restarted: it reopens the
 * session it still held, and B drives it there, nothing lost or repeated.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { describePostgres, PG_URL, testDatabase } from '../support/postgres.js';
import { openSse } from '../support/sse-client.js';

const db = PG_URL ? testDatabase(4) : undefined;
type Sessions = { sessions: { sessionId: string; status: string; phase: string; owner?: { pid: number } }[] };
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

async function serve(name: string, schema: string, extra: string[] = []): Promise<Serve> {
  const token = `${name}-token-0123456789abcdef`;
  const tokenFile = path.join(tmp, `${name}.token`);
  await fs.writeFile(tokenFile, token);
  const proc = execa(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--token-file', tokenFile, '--data-dir', path.join(tmp, name), '--store', `${PG_URL}?schema=${schema}`, ...extra], {
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

  it("B, on a machine without the session's work directory, hands A's session every command instead of trying to run it", async () => {
    const schema = db!.schema('route');
    const [a, b] = await Promise.all([serve('a3', schema), serve('b3', schema)]);
    const onlyOnA = await fs.mkdtemp(path.join(tmp, 'only-on-a-'));
    const id = (await api<{ sessionId: string }>(a, '/api/sessions', { agent: 'fake', workDir: onlyOnA })).body.sessionId;
    const stream = await openSse(`${a.origin}/api/sessions/${id}/events`, { authorization: a.headers.authorization! });
    expect((await api(a, `/api/sessions/${id}/messages`, { text: 'on a', localId: 'r1' })).status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('turn_complete'), 20_000);
    // As seen from another machine: the directory is not there. B cannot run this session; A does.
    await fs.rm(onlyOnA, { recursive: true });
    const routed = await api<{ localId: string }>(b, `/api/sessions/${id}/messages`, { text: 'via b', localId: 'r2' });
    expect(routed).toMatchObject({ status: 200, body: { localId: 'r2' } });
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"via b"'), 20_000);
    const viaB = Number(stream.frames.find((f) => f.event === 'entry' && f.data.includes('"via b"'))!.id);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('turn_complete') && Number(f.id) > viaB, 20_000);
    // A's own answers come back: a refusal with its code, then the stop.
    const idle = await api<{ error: { code: string } }>(b, `/api/sessions/${id}/abort`, {});
    expect(idle).toMatchObject({ status: 409, body: { error: { code: 'NOTHING_TO_ABORT' } } });
    const stopped = await api<{ stopped: boolean }>(b, `/api/sessions/${id}/stop`, {});
    expect(stopped).toMatchObject({ status: 200, body: { stopped: true } });
    const { sessions } = (await api<Sessions>(a, '/api/sessions')).body;
    expect(sessions.find((s) => s.sessionId === id)).toMatchObject({ phase: 'stopped' });
    stream.cut();
  });

  it("B's page sees A's deltas and prompt live and answers it once; A stalled past its lease: B adopts when told, A is fenced; A restarted: recovers its own", { timeout: 180_000 }, async () => {
    const schema = db!.schema('adopt');
    // Turn 1 asks (and streams its answer once allowed); later turns just answer.
    const script = path.join(tmp, 'ask-then-text.json');
    await fs.writeFile(script, JSON.stringify({ turns: [[{ ask: { toolName: 'Bash', input: { command: 'ls' } }, onAllow: [{ text: 'streamed across two hosts' }] }], [{ text: 'plain answer' }]] }));
    const extra = ['--script', script, '--lease-ttl-ms', '3000'];
    const [a, b] = await Promise.all([serve('a2', schema, extra), serve('b2', schema, extra)]);
    const id = (await api<{ sessionId: string }>(a, '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId;
    const kept = (await api<{ sessionId: string }>(a, '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId;
    const goneDir = await fs.mkdtemp(path.join(tmp, 'workdir-'));
    const gone = (await api<{ sessionId: string }>(a, '/api/sessions', { agent: 'fake', workDir: goneDir })).body.sessionId;
    const entries = (s: { frames: { event: string; id?: string; data: string }[] }) => s.frames.filter((f) => f.event === 'entry');
    const userTexts = (s: { frames: { event: string; data: string }[] }) =>
      s.frames.filter((f) => f.event === 'entry' && f.data.includes('"user_message"')).map((f) => (JSON.parse(f.data) as { payload: { text: string } }).payload.text);

    const stream = await openSse(`${b.origin}/api/sessions/${id}/events`, { authorization: b.headers.authorization! });
    onTestFailed(() => console.error(stream.frames.filter((f) => f.event !== 'heartbeat').map((f) => `${f.id ?? ''} ${f.event} ${f.data.slice(0, 300)}`).join('\n')));
    await stream.waitFor((f) => f.event === 'live', 20_000);
    expect((await api(b, `/api/sessions/${id}/messages`, { text: 'ask me', localId: 'p1' })).status).toBe(200);
    // The prompt is not journaled: it reaches B's page from A (the relay, or A's snapshot).
    const prompt = await stream.waitFor((f) => f.event === 'permission_prompt', 30_000);
    const { requestId } = JSON.parse(prompt.data) as { requestId: string };
    expect(await api(b, `/api/sessions/${id}/permissions/${encodeURIComponent(requestId)}`, { decision: 'allow' })).toMatchObject({ status: 200 });
    // Answered again (a second tab, a retry): refused with the first answer; A's ledger has one decision.
    const again = await api<{ error: { code: string } }>(b, `/api/sessions/${id}/permissions/${encodeURIComponent(requestId)}`, { decision: 'deny' });
    expect([again.status, again.body.error.code]).toEqual([409, 'PERMISSION_ALREADY_DECIDED']);
    // The text deltas of A's agent reach B's page (ephemeral: never journaled), then the durable message.
    await stream.waitFor((f) => f.event === 'agent' && f.data.includes('"text_delta"'), 30_000);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('streamed across two hosts'), 30_000);
    const deltas = stream.frames.filter((f) => f.event === 'agent' && f.data.includes('"text_delta"')).map((f) => (JSON.parse(f.data) as { text: string }).text).join('');
    expect('streamed across two hosts'.startsWith(deltas) || deltas === 'streamed across two hosts', `deltas ${JSON.stringify(deltas)}`).toBe(true);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('turn_complete'), 30_000);
    const decisions = entries(stream).filter((f) => f.data.includes(requestId) && /"type":"permission_(resolved|decided|decision)"/.test(f.data));
    expect(decisions, 'one decision in the ledger').toHaveLength(1);

    // A stalls past its lease (3 s): both its sessions are listed orphaned on B.
    const keptStream = await openSse(`${b.origin}/api/sessions/${kept}/events`, { authorization: b.headers.authorization! });
    await keptStream.waitFor((f) => f.event === 'live', 20_000);
    process.kill(a.pid, 'SIGSTOP');
    try {
      for (const deadline = Date.now() + 30_000; ; ) {
        const { sessions } = (await api<Sessions>(b, '/api/sessions')).body;
        if ([id, gone].every((x) => sessions.find((s) => s.sessionId === x)?.status === 'orphaned')) break;
        expect(Date.now() < deadline, 'listed orphaned once the lease expired').toBe(true);
        await new Promise((r) => setTimeout(r, 200));
      }
      // A stray command does not take it: a clear refusal naming the last owner, nothing changed.
      const stray = await api<{ error: { code: string; message: string } }>(b, `/api/sessions/${id}/messages`, { text: 'stray', localId: 's1' });
      expect([stray.status, stray.body.error.code]).toEqual([409, 'SESSION_OWNED']);
      expect(stray.body.error.message).toMatch(new RegExp(`orphaned: its owner, pid ${a.pid} on .*adopt`));
      // A work directory missing here refuses the adoption (the agent would start over), nothing taken.
      await fs.rm(goneDir, { recursive: true });
      const refused = await api<{ error: { code: string } }>(b, `/api/sessions/${gone}/adopt`, {});
      expect([refused.status, refused.body.error.code]).toEqual([409, 'RESUME_FORKED']);
      expect((await api<Sessions>(b, '/api/sessions')).body.sessions.find((s) => s.sessionId === gone)?.status).toBe('orphaned');
      // Told to: B adopts it.
      const adopted = await api<{ adopted: boolean }>(b, `/api/sessions/${id}/adopt`, {});
      expect(adopted).toMatchObject({ status: 200, body: { adopted: true } });
    } finally {
      process.kill(a.pid, 'SIGCONT');
    }
    const lastBefore = Number(entries(stream).at(-1)!.id);
    const { rows: fenceRows } = await db!.pool.query<{ fence: string }>(`SELECT fence FROM "${schema}".ase_lease WHERE session_id = $1`, [id]);
    const newFence = Number(fenceRows[0]!.fence);
    // A, awake, finds its lease taken: the session is listed on A as B's.
    for (const deadline = Date.now() + 30_000; ; ) {
      const { sessions } = (await api<Sessions>(a, '/api/sessions')).body;
      const row = sessions.find((s) => s.sessionId === id);
      if (row?.status === 'elsewhere' && row.owner?.pid === b.pid) break;
      expect(Date.now() < deadline, `A sees B as the owner (now ${JSON.stringify(row)})`).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await api(b, `/api/sessions/${id}/messages`, { text: 'after the adoption', localId: 'p2' })).status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"after the adoption"'), 30_000);
    // B's agent (a new process of the adopted session) asks again; the answer and a message sent to
    // A (no longer the owner) are carried to B. The message waits in the queue until the turn ends.
    const second = await stream.waitFor((f) => f.event === 'permission_prompt' && !f.data.includes(`"${requestId}"`), 30_000);
    expect((await api(a, `/api/sessions/${id}/messages`, { text: 'sent to a', localId: 'p3' })).status).toBe(200);
    const secondId = (JSON.parse(second.data) as { requestId: string }).requestId;
    expect((await api(a, `/api/sessions/${id}/permissions/${encodeURIComponent(secondId)}`, { decision: 'deny' })).status).toBe(200);
    await stream.waitFor((f) => f.event === 'entry' && f.data.includes('"sent to a"'), 30_000);
    const { rows: stale } = await db!.pool.query(`SELECT seq FROM "${schema}".ase_journal WHERE session_id = $1 AND seq > $2 AND fence <> $3`, [id, lastBefore, newFence]);
    expect(stale, 'nothing written under the old fence after the adoption').toEqual([]);
    expect(userTexts(stream), 'each message once, the stray one never').toEqual(['ask me', 'after the adoption', 'sent to a']);
    const seqs = entries(stream).map((f) => Number(f.id));
    expect(seqs, 'no gap, no repeat').toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    stream.cut();

    // A is SIGKILLed and restarted on its data dir: it takes back the session it still held (its
    // lease outlived the stall: nobody adopted it), and B drives it there.
    process.kill(a.pid, 'SIGKILL');
    await a.proc.catch(() => undefined);
    const a2 = await serve('a2', schema, extra);
    for (const deadline = Date.now() + 30_000; ; ) {
      const row = (await api<Sessions>(b, '/api/sessions')).body.sessions.find((s) => s.sessionId === kept);
      if (row?.status === 'elsewhere' && row.owner?.pid === a2.pid) break;
      expect(Date.now() < deadline, `the restarted A holds it (now ${JSON.stringify(row)})`).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await api(b, `/api/sessions/${kept}/messages`, { text: 'to the restarted a', localId: 'k1' })).status).toBe(200);
    await keptStream.waitFor((f) => f.event === 'entry' && f.data.includes('"to the restarted a"'), 30_000);
    expect(userTexts(keptStream)).toEqual(['to the restarted a']);
    const keptSeqs = entries(keptStream).map((f) => Number(f.id));
    expect(keptSeqs).toEqual(Array.from({ length: keptSeqs.length }, (_, i) => i + 1));
    keptStream.cut();
  });
});
