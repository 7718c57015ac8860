/**
 * `treeOrder`, the order `ase sessions` prints: children right under their parent (siblings keep
 * the input order), orphans at the top level marked with the parent they name, every row once,
 * also when parent links form a cycle.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { treeOrder } from '../../src/cli/session-tree-order.js';

const row = (sessionId: string, parentId?: string) => ({ sessionId, ...(parentId !== undefined && { parentId }) });
const walk = (rows: ReturnType<typeof row>[]) => treeOrder(rows).map((t) => [t.row.sessionId, t.depth, t.orphanOf ?? null]);

describe('treeOrder', () => {
  it('puts each child under its parent, one level deeper, siblings in input order', () => {
    const rows = [row('c2', 'root'), row('other'), row('g1', 'c1'), row('root'), row('c1', 'root')];
    expect(walk(rows)).toEqual([
      ['other', 0, null],
      ['root', 0, null],
      ['c2', 1, null],
      ['c1', 1, null],
      ['g1', 2, null],
    ]);
  });

  it('an orphan (its parent not listed) stands at the top level, marked, with its own children under it', () => {
    expect(walk([row('kid', 'gone'), row('grandkid', 'kid'), row('solo')])).toEqual([
      ['kid', 0, 'gone'],
      ['grandkid', 1, null],
      ['solo', 0, null],
    ]);
  });

  it('a parent cycle is broken at its first row: every row still appears once', () => {
    expect(walk([row('a', 'b'), row('b', 'a'), row('c', 'b')])).toEqual([
      ['a', 0, null],
      ['b', 1, null],
      ['c', 2, null],
    ]);
  });

  it('any parent links: every row exactly once, each child right after an ancestor chain ending in its parent', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const arb = fc.uniqueArray(fc.constantFrom(...ids), { minLength: 1 }).chain((present) =>
      fc.tuple(fc.constant(present), fc.array(fc.option(fc.constantFrom(...ids, 'gone'), { nil: undefined }), { minLength: present.length, maxLength: present.length })),
    );
    fc.assert(
      fc.property(arb, ([present, parents]) => {
        const rows = present.map((id, i) => row(id, parents[i] === id ? undefined : parents[i]));
        const out = treeOrder(rows);
        expect(out.map((t) => t.row.sessionId).sort()).toEqual([...present].sort());
        const stack: string[] = [];
        for (const t of out) {
          stack.length = t.depth;
          if (t.depth > 0) expect(t.row.parentId).toBe(stack[t.depth - 1]);
          if (t.orphanOf !== undefined) expect([t.depth, present.includes(t.orphanOf)]).toEqual([0, false]);
          stack.push(t.row.sessionId);
        }
      }),
    );
  });
});
