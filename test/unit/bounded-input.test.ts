/**
 * The bounds on what an agent can make the host keep or adopt: skipped-input entries (a byte-exact
 * UTF-8 prefix plus the length, fuzzed with fast-check) and the resume-token check EngineEvents
 * applies to every `session_identified`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RESUME_TOKEN_LENGTH, resumeTokenProblem } from '../../src/engines/core/agent-ids.js';
import { EngineEvents } from '../../src/engines/core/engine-events.js';
import { boundSkipped, MAX_SKIPPED, MAX_SKIPPED_RAW_BYTES, MAX_SKIPPED_REASON_BYTES, noteSkipped, utf8Prefix, type SkippedInput } from '../../src/engines/core/skipped-inputs.js';
import type { AgentEvent } from '../../src/events/agent-event.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('utf8Prefix', () => {
  it('is the longest prefix within the bound that splits no character, with the full length (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 0, max: 400 }), (text, max) => {
        const { prefix, bytes: total, truncated } = utf8Prefix(text, max);
        // Lone surrogates encode as U+FFFD (3 bytes), as Buffer does: compare on the encoded form.
        const encoded = Buffer.from(text, 'utf8');
        expect(total).toBe(encoded.length);
        expect(truncated).toBe(encoded.length > max);
        const head = Buffer.from(prefix, 'utf8');
        expect(head.length).toBeLessThanOrEqual(truncated ? max : encoded.length);
        expect(encoded.subarray(0, head.length).equals(head)).toBe(true);
        if (truncated) {
          // Maximal: the next byte starts a character that no longer fits.
          const next = encoded[head.length]!;
          expect((next & 0xc0) !== 0x80).toBe(true);
          const charLength = next < 0x80 ? 1 : next >= 0xf0 ? 4 : next >= 0xe0 ? 3 : 2;
          expect(head.length + charLength).toBeGreaterThan(max);
        } else {
          expect(prefix).toBe(text);
        }
      }),
    );
  });
});

describe('skipped input is bounded in bytes', () => {
  it('keeps small inputs as they came (objects stay objects)', () => {
    const raw = { type: 'echo', got: { nested: [1, 2, 3] } };
    expect(boundSkipped({ reason: 'unknown', raw })).toEqual({ reason: 'unknown', raw });
  });

  it('cuts a long string or a large object to a 2 KiB prefix and records the full size', () => {
    const line = `${'é'.repeat(5_000)}tail`;
    expect(boundSkipped({ reason: 'not JSON', raw: line })).toEqual({ reason: 'not JSON', raw: 'é'.repeat(MAX_SKIPPED_RAW_BYTES / 2), bytes: bytes(line), truncated: true });
    const big = { type: 'x', data: 'y'.repeat(10_000) };
    const entry = boundSkipped({ reason: 'unknown', raw: big });
    expect(entry).toMatchObject({ truncated: true, bytes: bytes(JSON.stringify(big)) });
    expect(entry.raw).toBe(JSON.stringify(big).slice(0, MAX_SKIPPED_RAW_BYTES));
  });

  it('cuts a long reason', () => {
    const entry = boundSkipped({ reason: 'r'.repeat(10_000), raw: 1 });
    expect(bytes(entry.reason)).toBeLessThanOrEqual(MAX_SKIPPED_REASON_BYTES + bytes('…'));
    expect(entry.reason.endsWith('…')).toBe(true);
  });

  it('never throws on values JSON cannot print', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => boundSkipped({ reason: 'x', raw: cyclic })).not.toThrow();
    expect(() => boundSkipped({ reason: 'x', raw: 10n })).not.toThrow();
  });

  it('a list stays within MAX_SKIPPED entries of at most 2 KiB each', () => {
    const list: SkippedInput[] = [];
    for (let i = 0; i < MAX_SKIPPED * 2; i++) noteSkipped(list, { reason: `r${i}`, raw: 'z'.repeat(100_000) });
    expect(list).toHaveLength(MAX_SKIPPED);
    expect(list.at(-1)!.reason).toBe(`r${MAX_SKIPPED * 2 - 1}`);
    expect(list.every((e) => bytes(e.raw as string) === MAX_SKIPPED_RAW_BYTES)).toBe(true);
  });
});

describe('resume tokens reported by agents', () => {
  it.each([
    ['3f1c2a7e-1b2c-4d5e-8f90-0123456789ab'],
    ['tok-1'],
    ['sess_01J8Z:abc@host+1=2~'],
    ['séance'],
    ['x'.repeat(MAX_RESUME_TOKEN_LENGTH)],
  ])('accepts %s', (id) => {
    expect(resumeTokenProblem(id)).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['3f1c\uFFFD\uFFFD-4000', 'U+FFFD'],
    ['a b', 'U+0020'],
    ['a\nb', 'U+000A'],
    ['a\u0000b', 'U+0000'],
    ['a\u200Bb', 'U+200B'],
    ['a\uD800b', 'U+D800'],
    ['../../etc/passwd', '"/"'],
    ['a\\b', '"\\"'],
    ['..', 'directory'],
    ['x'.repeat(MAX_RESUME_TOKEN_LENGTH + 1), 'characters long'],
  ])('refuses %j (%s)', (id, why) => {
    expect(resumeTokenProblem(id)).toContain(why);
  });

  it('EngineEvents emits an error instead of a session_identified with a bad id', () => {
    const events = new EngineEvents({ now: () => 5 });
    const seen: AgentEvent[] = [];
    events.subscribe((e) => seen.push(e));
    events.bind(2);
    events.emit({ type: 'session_identified', resumeToken: 'ok-token' });
    events.emit({ type: 'session_identified', resumeToken: `bad\uFFFD${'x'.repeat(500)}` });
    expect(seen).toEqual([
      { type: 'session_identified', gen: 2, at: 5, resumeToken: 'ok-token' },
      { type: 'error', gen: 2, at: 5, kind: 'protocol', retryable: false, message: expect.stringMatching(/cannot be a resume token \(it is 504 characters long.*not adopted$/) },
    ]);
    expect((seen[1] as { message: string }).message.length).toBeLessThan(300);
  });
});
