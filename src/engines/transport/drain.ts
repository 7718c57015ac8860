/**
 * The bounded wait for an agent's stdout after its process exited. The supervisor reports `exit`,
 * not `close`, so the agent's last lines can still be in the pipe; and a grandchild that inherited
 * the pipe (a `setsid` tool command) can hold it open forever, so the wait has a cap. Shared by
 * the NDJSON process launcher (claude, codex) and the ACP engine.
 */
import type { Readable } from 'node:stream';

/** How long an exit report waits for stdout to drain. */
export const STDOUT_DRAIN_MS = 500;

/** The default bound: a plain timer that does not keep the host alive. */
const unrefSleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Resolves once `readable` has emitted `end` or `close` (at once if it already has), or after
 * `ms`, whichever comes first. Never rejects. `sleep` supplies the bound: an engine passes its
 * context's timers, so the wait runs on the session's clock.
 *
 * A listener registered before this call on `end` (e.g. one that flushes a last unterminated
 * line) runs before the wait resolves.
 */
export function drainWithin(readable: Readable, ms: number = STDOUT_DRAIN_MS, sleep: (ms: number) => Promise<void> = unrefSleep): Promise<void> {
  const done = new Promise<void>((resolve) => {
    if (readable.readableEnded || readable.closed) {
      resolve();
      return;
    }
    readable.once('end', () => resolve());
    readable.once('close', () => resolve());
  });
  return Promise.race([done, sleep(ms)]);
}
