/**
 * A replayed page of journal entries as Server-Sent Events bytes: `id: <seq>`, `event: entry` and
 * the entry's JSON text (JournaledJson, one line) per frame, several frames per chunk.
 *
 * Why chunks of frames, not one Uint8Array per frame: ten concurrent replays of a long session
 * made a million small ArrayBuffers, each queued for its client, so many of them survived young
 * collections and were copied and promoted (the GC pauses that held the loop longest), and each went
 * to the socket in its own write. A chunk is written once per page part; the bytes are the same.
 */
import type { JournaledJson } from '../effects/journal/transcript-journal.js';

export interface FrameChunk {
  /** Whole frames, in seq order. */
  bytes: Buffer;
  /** The seq of the chunk's last frame (the client's cursor once it has taken the chunk). */
  lastSeq: number;
}

const DATA = '\nevent: entry\ndata: ';

/**
 * The frames of `entries` (each JSON one line, as JournaledJson promises), cut into chunks of at
 * most `maxChunkBytes` each; an entry whose frame alone is longer gets a chunk of its own.
 */
export function entryFrameChunks(entries: readonly JournaledJson[], maxChunkBytes: number): FrameChunk[] {
  const chunks: FrameChunk[] = [];
  let from = 0;
  while (from < entries.length) {
    // Size the chunk first, so its bytes are one allocation written in place (no string per frame).
    let to = from;
    let total = 0;
    while (to < entries.length) {
      const entry = entries[to]!;
      const size = frameHead(entry.seq).length + Buffer.byteLength(entry.json, 'utf8') + 2;
      if (to > from && total + size > maxChunkBytes) break;
      total += size;
      to++;
    }
    const bytes = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = from; i < to; i++) {
      const entry = entries[i]!;
      at += bytes.write(frameHead(entry.seq), at, 'latin1');
      at += bytes.write(entry.json, at, 'utf8');
      bytes[at++] = 0x0a;
      bytes[at++] = 0x0a;
    }
    chunks.push({ bytes, lastSeq: entries[to - 1]!.seq });
    from = to;
  }
  return chunks;
}

function frameHead(seq: number): string {
  return `id: ${seq}${DATA}`;
}
