/**
 * Awaiting one of our requests to the agent (initialize, session/new, set_mode, …): bounded by a
 * timeout on the engine's context timers, and rejecting only with AseErrors. The SDK's request
 * promise has no timeout of its own and rejects with its `RequestError` or the connection's close
 * reason; this is the one place that turns those into the library's errors (errors.ts).
 */
import { AseError } from '../../errors.js';
import type { EngineContext } from '../core/engine.js';
import { toAcpError } from './errors.js';
import { timerMs } from './options.js';

/**
 * `request` (the SDK's promise for method `what`), rejected with an AseError `TIMEOUT` if no
 * response came within `ms` (0 or a non-finite value = no bound), and with {@link toAcpError} of
 * whatever the SDK rejects with.
 */
export function agentRequest<T>(request: Promise<T>, ms: number, what: string, timers: Pick<EngineContext, 'setTimeout' | 'clearTimeout'>): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return request.catch((error: unknown) => {
      throw toAcpError(error, what);
    });
  return new Promise<T>((resolvePromise, reject) => {
    const timer = timers.setTimeout(() => reject(new AseError('TIMEOUT', `acp engine: ${what} got no response within ${ms} ms`, { details: { request: what, timeoutMs: ms } })), timerMs(ms));
    request.then(
      (value) => {
        timers.clearTimeout(timer);
        resolvePromise(value);
      },
      (error: unknown) => {
        timers.clearTimeout(timer);
        reject(toAcpError(error, what));
      },
    );
  });
}
