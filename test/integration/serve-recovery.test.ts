/**
 * Issue 20, Deliver 4: `ase serve` recovers what it hosted. A real `ase serve` process (the built
 * CLI) is SIGKILLed in the middle of a turn that waits on a permission prompt, with a second
 * message accepted (`200 queued`) behind it. A new `ase serve` on the same data dir is started and
 * nobody makes any request to the session: the files alone must show that the turn in flight ended
 * `interrupted`, the prompt `cancelled`, and the queued message reached the agent exactly once.
 * The agent is the fake engine (`--script`): the first server's agent stalls on the prompt, the
 * second's echoes, so "reached the agent" is its echo in the transcript.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { waitUntil } from '../support/processes.js';

interface Serve {
  child: ChildProcess;
  origin: string;
  token: string;
  err(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Entry {
  seq: number;
  type: string;
  payload: Record<string, unknown> | null;
}

let tmp: string;
let dataDir: string;
const running: ChildProcess[] = [];

beforeAll(async () => {
  await ensureBuiltCli();
}, 180_000);
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-serve-recovery-'));
  dataDir = path.join(tmp, 'data');
});
afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await fs.rm(tmp, { recursive: true, force: true });
});

/** `ase serve` on a free port with a FakeScript; resolves once it printed its URL and token. */
async function startServe(script: unknown): Promise<Serve> {
  const scriptFile = path.join(tmp, `script-${running.length}.json`);
  await fs.writeFile(scriptFile, JSON.stringify(script));
  const child = spawn(process.execPath, [ASE_BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--script', scriptFile], {
    cwd: REPO_ROOT,
    env: { ...process.env, HOME: tmp, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = await waitUntil(() => /open http:\/\/127\.0\.0\.1:\d+\//.test(out) && /token: \S+/.test(out) || child.exitCode !== null, 30_000);
  if (!ready || child.exitCode !== null) throw new Error(`ase serve did not start:\n${out}\n${err}`);
  const origin = /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)![1]!;
  const token = /token: (\S+)/.exec(out)![1]!;
  return { child, origin, token, err: () => err, exit };
}

async function call(serve: Serve, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${serve.origin}${route}`, {
    method,
    headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

/** The session's journal as the file holds it (no request to any server). */
async function journal(sessionId: string): Promise<Entry[]> {
  const text = await fs.readFile(path.join(dataDir, 'transcripts', `${sessionId}.jsonl`), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Entry);
}

async function storedPhase(sessionId: string): Promise<string> {
  return JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${sessionId}.json`), 'utf8')).state.phase;
}

/** Polls the journal file until `check` holds (the file is appended and datasynced per entry). */
async function journalUntil(sessionId: string, check: (entries: Entry[]) => boolean, ms: number): Promise<Entry[]> {
  let entries: Entry[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    entries = await journal(sessionId);
    if (check(entries)) return entries;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the journal of ${sessionId} never got there; it holds:\n${entries.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.payload)}`).join('\n')}`);
}

const QUEUED_TEXT = 'second message, sent while the first turn waits';
const echoed = (e: Entry) => e.type === 'message' && JSON.stringify(e.payload).includes(`echo: ${QUEUED_TEXT}`);
const userMessage = (localId: string) => (e: Entry) => e.type === 'user_message' && e.payload?.['localId'] === localId;

describe('ase serve after a SIGKILL mid-turn', () => {
  it('reopens the session by itself: the turn ends interrupted, the prompt cancelled, the queued message goes out once', async () => {
    // The first server's agent answers, then asks to run a command and waits for the answer.
    const first = await startServe({ turns: [[{ text: 'Looking at the files.' }, { ask: { toolName: 'Bash', input: { command: 'rm -rf build' } } }]] });
    const created = await call(first, 'POST', '/api/sessions', { agent: 'fake', workDir: tmp });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    const one = await call(first, 'POST', `/api/sessions/${id}/messages`, { text: 'clean the build', localId: 'L1' });
    expect(one.status).toBe(200);
    await journalUntil(id, (es) => es.some((e) => e.type === 'permission_request'), 20_000);
    const two = await call(first, 'POST', `/api/sessions/${id}/messages`, { text: QUEUED_TEXT, localId: 'L2' });
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(two.body).toEqual({ localId: 'L2', seq: null, status: 'queued' });

    first.child.kill('SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');
    // What the dead server left: a live session with a turn in flight, an open prompt, a queued message.
    expect(await storedPhase(id)).toBe('running');
    const left = await journal(id);
    const requestId = left.find((e) => e.type === 'permission_request')!.payload!['requestId'];
    expect(left.some((e) => e.type === 'turn_ended' || e.type === 'turn_complete')).toBe(false);
    expect(left.filter(userMessage('L2'))).toHaveLength(0);

    // The second server's agent echoes. Nobody asks it anything about the session.
    const second = await startServe({});
    const after = await journalUntil(id, (es) => es.some((e) => e.type === 'turn_complete' && e.payload?.['localId'] === 'L2'), 30_000);
    expect(after.filter((e) => e.type === 'turn_ended' && e.payload?.['localId'] === 'L1')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ localId: 'L1', status: 'interrupted' }) }),
    ]);
    expect(after.filter((e) => e.type === 'permission_resolved' && e.payload?.['requestId'] === requestId)).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ status: 'cancelled' }) }),
    ]);
    // The interrupted turn and its prompt are closed before the queued message goes out.
    const seqOf = (match: (e: Entry) => boolean) => after.find(match)!.seq;
    expect(seqOf((e) => e.type === 'turn_ended')).toBeLessThan(seqOf(userMessage('L2')));
    await waitUntil(() => second.err().includes(`reopened 1 session(s) that were live when the last server stopped: ${id}`), 10_000);
    expect(second.err()).toContain(`reopened 1 session(s) that were live when the last server stopped: ${id}`);

    // Stopped cleanly, then counted from the files: each message reached the agent once, none again.
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
    const final = await journal(id);
    expect(final.filter(userMessage('L1'))).toHaveLength(1);
    expect(final.filter(userMessage('L2'))).toHaveLength(1);
    expect(final.filter(echoed)).toHaveLength(1);
    expect(final.map((e) => e.seq)).toEqual(final.map((_, i) => i + 1));
    expect(await storedPhase(id)).toBe('stopped');
  }, 120_000);

  it('leaves stopped sessions stored: a server restarted after a clean stop opens nothing', async () => {
    const first = await startServe({});
    const id = (await call(first, 'POST', '/api/sessions', { agent: 'fake', workDir: tmp })).body.sessionId as string;
    await call(first, 'POST', `/api/sessions/${id}/messages`, { text: 'hello', localId: 'L1' });
    await journalUntil(id, (es) => es.some((e) => e.type === 'turn_complete'), 20_000);
    first.child.kill('SIGTERM');
    expect((await first.exit).code).toBe(0);
    const before = await journal(id);

    const second = await startServe({});
    const listed = await call(second, 'GET', '/api/sessions');
    expect(listed.body.sessions).toEqual([expect.objectContaining({ sessionId: id, status: 'stored', phase: 'stopped' })]);
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
    expect(second.err()).not.toContain('reopened');
    expect(await journal(id)).toEqual(before);
  }, 60_000);
});
