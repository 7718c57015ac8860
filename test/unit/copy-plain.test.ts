/**
 * copyPlain (the MemoryJournal's copy of every entry): the same result as structuredClone, and a
 * copy that shares nothing mutable with what it was made from.
 */
import { describe, expect, it } from 'vitest';
import { copyPlain } from '../../src/effects/journal/copy-plain.js';

describe('copyPlain', () => {
  it('copies plain data like structuredClone, sharing nothing', () => {
    const value = { a: 1, s: 'x', n: null, u: undefined, nan: Number.NaN, nested: { list: [1, { deep: [true, 'y'] }], empty: {} } };
    const copy = copyPlain(value);
    expect(copy).toStrictEqual(structuredClone(value));
    copy.nested.list.push(2);
    (copy.nested.list[1] as { deep: unknown[] }).deep.pop();
    expect(value.nested.list).toHaveLength(2);
    expect((value.nested.list[1] as { deep: unknown[] }).deep).toEqual([true, 'y']);
  });

  it('hands values that are not plain objects or arrays to structuredClone', () => {
    const at = new Date(1_700_000_000_000);
    const value = { at, map: new Map([['k', { v: 1 }]]), bytes: new Uint8Array([1, 2]) };
    const copy = copyPlain(value);
    expect(copy.at).toBeInstanceOf(Date);
    expect(copy.at).not.toBe(at);
    expect(copy.at.getTime()).toBe(at.getTime());
    expect(copy.map.get('k')).toEqual({ v: 1 });
    expect(copy.map.get('k')).not.toBe(value.map.get('k'));
    expect([...copy.bytes]).toEqual([1, 2]);
  });

  it('copies a cyclic value without recursing for ever', () => {
    const value: { self?: unknown; name: string } = { name: 'loop' };
    value.self = value;
    const copy = copyPlain(value);
    expect(copy.name).toBe('loop');
    expect(copy).not.toBe(value);
  });
});
