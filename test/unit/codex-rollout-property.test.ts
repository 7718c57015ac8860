/**
 * fast-check properties of the rollout reader on the REAL fixtures (both dialects):
 * - any chunking of the file yields exactly the events of reading it whole;
 * - resuming from any event's cursor yields exactly the events after it;
 * - stopping after an arbitrary byte prefix (mid-line, mid-UTF-8 character) and resuming from
 *   the reader's cursor loses and repeats nothing;
 * and of the byte line reader on arbitrary text (exact offsets, partial-line carry).
 * FC_RUNS sets the number of runs (default 200).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readRolloutBytes, RolloutReader, type TailedEvent } from '../../src/engines/codex/rollout/index.js';
import { ByteLineReader } from '../../src/engines/codex/rollout/line-reader.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const dir = join(import.meta.dirname, '..', 'fixtures', 'codex', 'rollout');
const FIXTURES = ['legacy-mcp-server-0.153.4', 'paginated-app-server-0.169.0'].map((name) => {
  const path = join(dir, `${name}.rollout.jsonl`);
  // A multi-byte character in the data, so cuts can land inside a UTF-8 sequence.
  const bytes = Buffer.from(readFileSync(path, 'utf8').replaceAll('say hello', 'say héllo 😀'), 'utf8');
  return { name, path, bytes, whole: readRolloutBytes(path, bytes).events };
});

const comparable = (events: TailedEvent[]) => events.map((e) => ({ key: e.key, event: e.event, cursor: e.cursor, line: e.line }));

/** Pushes `bytes` cut at the given points into `reader`. */
function pushChunked(reader: RolloutReader, bytes: Buffer, cuts: number[]): TailedEvent[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: TailedEvent[] = [];
  let previous = 0;
  for (const point of [...points, bytes.length]) {
    out.push(...reader.push(bytes.subarray(previous, point)));
    previous = point;
  }
  return out;
}

describe.each(FIXTURES)('rollout reader properties: $name', ({ path, bytes, whole }) => {
  it('has the multi-byte text and a full event list to work on', () => {
    expect(whole.length).toBeGreaterThan(20);
    expect(whole.some((e) => e.event.type === 'message' && JSON.stringify(e.event).includes('héllo 😀'))).toBe(true);
  });

  it('any chunking yields the same events as reading the file whole', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        const reader = new RolloutReader(path);
        expect(comparable(pushChunked(reader, bytes, cuts))).toEqual(comparable(whole));
        expect(reader.cursor.byteOffset).toBe(bytes.length);
        expect(reader.diagnostics).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('resuming from any event cursor yields exactly the events after it (also chunked)', () => {
    fc.assert(
      fc.property(fc.nat({ max: whole.length - 1 }), fc.array(fc.nat(), { maxLength: 10 }), (index, cuts) => {
        const reader = new RolloutReader(path, { from: whole[index]!.cursor });
        expect(comparable(pushChunked(reader, bytes, cuts))).toEqual(comparable(whole.slice(index + 1)));
        expect(reader.diagnostics).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('stopping after any byte prefix and resuming from the reader cursor loses and repeats nothing', () => {
    fc.assert(
      fc.property(fc.nat({ max: bytes.length }), (prefix) => {
        const first = new RolloutReader(path);
        const before = first.push(bytes.subarray(0, prefix));
        const resumed = new RolloutReader(path, { from: first.cursor }).push(bytes);
        expect(comparable([...before, ...resumed])).toEqual(comparable(whole));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('ByteLineReader', () => {
  it('reports exact byte spans, decodes split characters, and carries the unterminated tail', () => {
    const text = fc.array(fc.oneof(fc.constantFrom('\n', 'é', '😀', '日', '\r'), fc.string({ maxLength: 5 })), { maxLength: 30 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 20 }), (input, cuts) => {
        const bytes = Buffer.from(input, 'utf8');
        const reader = new ByteLineReader();
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const lines = [];
        let previous = 0;
        for (const point of [...points, bytes.length]) {
          lines.push(...reader.push(bytes.subarray(previous, point)));
          previous = point;
        }
        const complete = input.split('\n').slice(0, -1);
        expect(lines.map((l) => l.bytes.toString('utf8'))).toEqual(complete);
        let offset = 0;
        for (const line of lines) {
          expect(line.start).toBe(offset);
          expect(bytes.subarray(line.start, line.end - 1).equals(line.bytes)).toBe(true);
          expect(bytes[line.end - 1]).toBe(0x0a);
          offset = line.end;
        }
        expect(reader.consumedOffset).toBe(offset);
        expect(reader.carriedBytes).toBe(bytes.length - offset);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('skips an over-long line (reported, not fatal) and keeps offsets exact', () => {
    const reader = new ByteLineReader(0, 8);
    const input = Buffer.from('short\nthis line is too long\nok\n');
    const lines = [...reader.push(input.subarray(0, 10)), ...reader.push(input.subarray(10))];
    expect(lines.map((l) => [l.bytes.toString(), l.tooLong, l.start, l.end])).toEqual([
      ['short', false, 0, 6],
      ['', true, 6, 28],
      ['ok', false, 28, 31],
    ]);
  });
});
