/**
 * `ase serve` probed as an attacker would: a foreign `Host` (DNS rebinding) is refused before
 * authentication, a malformed percent-escape is a 400 (never a 500), an unexpected failure is logged
 * without the request's secrets and answered 500 with the request id the log line carries, ids
 * starting with `.` are refused, and a `workDir` that is a file is called a file.
 */
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, type JournalRange } from '../../src/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A raw request: fetch will not send a Host header of our choosing. */
function rawGet(url: string, pathAndQuery: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: pathAndQuery, method: 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Host allow-list', () => {
  it('refuses a foreign Host with 421 before authentication, even with the token; loopback names pass', async () => {
    server = await startTestServer();
    const port = new URL(server.url).port;
    const rebound = await rawGet(server.url, '/api/sessions', { host: `evil.example:${port}`, authorization: `Bearer ${server.token}` });
    expect(rebound.status).toBe(421);
    expect(rebound.body.error.code).toBe('FORBIDDEN_HOST');
    // Before auth: no token, still 421 (not 401), and the page too.
    expect((await rawGet(server.url, '/api/sessions', { host: 'evil.example' })).status).toBe(421);
    expect((await rawGet(server.url, `/?token=${server.token}`, { host: 'evil.example' })).status).toBe(421);
    // A trailing-dot or upper-case spelling of a foreign name is still foreign; garbage is too.
    expect((await rawGet(server.url, '/api/sessions', { host: 'EVIL.example.' })).status).toBe(421);
    expect((await rawGet(server.url, '/api/sessions', { host: 'localhost.evil.example' })).status).toBe(421);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'app.localhost', 'LOCALHOST.']) {
      const ok = await rawGet(server.url, '/api/sessions', { host, authorization: `Bearer ${server.token}` });
      expect(ok.status, host).toBe(200);
    }
  });

  it('answers a name given in allowedHosts (--allow-host), and only that one', async () => {
    server = await startTestServer({}, { allowedHosts: ['ase.lan'] });
    expect((await rawGet(server.url, '/api/sessions', { host: 'ase.lan:8787', authorization: `Bearer ${server.token}` })).status).toBe(200);
    expect((await rawGet(server.url, '/api/sessions', { host: 'ase.lan' })).status).toBe(401);
    expect((await rawGet(server.url, '/api/sessions', { host: 'other.lan' })).status).toBe(421);
  });
});

describe('malformed requests and unexpected failures', () => {
  it('a malformed percent-escape in the path is 400, authenticated or not', async () => {
    server = await startTestServer();
    const id = await server.newSession();
    const probes = ['/api/sessions/%E0%A4%A/events?ticket=x', '/api/sessions/%E0%A4%A', '/%', `/api/sessions/${id}/permissions/%ZZ`];
    for (const probe of probes) {
      const anonymous = await rawGet(server.url, probe, {});
      expect(anonymous.status, probe).toBe(400);
      expect(anonymous.body.error.code).toBe('INVALID_INPUT');
      expect((await server.api('GET', probe)).status, probe).toBe(400);
    }
  });

  it('an unexpected error is logged once with a request id and no secrets, and answered 500 with that id', async () => {
    const logged: string[] = [];
    class BrokenJournal extends MemoryJournal {
      override async read(sessionId: string, range?: JournalRange) {
        if (range?.limit === 2) throw new TypeError('the disk caught fire');
        return super.read(sessionId, range);
      }
    }
    server = await startTestServer({}, { journal: new BrokenJournal(), logError: (line) => logged.push(line) });
    const id = await server.newSession();
    const { status, body } = await server.api('GET', `/api/sessions/${id}/transcript?limit=1&ticket=SECRET-TICKET`);
    expect(status).toBe(500);
    expect(body.error.code).toBe('INTERNAL');
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    // The client learns nothing of the failure itself; the log has it, under the same id.
    expect(body.error.message).not.toContain('fire');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(body.error.requestId);
    expect(logged[0]).toContain('the disk caught fire');
    expect(logged[0]).toContain(`GET /api/sessions/${id}/transcript`);
    expect(logged[0]).not.toContain('SECRET-TICKET');
    expect(logged[0]).not.toContain(server.token);
    // An expected refusal is not logged.
    expect((await server.api('GET', '/api/sessions/nope')).status).toBe(404);
    expect(logged).toHaveLength(1);
  });
});

describe('POST /messages does not read the journal', () => {
  it('answers a message and its retry with the seq the hub heard, reading no journal entries', async () => {
    let reads = 0;
    class CountingJournal extends MemoryJournal {
      override async read(sessionId: string, range?: JournalRange) {
        reads++;
        return super.read(sessionId, range);
      }
    }
    server = await startTestServer({}, { journal: new CountingJournal() });
    const id = await server.newSession();
    reads = 0;
    const first = await server.api('POST', `/api/sessions/${id}/messages`, { text: 'hi', localId: 'm-1' });
    expect(first.body).toMatchObject({ localId: 'm-1', status: 'delivered', seq: expect.any(Number) });
    const retry = await server.api('POST', `/api/sessions/${id}/messages`, { text: 'hi', localId: 'm-1' });
    expect(retry.body).toEqual(first.body);
    expect(reads).toBe(0);
  });
});

describe('request bodies are counted as they stream in', () => {
  it('a 64 MiB chunked body (no Content-Length) is refused at the limit, without the server reading the rest', async () => {
    server = await startTestServer({}, { maxBodyBytes: 256 * 1024 });
    const { hostname, port } = new URL(server.url);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const total = 64 * 1024 * 1024;
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ hostname, port, path: '/api/sessions', method: 'POST', headers: { authorization: `Bearer ${server!.token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', (error) => (sent >= total ? undefined : reject(error)));
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      req.write('{"agent": "fake", "workDir": "');
      pump();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'BODY_TOO_LARGE' });
    // Answered long before the client could send it all: the server stopped at the limit.
    expect(sent).toBeLessThan(total / 2);
    expect((await server.api('GET', '/api/sessions')).body.sessions).toEqual([]);
    // A body just under the limit, chunked too, still works.
    const ok = await server.api('POST', '/api/sessions', JSON.stringify({ agent: 'fake', workDir: server.tmp, engineOptions: { pad: 'x'.repeat(200 * 1024) } }));
    expect(ok.status).not.toBe(413);
  });
});

describe('ids and directories', () => {
  it('refuses session ids that start with "." (hidden files, . and ..)', async () => {
    server = await startTestServer();
    for (const id of ['.hidden', '....', '.', '..', '.a.b']) {
      // `.` and `..` as path segments are resolved away by the client; the others reach the server.
      if (id.length > 2) expect((await server.api('GET', `/api/sessions/${id}/transcript`)).status, id).toBe(400);
      const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: server.tmp, parentId: id });
      expect(created.status, id).toBe(400);
    }
    // Dots inside are still fine.
    expect((await server.api('GET', '/api/sessions/a.b/transcript')).status).toBe(404);
  });

  it('a workDir that is a file is called a file, and nothing is created', async () => {
    server = await startTestServer();
    const file = path.join(server.tmp, 'plain.txt');
    await fs.writeFile(file, 'not a directory');
    const created = await server.api('POST', '/api/sessions', { agent: 'fake', workDir: file });
    expect(created.status).toBe(400);
    expect(created.body.error.message).toContain('is a file, not a directory');
    expect(created.body.error.message).not.toContain('does not exist');
    expect((await server.api('GET', '/api/sessions')).body.sessions).toEqual([]);
  });
});
