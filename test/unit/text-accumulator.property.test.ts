/**
 * TextAccumulator stands in for `text += piece` where an engine gathers a message from its
 * chunks (issue 24): whatever the pieces, what it gives back must be exactly their concatenation,
 * code unit for code unit: ASCII, any other character, lone surrogates, and surrogate pairs split
 * across two pieces included, at any size and however ASCII and other pieces alternate.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextAccumulator } from '../../src/engines/core/text-accumulator.js';

const RUNS = Number(process.env.FC_RUNS ?? 300);

/** Any UTF-16 code units, surrogates alone or paired included. */
const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((units) => String.fromCharCode(...units));
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: codeUnits },
  { weight: 1, arbitrary: fc.constantFrom('\ud83d', '\ude00', '\ud800', 'é', '中', '😀', '\u0000', '') },
);

function gathered(pieces: readonly string[]): TextAccumulator {
  const [first, ...rest] = pieces;
  const text = new TextAccumulator(first);
  for (const p of rest) text.append(p);
  return text;
}

describe('TextAccumulator', () => {
  it('gives back exactly the concatenation of its pieces, and its length', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), (pieces) => {
        const text = gathered(pieces);
        const expected = pieces.join('');
        expect(text.toString()).toBe(expected);
        expect(text.length).toBe(expected.length);
      }),
      { numRuns: RUNS },
    );
  });

  it('gives back the same text when read before the end and appended to after', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.array(piece, { maxLength: 60 }), (before, after) => {
        const text = gathered(before);
        expect(text.toString()).toBe(before.join(''));
        for (const p of after) text.append(p);
        expect(text.toString()).toBe(before.join('') + after.join(''));
      }),
      { numRuns: RUNS },
    );
  });

  it('joins a surrogate pair split across two pieces, and keeps a lone surrogate as it is', () => {
    expect(gathered(['a\ud83d', '\ude00b']).toString()).toBe('a😀b');
    expect(gathered(['ascii first, ', '\ud800', ' then ascii']).toString()).toBe('ascii first, \ud800 then ascii');
    expect(gathered(['\ude00', '\ud83d']).toString()).toBe('\ude00\ud83d');
  });

  it('grows past its first buffer many times over (one piece per chunk of a long message)', () => {
    const pieces = Array.from({ length: 20_000 }, (_, i) => (i === 15_000 ? 'naïve ' : `word${i % 97} `));
    const text = gathered(pieces);
    expect(text.toString()).toBe(pieces.join(''));
    expect(text.length).toBe(pieces.join('').length);
  });

  it('takes a huge piece whole, ASCII or not, before and after short ones', () => {
    const ascii = 'x'.repeat(3 << 20);
    const wide = `${'y'.repeat(1 << 20)}中${'z'.repeat(1 << 20)}`;
    const pieces = ['short ', ascii, ' and ', wide, ' then ', ascii];
    const text = gathered(pieces);
    expect(text.length).toBe(pieces.join('').length);
    expect(text.toString() === pieces.join('')).toBe(true);
  });

  it('is empty when it was given nothing, or only empty pieces', () => {
    expect(new TextAccumulator().toString()).toBe('');
    expect(gathered(['', '', '']).toString()).toBe('');
    expect(gathered(['', '', '']).length).toBe(0);
  });
});
