/**
 * `POST /api/sessions` answers 201 only once the new session is in the store: the id it hands out
 * works on every host of a shared store at once (another `ase serve` on the same PostgreSQL found
 * nothing for a moment: postgres-cross-host.test.ts failed on it in CI), and after a crash of this one.
 */
import { afterEach, expect, it } from 'vitest';
import { MemoryStore, type PersistedSession, type SaveResult } from '../../src/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A MemoryStore whose writes wait until `open()`: the state written is there only after that. */
class GatedStore extends MemoryStore {
  #open!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#open = resolve));
  saves = 0;
  open(): void {
    this.#open();
  }
  override async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    this.saves++;
    await this.#gate;
    return super.save(sessionId, state, expectedVersion, fence);
  }
}

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
