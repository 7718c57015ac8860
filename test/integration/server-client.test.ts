/**
 * `agent-session-engine/client` against a real `ase serve` (in-process, on a loopback port, the
 * fake engine): the REST calls, typed refusals, and `events(id)` through a TCP proxy that cuts the
 * stream mid-frame several times while messages keep coming: every journaled entry reaches the
 * consumer exactly once, in order, and each reconnect resumed with `Last-Event-ID`. The client's
 * files import no `node:` module (it is meant for browsers too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, RemoteError, type RemoteEvent } from '../../src/client.js';
import { isAseError } from '../../src/errors.js';
import { startCuttingProxy, type CuttingProxy } from '../support/cutting-proxy.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { REPO_ROOT } from '../support/built-cli.js';

let server: TestServer | undefined;
let proxy: CuttingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await server?.stop();
  proxy = undefined;
  server = undefined;
});

describe('client: the API', () => {
  it('lists, creates, sends, decides, aborts, switches mode and stops; refusals are RemoteErrors with the server`s code', async () => {
    server = await startTestServer({ turns: [[{ text: 'asking' }, { ask: { requestId: 'p1', toolName: 'Bash', input: { command: 'ls' } } }]] });
    const client = connect({ url: server.url, token: server.token });
    const { sessionId } = await client.sessions.create({ agent: 'fake', workDir: server.tmp });
    expect((await client.sessions.list()).map((s) => s.sessionId)).toContain(sessionId);
    const sent = await client.send(sessionId, 'hello', { localId: 'm1' });
    expect(sent.localId).toBe('m1');
    // The same localId again: the same message, stored once.
    expect((await client.send(sessionId, 'hello', { localId: 'm1' })).localId).toBe('m1');
    const events = client.events(sessionId);
    for await (const e of events) if (e.type === 'permission_prompt') break;
    expect(await client.decide(sessionId, 'p1', 'deny', { message: 'no' })).toMatchObject({ requestId: 'p1' });
    const late = await client.decide(sessionId, 'p1', 'allow').catch((e: unknown) => e);
    expect(late).toBeInstanceOf(RemoteError);
    expect(late).toMatchObject({ code: 'PERMISSION_ALREADY_DECIDED', status: 409, body: { outcome: expect.objectContaining({ status: 'denied' }) } });
    // An AseError like the library's own: one isAseError handles it in process and behind the server.
    expect(isAseError(late, 'PERMISSION_ALREADY_DECIDED')).toBe(true);
    expect(late).toMatchObject({ name: 'RemoteError', details: { status: 409 }, message: expect.stringContaining('p1') });
    // The server's `error.details` reach the client's error, with the status beside them.
    const owned = await RemoteError.fromResponse(Response.json({ error: { code: 'SESSION_OWNED', message: 'owned', details: { owner: { host: 'h', pid: 7 }, orphaned: true } } }, { status: 409 }));
    expect(isAseError(owned, 'SESSION_OWNED') && owned.details).toEqual({ owner: { host: 'h', pid: 7 }, orphaned: true, status: 409 });
    await expect(client.abort(sessionId)).rejects.toMatchObject({ code: 'NOTHING_TO_ABORT' });
    expect(await client.mode(sessionId, 'remote')).toEqual({ mode: 'remote' });
    expect((await client.sessions.get(sessionId)).live).toBe(true);
    expect(await client.sessions.stop(sessionId)).toMatchObject({ stopped: true });
    await expect(connect({ url: server.url, token: 'wrong-token-wrong-token' }).sessions.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    await expect(client.sessions.get('no-such-session')).rejects.toMatchObject({ status: 404 });
    // A refused stream throws at once instead of retrying forever.
    const refused = connect({ url: server.url, token: 'wrong-token-wrong-token' }).events(sessionId);
    await expect(refused.next()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(() => connect({ url: 'ftp://x', token: 't' })).toThrow(/http/);
  });
});

describe('client: events(id) across connections cut mid-frame', () => {
  it('every entry once, in order, with Last-Event-ID on each reconnect; the cuts fell inside frames', async () => {
    server = await startTestServer();
    const upstream = new URL(server.url);
    // Connections 1-6 are cut after a growing number of bytes (inside a frame, checked below); 7 on run free.
    const cutAt = [900, 1_500, 2_222, 3_333, 4_444, 5_555];
    proxy = await startCuttingProxy({ host: upstream.hostname, port: Number(upstream.port) }, (n) => cutAt[n - 1]);
    const client = connect({ url: proxy.url, token: server.token });
    const { sessionId } = await client.sessions.create({ agent: 'fake', workDir: server.tmp });

    const MESSAGES = 25;
    const seen: Extract<RemoteEvent, { type: 'entry' }>[] = [];
    const reconnects: (number | undefined)[] = [];
    const controller = new AbortController();
    const reading = (async () => {
      for await (const e of client.events(sessionId, { signal: controller.signal, maxRetryMs: 200, onReconnect: (r) => reconnects.push(r.afterSeq) })) {
        if (e.type !== 'entry') continue;
        seen.push(e);
        if (seen.filter((x) => x.entry.type === 'turn_complete').length === MESSAGES) break;
      }
    })();
    for (let i = 1; i <= MESSAGES; i++) {
      await server.api('POST', `/api/sessions/${sessionId}/messages`, { text: `message ${i}`, localId: `m${i}` });
      if (i % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const timeout = setTimeout(() => controller.abort(), 60_000);
    await reading;
    clearTimeout(timeout);

    const journal = await server.journal.read(sessionId);
    const upToLast = journal.filter((e) => (e.seq ?? 0) <= seen.at(-1)!.seq);
    expect(seen.map((e) => e.seq)).toEqual(upToLast.map((e) => e.seq));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.map((e) => e.entry)).toEqual(upToLast);
    expect(seen.filter((e) => e.entry.type === 'user_message').map((e) => (e.entry.payload as { text: string }).text)).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => `message ${i + 1}`),
    );
    // The proxy cut the connections it was told to, inside frames, and each reconnect resumed from the cursor it had.
    expect(proxy.cuts.length).toBe(cutAt.length);
    expect(proxy.cuts.filter((c) => c.midFrame).length).toBeGreaterThanOrEqual(cutAt.length - 1);
    expect(proxy.cuts[0]!.lastEventId).toBeUndefined();
    expect(reconnects.length).toBeGreaterThanOrEqual(cutAt.length);
    for (let i = 1; i < proxy.cuts.length; i++) {
      expect(proxy.cuts[i]!.lastEventId).toBe(reconnects[i - 1] === undefined ? undefined : String(reconnects[i - 1]));
    }
    await client.sessions.stop(sessionId);
  }, 90_000);

  it('an aborted signal ends the iteration with an AbortError', async () => {
    server = await startTestServer();
    const client = connect({ url: server.url, token: server.token });
    const { sessionId } = await client.sessions.create({ agent: 'fake', workDir: server.tmp });
    const controller = new AbortController();
    const stream = client.events(sessionId, { signal: controller.signal });
    const first = await stream.next();
    expect(first.done).toBe(false);
    controller.abort();
    // What the stream already held may still come out; then the abort.
    const drain = async () => {
      for (let i = 0; i < 100; i++) if ((await stream.next()).done) return 'ended';
      return 'never aborted';
    };
    await expect(drain()).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('client: browser-safe', () => {
  it('src/client.ts and src/client/* load only each other, eventsource-parser and errors.ts (AseError, itself importing nothing at run time) at run time (no node: module)', () => {
    const files = ['client.ts', ...readdirSync(path.join(REPO_ROOT, 'src', 'client')).map((f) => `client/${f}`)];
    // Runtime imports and re-exports; `import type` / `export type` are erased by the compiler.
    const runtimeImports = (source: string) => [...source.matchAll(/^(?:import|export) (?!type )[^;]*?from '([^']+)';/gms)].map((m) => m[1]!);
    for (const file of files) {
      const source = readFileSync(path.join(REPO_ROOT, 'src', file), 'utf8');
      for (const spec of runtimeImports(source)) {
        const inClient = file === 'client.ts' ? spec.startsWith('./client/') : spec.startsWith('./');
        // RemoteError is an AseError (src/errors.ts): the one library file the client loads.
        const errors = spec === (file === 'client.ts' ? './errors.js' : '../errors.js');
        expect(inClient || errors || spec === 'eventsource-parser', `${file} imports ${spec}`).toBe(true);
      }
      expect(source).not.toMatch(/from 'node:/);
    }
    expect(runtimeImports(readFileSync(path.join(REPO_ROOT, 'src', 'errors.ts'), 'utf8')), 'errors.ts loads nothing at run time').toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['client.ts', 'client/connect.ts', 'client/remote-events.ts', 'client/remote-transport.ts']));
  });
});
