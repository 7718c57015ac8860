/**
 * Whether a thread's rollout file can be resumed from yet. app-server creates a new thread's
 * rollout only when its first turn starts, and writes it from a background task: even after the
 * `turn/start` answer the file may be missing, and `thread/resume` of a thread without one fails
 * ("no rollout found"). Codex writes whole lines, so once the first line (`session_meta`) is
 * complete the thread can be found and loaded.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** session_meta carries the base instructions (~22 KB on 0.169.0); a first line longer than this counts as written. */
const PROBE_BYTES = 256 * 1024;

export function rolloutStarted(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(PROBE_BYTES);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return read === buffer.length || buffer.subarray(0, read).includes(0x0a);
  } catch {
    return false; // not created yet
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
