/**
 * `POST /api/sessions/:id/adopt` over real HTTP (issue 22, dead owners): a session is taken only
 * where its agent could really resume. The fake engine is given a `checkResume` of the kind the
 * claude and codex engines have (test/unit/engine-resume-check.test.ts tests those against the
 * CLIs' file layouts): "the agent's file for this token exists in this folder". Refused adoptions
 * answer 409 RESUME_FORKED with the reason and change nothing (no session opened, no state
 * written); an engine without the check is adopted wherever the work directory exists, as before.
 * The sessions here are stored ones of this host (stopped), which the route treats as any host's:
 * the two-host story with a live lease is in postgres-serve.test.ts.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeEngine, MemoryStore, type EngineFactory, type ResumeTarget } from '../../src/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('POST /api/sessions/:id/adopt: only where the agent could resume', () => {
  it('refuses while the agent session file is missing (409 RESUME_FORKED, nothing changed), adopts once it is there', { timeout: 60_000 }, async () => {
    const store = new MemoryStore();
    const asked: ResumeTarget[] = [];
    let agentFiles = '';
    const checked: EngineFactory = {
      ...fakeEngine({ resumeToken: 'agent-thread-1' }),
      name: 'fake-checked',
      async checkResume(target) {
        asked.push(target);
        const file = join(agentFiles, `${target.resumeToken}.jsonl`);
        return existsSync(file) ? { ok: true } : { ok: false, reason: `no agent file ${file}` };
      },
    };
    const s = (server = await startTestServer({}, { store, engines: [fakeEngine(), checked] }));
    agentFiles = join(s.tmp, 'agent-files');
    const work = join(s.tmp, 'work');
    mkdirSync(work);

    /** A session of `agent` that had one turn (or none), then stopped: stored, its agent session named. */
    const storedSession = async (agent: string, workDir: string, turn = true): Promise<string> => {
      const created = await s.api('POST', '/api/sessions', { agent, workDir });
      expect(created.status).toBe(201);
      const id = created.body.sessionId as string;
      await until('ready', async () => (await s.api('GET', `/api/sessions/${id}`)).body.resumeToken !== undefined);
      if (turn) {
        expect((await s.api('POST', `/api/sessions/${id}/messages`, { text: 'remember pineapple', localId: 'm1' })).status).toBe(200);
        await until('turn done', async () => (await s.api('GET', `/api/sessions/${id}`)).body.usage?.turns === 1);
      }
      expect((await s.api('POST', `/api/sessions/${id}/stop`, {})).status).toBe(200);
      expect((await s.api('GET', `/api/sessions/${id}`)).body.live).toBe(false);
      return id;
    };

    const id = await storedSession('fake-checked', work);
    const before = await store.load(id);
    const refused = await s.api('POST', `/api/sessions/${id}/adopt`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('RESUME_FORKED');
    expect(refused.body.error.message).toContain(`no agent file ${join(agentFiles, 'agent-thread-1.jsonl')}`);
    expect(asked).toEqual([expect.objectContaining({ resumeToken: 'agent-thread-1', workDir: work, engineOptions: {} })]);
    // Nothing changed: not running here, the stored state not written.
    expect((await s.api('GET', `/api/sessions/${id}`)).body.live).toBe(false);
    expect((await store.load(id))?.version).toBe(before?.version);
    expect((await s.api('GET', '/api/sessions')).body.sessions.find((row: { sessionId: string }) => row.sessionId === id)).toMatchObject({ status: 'stored' });

    // The agent's file arrives (the disk was mounted, the transcript synced): adopted, running here.
    mkdirSync(agentFiles);
    writeFileSync(join(agentFiles, 'agent-thread-1.jsonl'), '{"type":"user"}\n');
    const adopted = await s.api('POST', `/api/sessions/${id}/adopt`, {});
    expect(adopted.status).toBe(200);
    expect(adopted.body).toMatchObject({ sessionId: id, adopted: true, running: true });
    await until('resumed', async () => (await s.api('GET', `/api/sessions/${id}`)).body.resumeToken === 'agent-thread-1');
    expect((await s.api('GET', `/api/sessions/${id}`)).body.live).toBe(true);
    // Once it runs here, adopting again changes nothing.
    expect((await s.api('POST', `/api/sessions/${id}/adopt`, {})).body).toMatchObject({ adopted: false, running: true });
    expect((await s.api('POST', `/api/sessions/${id}/stop`, {})).status).toBe(200);

    // A session whose agent was never given a message holds nothing to lose: adopted without a file.
    const untouched = await storedSession('fake-checked', work, false);
    rmSync(join(agentFiles, 'agent-thread-1.jsonl'));
    expect((await s.api('POST', `/api/sessions/${untouched}/adopt`, {})).body).toMatchObject({ adopted: true });
    await s.api('POST', `/api/sessions/${untouched}/stop`, {});

    // Its work directory gone: refused before the engine is asked.
    const gone = join(s.tmp, 'gone');
    mkdirSync(gone);
    const homeless = await storedSession('fake-checked', gone);
    rmSync(gone, { recursive: true });
    asked.length = 0;
    const noDir = await s.api('POST', `/api/sessions/${homeless}/adopt`, {});
    expect(noDir.status).toBe(409);
    expect(noDir.body.error).toMatchObject({ code: 'RESUME_FORKED', message: expect.stringContaining(`its work directory ${gone} does not exist here`) });
    expect(asked).toEqual([]);

    // An engine without the check: the work directory is enough, as before.
    const plain = await storedSession('fake', work);
    expect((await s.api('POST', `/api/sessions/${plain}/adopt`, {})).body).toMatchObject({ adopted: true, running: true });
  });
});
