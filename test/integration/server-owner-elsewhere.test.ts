/**
 * `ase serve` and a session another process on the same data dir owns (`ase run`, another server):
 * what every command route answers, first while that owner lives, then once it is SIGKILLed with
 * its lease still valid. The owner is a real process (test/support/durable-host.mjs, the fake
 * engine from dist/ on a FileStore), the server a real HTTP server in this process on the same
 * FileStore and FileJournal.
 *
 * The rule (docs/server.md "A session another process owns"): while the owner lives, stop, mode,
 * abort, messages and decisions are all 409 `SESSION_OWNED` and nothing changes; once it is dead,
 * every one of them takes the session over here with the next fence, as a message always did, so
 * `stop` really stops it (stored `stopped`, never reopened by a restarted server). Before this,
 * `stop` answered `200 {stopped: true}` in both cases and stopped nothing.
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { FileJournal, FileStore } from '../../src/index.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { Host } from '../support/durable-host.js';
import { waitUntil } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let dataDir: string;
let owner: Host | undefined;
let server: TestServer | undefined;

beforeAll(async () => {
  await ensureBuiltCli(); // the owner runs the library from dist/
}, 180_000);
beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-owner-elsewhere-'));
});
afterEach(async () => {
  await owner?.kill();
  owner = undefined;
  await server?.stop();
  server = undefined;
  await fs.rm(dataDir, { recursive: true, force: true });
});

const storedPhase = async (id: string): Promise<string> => (JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state: { phase: string } }).state.phase;
const storedPhaseNow = (id: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(path.join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state: { phase: string } }).state.phase;
  } catch {
    return undefined; // not written yet, or being replaced
  }
};
const leaseOf = async (id: string) => JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', `${id}.lease`), 'utf8')) as { fence: number; owner: { pid: number } | null };

async function serveOwnedSession(): Promise<{ api: TestServer['api']; ownerPid: number }> {
  owner = await Host.start('own', { dataDir, sessionId: 's1' });
  await owner.waitFor((r) => r['owned'] === true, 'the session to be owned', 30_000);
  // Its agent started: the state the owner keeps writing is settled before the server looks.
  expect(await waitUntil(() => storedPhaseNow('s1') === 'idle', 30_000), 'the owner stores s1 idle').toBe(true);
  server = await startTestServer({}, {
    dataDir,
    store: new FileStore({ dir: path.join(dataDir, 'sessions') }),
    journal: new FileJournal({ dir: path.join(dataDir, 'transcripts') }),
  });
  // Its recovery tried s1 and left it: the owner lives.
  const recovery = await server.recovery;
  expect(recovery, JSON.stringify({ recovery, phase: await storedPhase('s1') })).toMatchObject({ reopened: [], skipped: [{ sessionId: 's1', code: 'SESSION_OWNED' }] });
  return { api: server.api, ownerPid: owner.pid };
}

it('while the owner lives: stop, mode, abort, messages and decisions are 409 SESSION_OWNED naming it; nothing changes', { timeout: 90_000 }, async () => {
  const { api, ownerPid } = await serveOwnedSession();
  const phaseBefore = await storedPhase('s1');
  const fenceBefore = (await leaseOf('s1')).fence;
  const commands: [string, unknown][] = [
    ['/api/sessions/s1/stop', {}],
    ['/api/sessions/s1/mode', { to: 'local' }],
    ['/api/sessions/s1/abort', {}],
    ['/api/sessions/s1/messages', { text: 'hi', localId: 'm1' }],
    ['/api/sessions/s1/permissions/r1', { decision: 'allow' }],
  ];
  for (const [route, body] of commands) {
    const answer = await api('POST', route, body);
    expect(answer, `${route}: ${JSON.stringify(answer.body)}`).toMatchObject({ status: 409, body: { error: { code: 'SESSION_OWNED' } } });
    expect(answer.body.error.message).toContain(`pid ${ownerPid}`);
    // The structured facts too (docs/errors.md): a client need not parse the message.
    expect(answer.body.error.details, route).toMatchObject({ owner: { pid: ownerPid } });
  }
  expect(await storedPhase('s1')).toBe(phaseBefore);
  expect(await leaseOf('s1')).toMatchObject({ fence: fenceBefore, owner: { pid: ownerPid } });
  expect((await api('GET', '/api/sessions/s1')).body).toMatchObject({ live: false });
});

it('once the owner is SIGKILLed (its lease still valid): stop takes the session over and really stops it', { timeout: 90_000 }, async () => {
  const { api } = await serveOwnedSession();
  const fenceBefore = (await leaseOf('s1')).fence;
  await owner!.kill(); // its lease is valid for another minute

  const stopped = await api('POST', '/api/sessions/s1/stop', {});
  expect(stopped, JSON.stringify(stopped.body)).toMatchObject({ status: 200, body: { stopped: true, snapshot: { phase: 'stopped' } } });
  expect(await storedPhase('s1')).toBe('stopped');
  // Stopped under the next fence, the lease given up: a restarted server leaves it stored.
  expect(await leaseOf('s1')).toMatchObject({ fence: fenceBefore + 1, owner: null });
  expect((await api('GET', '/api/sessions')).body.sessions).toEqual([expect.objectContaining({ sessionId: 's1', phase: 'stopped', status: 'stored' })]);
  // Stopped already: said so (live: false, its phase), nothing started for it; the lease was taken
  // for a moment to prove no live process holds it, and given up.
  expect(await api('POST', '/api/sessions/s1/stop', {})).toMatchObject({ status: 200, body: { stopped: true, live: false, phase: 'stopped' } });
  expect(await leaseOf('s1')).toMatchObject({ fence: fenceBefore + 2, owner: null });
  expect((await api('GET', '/api/sessions/s1')).body).toMatchObject({ live: false, phase: 'stopped' });
});
