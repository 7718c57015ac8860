/**
 * A replayed page as SSE bytes in chunks (src/server/entry-frames.ts), read back by the same SSE
 * parser the client uses (eventsource-parser): every entry is one `entry` event with its seq as id
 * and its JSON as data, in order, whatever the chunk bound, multi-byte text included; no chunk
 * passes the bound unless one frame alone does.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import type { JournaledJson } from '../../src/effects/journal/transcript-journal.js';
import { entryFrameChunks } from '../../src/server/entry-frames.js';

function parse(chunks: readonly Uint8Array[]): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

const entries: JournaledJson[] = Array.from({ length: 300 }, (_, i) => ({
  seq: 1000 + i * 3,
  json: JSON.stringify({ seq: 1000 + i * 3, payload: { text: i % 7 === 0 ? `ünïcødé ${'😀'.repeat(i)} "quoted" \\ \u2028` : `entry ${i}`.repeat(i % 50) } }),
}));

describe('entryFrameChunks', () => {
  it.each([1, 64, 1024, 64 * 1024, 10 * 1024 * 1024])('frames every entry once, in order, in chunks of at most %i bytes', (max) => {
    const chunks = entryFrameChunks(entries, max);
    const events = parse(chunks.map((c) => c.bytes));
    expect(events.map((e) => ({ id: e.id, event: e.event, data: e.data }))).toEqual(entries.map((e) => ({ id: String(e.seq), event: 'entry', data: e.json })));
    for (const [i, chunk] of chunks.entries()) {
      const frames = parse([chunk.bytes]);
      // Whole frames only: each chunk parses alone, and its last frame is its lastSeq.
      expect(frames.at(-1)?.id).toBe(String(chunk.lastSeq));
      if (frames.length > 1) expect(chunk.bytes.byteLength, `chunk ${i}`).toBeLessThanOrEqual(max);
    }
    expect(chunks.reduce((n, c) => n + c.bytes.byteLength, 0)).toBe(entries.reduce((n, e) => n + Buffer.byteLength(`id: ${e.seq}\nevent: entry\ndata: ${e.json}\n\n`), 0));
    if (max >= 10 * 1024 * 1024) expect(chunks).toHaveLength(1);
  });

  it('no entries, no chunks', () => {
    expect(entryFrameChunks([], 1024)).toEqual([]);
  });
});
