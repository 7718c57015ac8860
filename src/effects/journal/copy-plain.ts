/**
 * A deep copy of plain data (objects, arrays, primitives) that is several times cheaper than
 * `structuredClone` for the small objects transcript entries are: the MemoryJournal copies every
 * entry on the way in, and a dense stream appends thousands a second (issue 24's profile had
 * `structuredClone` at 5% of a memory session's time). Anything that is not a plain object or an
 * array (a Date, a Map, a class instance, a typed array) is handed to `structuredClone`, so the
 * result is the same as before; so is a subtree deeper than `MAX_DEPTH` (which also keeps a
 * cyclic value from recursing for ever: `structuredClone` copies cycles).
 */

const MAX_DEPTH = 64;

export function copyPlain<T>(value: T): T {
  return copy(value, 0) as T;
}

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return structuredClone(value);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key], depth + 1);
  return out;
}
