// @ts-check
/**
 * `ase serve` in code: a server on a free loopback port, a session created over HTTP, its event
 * stream read with the token (each durable frame's id is the entry's seq), a message sent with a
 * client-chosen localId (retried: answered the same, delivered once), then a stream resumed from
 * a seq with `Last-Event-ID` that replays only what came after.
 *
 * Nothing is written to disk but a temp dir; the agent is the built-in fake engine (it echoes).
 * Run it with plain Node: `node examples/remote-server.mjs` (after `npm run build`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MemoryJournal, MemoryStore } from 'agent-session-engine';
import { startServer } from 'agent-session-engine/server';

/** @typedef {{ id: string | undefined, event: string, data: string }} Frame */

/**
 * Reads an SSE response until `stop(frame)` is true; returns the frames.
 * @param {Response} response
 * @param {(frame: Frame) => boolean} stop
 * @returns {Promise<Frame[]>}
 */
async function readFrames(response, stop) {
  if (!response.body) throw new Error(`no stream: ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const frames = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const lines = buffer.slice(0, cut).split('\n');
      buffer = buffer.slice(cut + 2);
      /** @type {Frame} */
      const frame = { id: undefined, event: 'message', data: '' };
      for (const line of lines) {
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) frame.data += line.slice(6);
      }
      if (!frame.data) continue;
      frames.push(frame);
      if (stop(frame)) {
        await reader.cancel();
        return frames;
      }
    }
  }
  return frames;
}

export async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'ase-example-'));
  const server = await startServer({ port: 0, dataDir, store: new MemoryStore(), journal: new MemoryJournal() });
  try {
    const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    /** @param {string} method @param {string} route @param {unknown} [body] @returns {Promise<any>} */
    const api = async (method, route, body) => (await fetch(`${server.url}${route}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) })).json();

    const { sessionId } = await api('POST', '/api/sessions', { agent: 'fake', workDir: dataDir });
    const stream = await fetch(`${server.url}/api/sessions/${sessionId}/events`, { headers });
    const turnEnds = readFrames(stream, (f) => f.event === 'entry' && JSON.parse(f.data).type === 'turn_complete');

    const receipt = await api('POST', `/api/sessions/${sessionId}/messages`, { text: 'hello', localId: 'msg-1' });
    const again = await api('POST', `/api/sessions/${sessionId}/messages`, { text: 'hello', localId: 'msg-1' });
    console.log(`message msg-1 stored as seq ${receipt.seq}; the retry got seq ${again.seq}`);

    /** @type {{ seq: number, type: string }[]} */
    const entries = (await turnEnds).filter((f) => f.event === 'entry').map((f) => JSON.parse(f.data));
    for (const entry of entries) console.log(`#${entry.seq} ${entry.type}`);

    // A client that had seq 2 reconnects: it gets 3, 4, ... only.
    const resumed = await fetch(`${server.url}/api/sessions/${sessionId}/events`, { headers: { ...headers, 'last-event-id': '2' } });
    const replay = await readFrames(resumed, (f) => f.event === 'live');
    console.log(`resumed after seq 2: ${replay.filter((f) => f.event === 'entry').map((f) => f.id).join(', ')}`);

    /** @type {{ entries: { seq: number, type: string }[] }} */
    const { entries: transcript } = await api('GET', `/api/sessions/${sessionId}/transcript`);
    console.log(`user messages in the journal: ${transcript.filter((e) => e.type === 'user_message').length}`);
    return transcript;
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
