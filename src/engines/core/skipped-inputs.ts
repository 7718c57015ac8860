/**
 * Upstream input an engine or translator skipped (unknown, malformed, stale) is kept for
 * diagnostics, but only the newest entries: a session can run for hours on a chatty protocol.
 */
export const MAX_SKIPPED = 500;

export interface SkippedInput {
  reason: string;
  raw: unknown;
}

/** Appends `entry`, dropping the oldest entries beyond {@link MAX_SKIPPED}. */
export function noteSkipped(list: SkippedInput[], entry: SkippedInput): void {
  if (list.length >= MAX_SKIPPED) list.splice(0, list.length - MAX_SKIPPED + 1);
  list.push(entry);
}
