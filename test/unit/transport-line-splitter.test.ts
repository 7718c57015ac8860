import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLineTooLong, LineSplitter, type LineTooLongError } from '../../src/engines/transport/line-splitter.js';

/** Feeds `input` cut at `cuts` (byte offsets) and returns all lines plus the end() result. */
function feed(input: Buffer, cuts: number[], maxLineBytes?: number) {
  const splitter = new LineSplitter(maxLineBytes === undefined ? {} : { maxLineBytes });
  const points = [...new Set(cuts.filter((c) => c > 0 && c < input.length))].sort((a, b) => a - b);
  const lines: string[] = [];
  let prev = 0;
  for (const p of [...points, input.length]) {
    lines.push(...splitter.push(input.subarray(prev, p)));
    prev = p;
  }
  return { lines, end: splitter.end(), splitter };
}

describe('LineSplitter', () => {
  it('splits lines, strips \\r, returns the unterminated tail as partial', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('a\nb\r\n\nc'))).toEqual(['a', 'b', '']);
    expect(s.push(Buffer.from('d\n'))).toEqual(['cd']);
    expect(s.end()).toEqual({ line: undefined, partial: false });
    const t = new LineSplitter();
    t.push(Buffer.from('{"x":1}'));
    expect(t.end()).toEqual({ line: '{"x":1}', partial: true });
    expect(() => t.push(Buffer.from('x'))).toThrow(/after end/);
  });

  it('handles every cut position, including inside multi-byte UTF-8 and inside \\r\\n', () => {
    const text = 'héllo 😀 wörld\r\n日本語\n\r\n€\r\nlast 😀';
    const input = Buffer.from(text, 'utf8');
    const expected = ['héllo 😀 wörld', '日本語', '', '€'];
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j++) {
        const { lines, end } = feed(input, [i, j]);
        expect(lines).toEqual(expected);
        expect(end).toEqual({ line: 'last 😀', partial: true });
      }
    }
    // Byte-by-byte.
    const { lines } = feed(input, Array.from({ length: input.length }, (_, k) => k));
    expect(lines).toEqual(expected);
  });

  it('property: any chunking of any line set yields exactly those lines', () => {
    const line = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), fc.array(fc.nat(2000), { maxLength: 30 }), fc.boolean(), (lines, cuts, crlf) => {
        const input = Buffer.from(lines.map((l) => l + (crlf ? '\r\n' : '\n')).join(''), 'utf8');
        const result = feed(input, cuts);
        expect(result.lines).toEqual(lines);
        expect(result.end).toEqual({ line: undefined, partial: false });
        expect(result.splitter.bytesScanned).toBe(input.length);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('latches a LINE_TOO_LONG error for a pending line over the cap and refuses further input', () => {
    const s = new LineSplitter({ maxLineBytes: 10 });
    expect(s.push(Buffer.from('ok\n0123456'))).toEqual(['ok']);
    let caught: unknown;
    try {
      s.push(Buffer.from('789ab'));
    } catch (error) {
      caught = error;
    }
    expect(isLineTooLong(caught)).toBe(true);
    expect(caught).toMatchObject({ name: 'AseError', code: 'LINE_TOO_LONG', details: { bytes: 12, maxLineBytes: 10 } });
    expect(s.error).toBe(caught);
    expect(() => s.push(Buffer.from('\n'))).toThrow(caught as Error);
    expect(() => s.end()).toThrow(caught as Error);
  });

  it('latches for a complete over-long line and keeps the lines before it', () => {
    const s = new LineSplitter({ maxLineBytes: 5 });
    let caught: LineTooLongError | undefined;
    try {
      s.push(Buffer.from('abc\nabcdef\nxyz\n'));
    } catch (error) {
      caught = error as LineTooLongError;
    }
    expect(isLineTooLong(caught)).toBe(true);
    expect(caught!.details.precedingLines).toEqual(['abc']);
    expect(caught!.details.bytes).toBe(6);
  });

  it('accepts a line of exactly maxLineBytes, also when its \\r\\n is split', () => {
    const s = new LineSplitter({ maxLineBytes: 5 });
    expect(s.push(Buffer.from('abcde\r'))).toEqual([]);
    expect(s.push(Buffer.from('\nabcde'))).toEqual(['abcde']);
    expect(s.push(Buffer.from('\n'))).toEqual(['abcde']);
  });

  it('handles a 10 MiB line in 64 KiB chunks, scanning each byte once', () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
    const input = Buffer.concat([Buffer.from('{"a":1}\n'), big, Buffer.from('\nz\n')]);
    const s = new LineSplitter();
    const lines: string[] = [];
    const chunk = 64 * 1024;
    for (let off = 0; off < input.length; off += chunk) lines.push(...s.push(input.subarray(off, off + chunk)));
    expect(lines.length).toBe(3);
    expect(lines[0]).toBe('{"a":1}');
    expect(lines[1]!.length).toBe(big.length);
    expect(lines[1] === 'a'.repeat(big.length)).toBe(true);
    expect(lines[2]).toBe('z');
    expect(s.bytesScanned).toBe(input.length);
  });
});
