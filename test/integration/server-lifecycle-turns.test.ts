/**
 * `ase serve` opening a stored session (for a message) and settling the stop of one that runs
 * nowhere each take the session's lease for a moment. They take turns per session: before, the
 * second found the lease held, by this very server, and answered a spurious 409 `SESSION_OWNED`.
 * The store below holds one step of the first operation open, so the second always comes in the
 * middle of it.
 */
import { afterEach, expect, it } from 'vitest';
import { MemoryStore, type Lease, type VersionedSession } from '../../src/index.js';
import { waitUntil } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A MemoryStore that, once `hold(step)` is called, holds that step of every call until `letGo()`. */
class HoldingStore extends MemoryStore {
  held = 0;
  #step: 'release' | 'load' | undefined;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  hold(step: 'release' | 'load'): void {
    this.#step = step;
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }

  letGo(): void {
    this.#step = undefined;
    this.#open?.();
  }

  async #wait(step: 'release' | 'load'): Promise<void> {
    if (this.#step !== step) return;
    this.held++;
    await this.#gate;
  }

  override async release(lease: Lease): Promise<void> {
    await this.#wait('release');
    return super.release(lease);
  }

  override async load(sessionId: string): Promise<VersionedSession | undefined> {
    await this.#wait('load');
    return super.load(sessionId);
  }
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function storedStoppedSession(store: HoldingStore): Promise<string> {
  server = await startTestServer({}, { store });
  const id = await server.newSession();
  expect((await server.api('POST', `/api/sessions/${id}/stop`, {})).status).toBe(200);
  expect((await server.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, phase: 'stopped' });
  return id;
}

it('a message that comes while a stop settles a stored session waits for it, then continues the session (no 409)', { timeout: 60_000 }, async () => {
  const store = new HoldingStore();
  const id = await storedStoppedSession(store);
  store.hold('release'); // the settle's lease stays taken
  const stop = server!.api('POST', `/api/sessions/${id}/stop`, {});
  expect(await waitUntil(() => store.held === 1, 10_000), 'the settle holds the lease').toBe(true);
  const message = server!.api('POST', `/api/sessions/${id}/messages`, { text: 'after the stop', localId: 'late-1' });
  await new Promise((resolve) => setTimeout(resolve, 200));
  store.letGo();
  expect(await stop).toMatchObject({ status: 200, body: { stopped: true, live: false, phase: 'stopped' } });
  const sent = await message;
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  expect((await server!.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: true });
});

it('a stop that comes while a message opens the stored session waits for the open, then stops the live session (no 409)', { timeout: 60_000 }, async () => {
  const store = new HoldingStore();
  const id = await storedStoppedSession(store);
  store.hold('load'); // the open has taken the lease and waits for the state
  const message = server!.api('POST', `/api/sessions/${id}/messages`, { text: 'opening', localId: 'open-1' });
  expect(await waitUntil(() => store.held >= 1, 10_000), 'the open waits in load').toBe(true);
  const stop = server!.api('POST', `/api/sessions/${id}/stop`, {});
  await new Promise((resolve) => setTimeout(resolve, 200));
  store.letGo();
  const stopped = await stop;
  expect(stopped, JSON.stringify(stopped.body)).toMatchObject({ status: 200, body: { stopped: true, snapshot: { phase: 'stopped' } } });
  const sent = await message;
  // Sent before the stop took its turn, or refused as stopped: never "owned" by this very server.
  expect(sent.body?.error?.code, JSON.stringify(sent.body)).not.toBe('SESSION_OWNED');
  expect((await server!.api('GET', `/api/sessions/${id}`)).body).toMatchObject({ live: false, phase: 'stopped' });
});
