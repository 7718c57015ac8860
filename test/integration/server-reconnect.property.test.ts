/**
 * The reconnect property of `ase serve`'s event stream: while a session runs turns, a client's
 * stream is cut at random byte offsets (mid-frame too) and resumed with `Last-Event-ID` = the id of
 * the last complete frame it got. However it is cut, the entries the client ends up with equal the
 * journal's: the same eventIds, in seq order, none lost, none twice.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryJournal, type JournalRange, type TranscriptEntry } from '../../src/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/**
 * Reads take a while, as a file journal's do: entries appended while a stream replays arrive on its
 * live feed mid-replay, the overlap the stream must neither drop nor repeat.
 */
class SlowReadJournal extends MemoryJournal {
  override async read(sessionId: string, range?: JournalRange): Promise<TranscriptEntry[]> {
    // Before the read: entries appended meanwhile are in both the page and the live feed (overlap).
    await new Promise((r) => setTimeout(r, Math.random() * 10));
    const result = await super.read(sessionId, range);
    // After it: entries appended meanwhile are only on the live feed (must not be dropped).
    await new Promise((r) => setTimeout(r, Math.random() * 10));
    return result;
  }
}

const RUNS = Number(process.env.FC_RUNS ?? 25);

/** Each turn: streamed text, a tool call and result, more text: many entries, spread over time. */
const SCRIPT = {
  turns: [
    [
      { afterMs: 2, text: 'first part of the answer' },
      { afterMs: 2, emit: { type: 'tool_call', callId: 'c1', toolName: 'Read', input: { path: 'a.txt' } } },
      { afterMs: 2, emit: { type: 'tool_result', callId: 'c1', status: 'completed', output: 'contents', isError: false } },
      { afterMs: 2, text: 'second part' },
    ],
  ],
} as const;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(SCRIPT as never, { presenceGraceMs: 50, journal: new SlowReadJournal() });
});
afterAll(async () => {
  await server.stop();
});

interface Received {
  seq: number;
  eventId: string;
}

/**
 * One connection: reads until `cutAfterBytes` bytes arrived (or `maxMs` passed), keeps only frames
 * completed before the cut (as an EventSource would dispatch them), then drops the connection.
 */
async function connectOnce(id: string, lastEventId: string | undefined, cutAfterBytes: number, maxMs: number, into: Received[]): Promise<string | undefined> {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/api/sessions/${id}/events`, {
    headers: { ...server.headers, ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const timer = setTimeout(() => controller.abort(), maxMs);
  try {
    while (bytes < cutAfterBytes) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
    }
  } catch {
    // aborted by the timer
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  const all = Buffer.concat(chunks).subarray(0, cutAfterBytes).toString('utf8');
  // Only complete frames (ended by a blank line) are dispatched.
  const complete = all.slice(0, all.lastIndexOf('\n\n') + 2);
  let last = lastEventId;
  for (const block of complete.split('\n\n')) {
    const lines = block.split('\n');
    const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    if (id !== undefined) last = id;
    if (event === 'entry') {
      const entry = JSON.parse(data) as Received;
      into.push({ seq: entry.seq, eventId: entry.eventId });
    }
  }
  return last;
}

describe('event stream reconnects', () => {
  it(
    'cut anywhere and resumed with Last-Event-ID, the client holds exactly the journal',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.array(fc.record({ cutAfterBytes: fc.integer({ min: 1, max: 6000 }), maxMs: fc.integer({ min: 5, max: 60 }) }), { minLength: 1, maxLength: 12 }),
          async (turns, cuts) => {
            const id = await server.newSession();
            const received: Received[] = [];
            let last: string | undefined;
            // The producer: `turns` messages, each sent when the previous turn ended.
            const producing = (async () => {
              for (let i = 0; i < turns; i++) {
                await server.api('POST', `/api/sessions/${id}/messages`, { text: `message ${i}`, localId: `m${i}` });
                const end = Date.now() + 5000;
                while ((await server.api('GET', `/api/sessions/${id}`)).body.usage.turns < i + 1) {
                  if (Date.now() > end) throw new Error('turn did not end');
                  await new Promise((r) => setTimeout(r, 3));
                }
              }
            })();
            for (const cut of cuts) last = await connectOnce(id, last, cut.cutAfterBytes, cut.maxMs, received);
            await producing;
            // Settled: the journal's last entry is the last turn's end.
            const journal = (await server.api('GET', `/api/sessions/${id}/transcript?limit=500`)).body.entries as Received[];
            const lastSeq = journal.at(-1)!.seq;
            // A final connection, read until it has everything (not cut).
            for (let attempt = 0; attempt < 20 && Number(last ?? 0) < lastSeq; attempt++) {
              last = await connectOnce(id, last, Number.MAX_SAFE_INTEGER, 200, received);
            }
            expect(received.map((r) => r.seq)).toEqual(journal.map((e) => e.seq));
            expect(received.map((r) => r.eventId)).toEqual(journal.map((e) => e.eventId));
            await server.api('POST', `/api/sessions/${id}/stop`, {});
          },
        ),
        { numRuns: RUNS },
      );
    },
    RUNS * 8000,
  );
});
