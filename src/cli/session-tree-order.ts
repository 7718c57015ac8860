/**
 * The order `ase sessions` prints sessions in: each sub-agent session right under its parent,
 * one level deeper. A session whose parent is not in the list (removed, or its state unreadable)
 * is an orphan: it stands at the top level, marked with the parent it names. Pure, so the rules
 * are tested without a data dir.
 */

export interface TreeRow<T> {
  row: T;
  /** 0: top level; 1: a child of the row above it at depth 0; and so on. */
  depth: number;
  /** A top-level row that names a parent which is not listed: that parent's id. */
  orphanOf?: string;
}

/**
 * `rows` (already in the order siblings should keep: newest activity first) as a tree walk. Every
 * row appears exactly once: parent links that form a cycle (only a hand-edited or oddly created
 * store has them) are broken at the first row of the cycle met, which then stands at the top level.
 */
export function treeOrder<T extends { sessionId: string; parentId?: string }>(rows: readonly T[]): TreeRow<T>[] {
  const ids = new Set(rows.map((r) => r.sessionId));
  const children = new Map<string, T[]>();
  for (const row of rows) {
    if (row.parentId === undefined || !ids.has(row.parentId)) continue;
    const siblings = children.get(row.parentId);
    if (siblings) siblings.push(row);
    else children.set(row.parentId, [row]);
  }
  const out: TreeRow<T>[] = [];
  const placed = new Set<string>();
  const walk = (row: T, depth: number, orphanOf?: string) => {
    placed.add(row.sessionId);
    out.push({ row, depth, ...(orphanOf !== undefined && { orphanOf }) });
    for (const child of children.get(row.sessionId) ?? []) if (!placed.has(child.sessionId)) walk(child, depth + 1);
  };
  for (const row of rows) {
    if (row.parentId === undefined) walk(row, 0);
    else if (!ids.has(row.parentId)) walk(row, 0, row.parentId);
  }
  // What is left hangs in a parent cycle: no row of it was reached from a top-level one.
  for (const row of rows) if (!placed.has(row.sessionId)) walk(row, 0);
  return out;
}
