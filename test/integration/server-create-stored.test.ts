/**
 * `POST /api/sessions` answers 201 only once the new session is in the store: the id it hands out
 * works on every host of a shared store at once (another `ase serve` on the same PostgreSQL found
 * nothing for a moment: postgres-cross-host.test.ts failed on it in CI), and after a crash of this one.
 */
import { afterEach, expect, it } from 'vitest';
import { GatedStore } from '../support/gated-store.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

it('answers 201 only after the session is stored: at that moment the store has it', async () => {
  const store = new GatedStore();
  server = await startTestServer({}, { store });
  let answered = false;
  const created = server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp }).then((r) => {
    answered = true;
    return r;
  });
  // The first write was issued and is held: no answer yet, nothing in the store.
  for (let i = 0; i < 200 && store.saves === 0; i++) await new Promise((r) => setTimeout(r, 5));
  expect(store.saves).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 100));
  expect(answered).toBe(false);
  expect(await store.list()).toEqual([]);
  store.open();
  const response = await created;
  expect(response.status).toBe(201);
  const id = response.body.sessionId as string;
  // Read the instant the answer came: stored, with the session's agent and directory.
  expect((await store.load(id))?.state).toMatchObject({ sessionId: id, agent: 'fake' });
});
