/**
 * `ase serve` in-process for tests: a real HTTP server on a free loopback port, sessions on the
 * fake engine (scripted), in-memory store and journal (or file ones under a temp dir). Every
 * response it writes is checked against the OpenAPI document (response-contract.ts): `stop()`
 * fails with the ones that break it, so an undeclared response fails the test that caused it.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fakeEngine, MemoryJournal, MemoryStore, type FakeScript, type TranscriptJournal } from '../../src/index.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { watchContract, type ResponseContract } from './response-contract.js';
import { serverApi, type ServerApi } from './server-api.js';

export interface TestServer extends RunningServer {
  tmp: string;
  /** Bearer headers (JSON). */
  headers: Record<string, string>;
  api: ServerApi;
  /** POST /api/sessions for the fake engine; the new id. */
  newSession(): Promise<string>;
  /** The OpenAPI contract every response so far was checked against. */
  contract: ResponseContract;
  /** Closes the server; throws the contract's violations, if any. */
  stop(): Promise<void>;
}

export async function startTestServer(script: FakeScript = {}, options: Partial<ServerOptions> & { journal?: TranscriptJournal } = {}): Promise<TestServer> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-serve-'));
  const server = await startServer({
    port: 0,
    dataDir: tmp,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    engines: [fakeEngine(script)],
    heartbeatMs: 10_000,
    presenceGraceMs: 200,
    ...options,
  });
  const contract = watchContract(server);
  const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  const api = serverApi(server.url, server.token);
  return Object.assign(server, {
    tmp,
    headers,
    api,
    async newSession() {
      const created = await api('POST', '/api/sessions', { agent: 'fake', workDir: tmp });
      if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body.sessionId as string;
    },
    contract,
    async stop() {
      await server.close();
      await fs.rm(tmp, { recursive: true, force: true });
      await new Promise((resolve) => setImmediate(resolve)); // the responses cut by the close are checked
      contract.assertKept();
    },
  });
}
