/**
 * The event stream's hand-over from replay to live: entries journaled while a slow client was still
 * taking its replay are held, and at the hand-over they wait for room in the client's queue like the
 * replay's own pages do. Before, they were written all at once onto a queue the replay had left up to
 * half full, so a client that was merely slow (not stalled) was cut off right at the hand-over.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import type { TranscriptJournal } from '../../src/effects/journal/transcript-journal.js';
import type { JournaledEntry } from '../../src/events/transcript-entry.js';
import { encodeFrame, EventStream } from '../../src/server/event-stream.js';

const SESSION = 's1';
const MAX_QUEUED = 64 * 1024;

function entry(i: number): Omit<JournaledEntry, 'seq'> {
  return { ts: i, sessionId: SESSION, agent: 'fake', gen: 1, eventId: `i.1-${i}`, type: 'message', payload: { role: 'assistant', text: `${i} ${'x'.repeat(2_000)}` } };
}

/** Reads the stream slowly (a pause before every read) until the `live` frame; returns the entry seqs and whether it ended early. */
async function slowRead(stream: EventStream, pauseMs: number): Promise<{ seqs: number[]; live: boolean; text: string }> {
  const reader = stream.response.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.includes('event: live\n')) break;
  }
  reader.releaseLock();
  const seqs = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  return { seqs, live: text.includes('event: live\n'), text };
}

/**
 * A stream over `replayed` journaled entries; right after the replay reads its last page, entries
 * replayed+1..replayed+late are journaled (so not in that page: the stream holds them).
 */
function streamWithLateEntries(replayed: number, late: number) {
  const journal = new MemoryJournal();
  for (let i = 1; i <= replayed; i++) void journal.append(entry(i));
  let listener: ((e: JournaledEntry, frame: Uint8Array) => void) | undefined;
  const result = { heldBytes: 0, journal, listener: (e: JournaledEntry, frame: Uint8Array) => listener!(e, frame), stream: undefined as unknown as EventStream };
  const journalMeanwhile = () => {
    for (let i = replayed + 1; i <= replayed + late; i++) {
      void journal.append(entry(i));
      const journaled = { ...entry(i), seq: i } as JournaledEntry;
      const frame = encodeFrame('entry', journaled, i);
      result.heldBytes += frame.byteLength;
      listener!(journaled, frame);
    }
  };
  const reading: TranscriptJournal = {
    append: (e) => journal.append(e),
    flush: () => journal.flush(),
    bounds: (id) => journal.bounds(id),
    read: async (id, range) => {
      const page = await journal.read(id, range);
      if (range?.limit !== undefined && page.length < range.limit && result.heldBytes === 0) journalMeanwhile();
      return page;
    },
  };
  result.stream = new EventStream({
    sessionId: SESSION,
    journal: reading,
    cursor: 0,
    maxQueuedBytes: MAX_QUEUED,
    writeTimeoutMs: 10_000,
    inspect: false,
    watchDurable: (l) => {
      listener = l;
      return () => {
        listener = undefined;
      };
    },
    onClose: () => {},
  });
  return result;
}

describe('event stream: the hand-over from replay to live', () => {
  it('a slow client gets the replay, then every entry journaled meanwhile, once and in order, and is not cut off', async () => {
    // ~400 KB to replay through a 64 KB queue; 26 entries (~53 KB) journaled after the last page read.
    const setup = streamWithLateEntries(200, 26);
    const starting = setup.stream.start();
    const read = await slowRead(setup.stream, 30);
    await starting;
    // Held: more than the half of the queue the replay may leave filled, less than the bound (not dropped).
    expect(setup.heldBytes).toBeGreaterThan(MAX_QUEUED / 2);
    expect(setup.heldBytes).toBeLessThan(MAX_QUEUED);
    expect(setup.stream.cutReason).toBeUndefined();
    expect(read.live).toBe(true);
    expect(read.seqs).toEqual(Array.from({ length: 226 }, (_, i) => i + 1));
    // Live from here: the next entry goes straight out, after the `live` frame.
    const seq = await setup.journal.append(entry(227));
    const journaled = { ...entry(227), seq } as JournaledEntry;
    setup.listener(journaled, encodeFrame('entry', journaled, seq));
    const reader = setup.stream.response.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('id: 227\n');
    setup.stream.close();
  });

  it('entries that overflow the hold while the client is slow are read from the journal again: nothing lost, nothing twice', async () => {
    // ~100 KB journaled after the last page read: past the bound, so the hold is dropped and the journal read again.
    const setup = streamWithLateEntries(100, 50);
    const starting = setup.stream.start();
    const read = await slowRead(setup.stream, 30);
    await starting;
    expect(setup.heldBytes).toBeGreaterThan(MAX_QUEUED);
    expect(setup.stream.cutReason).toBeUndefined();
    expect(read.seqs).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    setup.stream.close();
  });
});
