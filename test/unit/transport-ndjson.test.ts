import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/engines/transport/line-splitter.js';
import { NdjsonWriter, parseLine } from '../../src/engines/transport/ndjson.js';

describe('parseLine', () => {
  it('parses JSON, skips blank lines, reports garbage without throwing', () => {
    const input = '{"type":"a"}\n\n   \nnot json\n{"type":"b","n":[1,2]}\n{"trunc\n42\n';
    const splitter = new LineSplitter();
    const results = splitter.push(Buffer.from(input)).map(parseLine);
    expect(results.filter((r) => r === undefined)).toHaveLength(2);
    const ok = results.filter((r) => r?.ok === true).map((r) => (r as { value: unknown }).value);
    expect(ok).toEqual([{ type: 'a' }, { type: 'b', n: [1, 2] }, 42]);
    const bad = results.filter((r) => r !== undefined && !r.ok);
    expect(bad.map((r) => (r as { line: string }).line)).toEqual(['not json', '{"trunc']);
    for (const r of bad) expect((r as { error: Error }).error).toBeInstanceOf(SyntaxError);
  });
});

async function readAll(stream: PassThrough): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('NdjsonWriter', () => {
  it('keeps order and one-line-per-write under backpressure with a slow reader', async () => {
    const stream = new PassThrough({ highWaterMark: 64 });
    const writes: string[] = [];
    const spy = stream.write.bind(stream);
    stream.write = ((chunk: string, ...rest: never[]) => {
      writes.push(chunk);
      return spy(chunk, ...rest);
    }) as typeof stream.write;
    const writer = new NdjsonWriter(stream);
    const values = Array.from({ length: 200 }, (_, i) => ({ i, text: 'x'.repeat(i % 17), nl: 'a\nb' }));
    let settled = 0;
    const promises = values.map((v) => writer.write(v).then(() => settled++));
    await new Promise((r) => setTimeout(r, 20));
    // Nothing has been read yet: the writer must be holding most of the queue back.
    expect(settled).toBeLessThan(values.length);
    expect(writes.length).toBeLessThan(values.length);
    const reading = readAll(stream);
    await Promise.all(promises);
    const ended = writer.end();
    const text = await reading;
    await ended;
    expect(writes).toHaveLength(values.length);
    for (const w of writes) expect(w.indexOf('\n')).toBe(w.length - 1);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(values);
  });

  it('rejects queued and later writes once the stream is destroyed', async () => {
    const stream = new PassThrough({ highWaterMark: 16 });
    const writer = new NdjsonWriter(stream);
    const first = writer.write({ a: 'x'.repeat(100) });
    const queued = writer.write({ b: 1 });
    stream.destroy(new Error('EPIPE'));
    await expect(queued).rejects.toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
    await expect(first).rejects.toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
    await expect(writer.write({ c: 1 })).rejects.toThrow(/stream (errored|closed)/);
    expect(writer.closed).toBe(true);
  });

  it('rejects writes after end(), and end() flushes first', async () => {
    const received: string[] = [];
    const sink = new Writable({
      highWaterMark: 8,
      write(chunk: Buffer, _enc, cb) {
        received.push(chunk.toString());
        setTimeout(cb, 2);
      },
    });
    const writer = new NdjsonWriter(sink);
    void writer.write({ n: 1 });
    void writer.write({ n: 2 });
    await writer.end();
    expect(received).toEqual(['{"n":1}\n', '{"n":2}\n']);
    await expect(writer.write({ n: 3 })).rejects.toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
    await expect(writer.end()).resolves.toBeUndefined();
  });

  it('rejects unserializable values without writing anything', async () => {
    const stream = new PassThrough();
    const writer = new NdjsonWriter(stream);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(writer.write(circular)).rejects.toMatchObject({ name: 'AseError', code: 'INVALID_INPUT', cause: expect.any(TypeError) });
    await expect(writer.write(undefined)).rejects.toThrow(/not JSON-serializable/);
    expect(stream.readableLength).toBe(0);
  });
});
