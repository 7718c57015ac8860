/**
 * Ids an agent reports are checked before the session adopts them. A resume token is stored, sent
 * back on the next start (`--resume <id>`), and some engines build file paths from it, so an id
 * that was mangled on the way (invalid UTF-8 decodes to U+FFFD), carries control characters or
 * path separators, or is absurdly long is refused rather than adopted: adopting it would lose the
 * real agent session and make every later resume fork (`RESUME_FORKED`). The rule is the same for
 * every engine, so it lives here and EngineEvents applies it to every `session_identified`.
 */

/** Longest accepted resume token, in characters (real ids are UUIDs: 36). */
export const MAX_RESUME_TOKEN_LENGTH = 256;

/**
 * `\p{C}`: control, format, surrogate (a lone one), private-use and unassigned code points;
 * `\p{Z}`: whitespace and separators; U+FFFD: what invalid UTF-8 became; `/` and `\`: path separators.
 */
const UNUSABLE = /[\p{C}\p{Z}\uFFFD/\\]/u;

/**
 * Why `id` cannot be a resume token, or undefined when it can: 1 to {@link MAX_RESUME_TOKEN_LENGTH}
 * printable characters, no whitespace, no `/` or `\`, no U+FFFD, not `.` or `..`.
 */
export function resumeTokenProblem(id: unknown): string | undefined {
  if (typeof id !== 'string') return 'it is not a string';
  if (id.length === 0) return 'it is empty';
  if (id.length > MAX_RESUME_TOKEN_LENGTH) return `it is ${id.length} characters long (at most ${MAX_RESUME_TOKEN_LENGTH})`;
  if (id === '.' || id === '..') return 'it names a directory';
  const bad = UNUSABLE.exec(id);
  if (bad) {
    const cp = bad[0].codePointAt(0)!;
    return cp === 0xfffd
      ? 'it contains U+FFFD (the agent sent invalid UTF-8)'
      : `it contains ${bad[0] === '/' || bad[0] === '\\' ? `"${bad[0]}"` : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`}`;
  }
  return undefined;
}

/** A short, printable rendering of an id for a message (never the whole of a huge one). */
export function describeId(id: unknown): string {
  if (typeof id !== 'string') return String(typeof id);
  const shown = JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}` : id);
  return id.length > 80 ? `${shown}… (${id.length} characters)` : shown;
}
