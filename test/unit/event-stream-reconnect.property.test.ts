/**
 * The event stream's promise to a client that falls behind (docs/server.md, "Slow clients"): it may
 * be cut off, and coming back with its cursor (Last-Event-ID) it gets every durable entry exactly
 * once, in order, and reaches the live feed. fast-check drives a session that journals entries and
 * broadcasts ephemeral frames of random sizes while a client reads at random rates, stalls, and is
 * cut off by a queue bound small enough that cuts happen in most runs; a cut client reconnects from
 * the last seq it holds, as EventSource and the server's own page do. Every stream the client opens
 * must also end or go live: a replay that never finishes would leave a reader waiting forever.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import type { JournaledEntry, TranscriptEntry } from '../../src/events/transcript-entry.js';
import { encodeFrame, EventStream } from '../../src/server/event-stream.js';

const SESSION = 's1';

type Step =
  | { kind: 'entry'; bytes: number; count: number }
  | { kind: 'ephemeral'; bytes: number }
  | { kind: 'read'; chunks: number }
  | { kind: 'turn' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('entry' as const), bytes: fc.integer({ min: 10, max: 6_000 }), count: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant('ephemeral' as const), bytes: fc.integer({ min: 10, max: 6_000 }) }),
  fc.record({ kind: fc.constant('read' as const), chunks: fc.integer({ min: 0, max: 20 }) }),
  fc.constant({ kind: 'turn' as const }),
);

function entry(i: number, bytes: number): TranscriptEntry {
  return { ts: i, sessionId: SESSION, agent: 'fake', gen: 1, eventId: `e-${i}`, type: 'message', payload: { role: 'assistant', text: 'x'.repeat(bytes) } } as TranscriptEntry;
}

/** A client of one session: reads frames, notes entry seqs, reconnects with its cursor when cut off. */
class Client {
  seqs: number[] = [];
  connections = 0;
  live = false;
  #stream: EventStream | undefined;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #text = '';
  readonly #decoder = new TextDecoder();
  /** A read not answered yet (the client waited for it and moved on; it is taken next time). */
  #pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;

  constructor(readonly open: (cursor: number) => EventStream) {}

  get lastSeq(): number {
    return this.seqs.at(-1) ?? 0;
  }

  connect(): void {
    this.connections++;
    this.live = false;
    this.#text = '';
    this.#stream = this.open(this.lastSeq);
    this.#reader = this.#stream.response.getReader();
  }

  /** Takes one chunk if one comes within `waitMs` (reconnecting if the stream ended: cut off); false if none came. */
  async next(waitMs: number): Promise<boolean> {
    const read = (this.#pending ??= this.#reader!.read());
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([read, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)))]);
    clearTimeout(timer);
    if (result === undefined) return false;
    this.#pending = undefined;
    this.#absorb(result);
    return true;
  }

  #absorb(result: ReadableStreamReadResult<Uint8Array>): void {
    if (result.done) {
      this.connect();
      return;
    }
    this.#text += this.#decoder.decode(result.value, { stream: true });
    for (let end = this.#text.indexOf('\n\n'); end >= 0; end = this.#text.indexOf('\n\n')) {
      const frame = this.#text.slice(0, end);
      this.#text = this.#text.slice(end + 2);
      const id = /^id: (\d+)\nevent: entry\n/.exec(frame);
      if (id) this.seqs.push(Number(id[1]));
      if (frame.startsWith('event: live\n')) this.live = true;
    }
  }

  close(): void {
    this.#stream?.close();
  }
}

describe('event stream: a client cut off and coming back with its cursor', () => {
  it('gets every entry exactly once, in order, and goes live, whatever the sizes, rates and cuts', async () => {
    let cutRuns = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 8, max: 32 }), async (steps, queueKiB) => {
        const journal = new MemoryJournal();
        const listeners = new Set<(e: JournaledEntry, frame: Uint8Array) => void>();
        // As the hub does: one frame per journaled entry, handed to every stream.
        const unwatch = journal.watch(SESSION, (e) => {
          const frame = encodeFrame('entry', e, e.seq);
          for (const l of [...listeners]) l(e, frame);
        });
        const streams = new Set<EventStream>();
        const client = new Client((cursor) => {
          const stream = new EventStream({
            sessionId: SESSION,
            journal,
            cursor,
            inspect: false,
            maxQueuedBytes: queueKiB * 1024,
            writeTimeoutMs: 60_000,
            watchDurable: (l) => {
              listeners.add(l);
              return () => listeners.delete(l);
            },
            onClose: (s) => streams.delete(s),
          });
          streams.add(stream);
          void stream.start();
          return stream;
        });
        client.connect();
        let next = 1;
        try {
          for (const s of steps) {
            if (s.kind === 'entry') for (let i = 0; i < s.count; i++) await journal.append(entry(next++, s.bytes));
            else if (s.kind === 'ephemeral') {
              const frame = encodeFrame('agent', { text: 'y'.repeat(s.bytes) });
              for (const stream of streams) stream.write(frame);
            } else if (s.kind === 'read') for (let i = 0; i < s.chunks; i++) await client.next(2);
            else await new Promise((resolve) => setImmediate(resolve));
          }
          const last = next - 1;
          // The session is quiet now: a reading client must catch up and go live within a bounded
          // number of takes (a replay that stopped would make every take wait).
          let idle = 0;
          while (!(client.live && client.lastSeq === last)) {
            if ((await client.next(50)) === true) idle = 0;
            else if (++idle > 40) throw new Error(`stuck: has ${client.lastSeq} of ${last}, live ${client.live}, connections ${client.connections}`);
          }
          expect(client.seqs).toEqual(Array.from({ length: last }, (_, i) => i + 1));
          if (client.connections > 1) cutRuns++;
        } finally {
          client.close();
          unwatch();
        }
      }),
      { numRuns: 150 },
    );
    // The bound is small enough that the property is about cut clients, not only about readers that keep up.
    expect(cutRuns).toBeGreaterThan(10);
  }, 120_000);
});
