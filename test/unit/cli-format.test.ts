/** The CLI's rounding of costs for reading (the data stays exact; see test/integration/cli.test.ts). */
import { describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/cli/format.js';

describe('formatUsd', () => {
  it.each([
    [0, '$0'],
    [0.0001 + 0.0002, '$0.0003'], // 0.00030000000000000003
    [0.0042, '$0.0042'],
    [0.25, '$0.2500'],
    [0.00004, '<$0.0001'],
    [0.00005, '$0.0001'],
    [0.99996, '$1.00'],
    [1.5, '$1.50'],
    [1234.567, '$1234.57'],
    [-0.0003, '-$0.0003'],
    [Number.NaN, '$NaN'],
  ])('%s → %s', (value, shown) => {
    expect(formatUsd(value)).toBe(shown);
  });
});
