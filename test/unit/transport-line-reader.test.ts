/**
 * readLines (src/engines/transport/line-reader.ts), the read loop under both NDJSON readers (the
 * supervised process, the ACP agent stream): lines in order across chunk splits, the last line
 * without '\n', a too-long line (the lines before it read, nothing after), stream errors, stop.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/engines/transport/line-reader.js';

function reader(options: { maxLineBytes?: number; withError?: boolean } = {}) {
  const stream = new PassThrough();
  const seen: string[] = [];
  const ended = new Promise<void>((resolve) => {
    readLines(
      stream,
      {
        line: (line) => void seen.push(line),
        tooLong: (error) => void seen.push(`TOO LONG ${error.details.bytes}`),
        end: () => {
          seen.push('END');
          resolve();
        },
        ...(options.withError && { error: (error: unknown) => void seen.push(`ERROR ${(error as Error).message}`) }),
      },
      { maxLineBytes: options.maxLineBytes },
    );
  });
  return { stream, seen, ended };
}

describe('readLines', () => {
  it('hands over lines in order across chunk splits, a multi-byte character split included, and the last line without its newline', async () => {
    const r = reader();
    const bytes = Buffer.from('one\r\ntw\u20aco\n\nthree');
    for (let i = 0; i < bytes.length; i += 3) r.stream.write(bytes.subarray(i, i + 3));
    r.stream.end();
    await r.ended;
    expect(r.seen).toEqual(['one', 'tw\u20aco', '', 'three', 'END']);
  });

  it('a line over the cap: the lines before it in its chunk are read, then tooLong, then nothing more (not even the end\'s last line)', async () => {
    const r = reader({ maxLineBytes: 8 });
    r.stream.write('short\nalso ok\n' + 'x'.repeat(20) + '\nafter\n');
    r.stream.write('more\n');
    r.stream.end('tail');
    await r.ended;
    expect(r.seen).toEqual(['short', 'also ok', 'TOO LONG 20', 'END']);
  });

  it('a stream error reaches the error handler and stops the reader; stop() removes every listener', async () => {
    const r = reader({ withError: true });
    r.stream.write('a\n');
    await new Promise((resolve) => setImmediate(resolve));
    r.stream.destroy(new Error('pipe broke'));
    await new Promise((resolve) => r.stream.once('close', resolve));
    expect(r.seen).toEqual(['a', 'ERROR pipe broke']);
    expect(r.stream.listenerCount('data') + r.stream.listenerCount('end') + r.stream.listenerCount('error')).toBe(0);

    const quiet = new PassThrough();
    const stop = readLines(quiet, { line: () => undefined, tooLong: () => undefined });
    expect(quiet.listenerCount('error')).toBe(0); // without an error handler the stream's owner listens
    stop();
    expect(quiet.listenerCount('data') + quiet.listenerCount('end')).toBe(0);
  });
});
