/**
 * `session.waitFor(type, predicate?, options?)`: the first notice of a type (that the predicate
 * accepts) emitted from the call on. Replaces the "subscribe, match, unsubscribe, resolve" helper
 * every client writes, with the endings it usually forgets: the session ending first, a timeout,
 * an abort.
 */
import { AseError } from '../errors.js';
import type { NoticeSource } from './notice-stream.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';
import type { SessionSnapshot } from './snapshot.js';

export interface WaitForOptions {
  /** Aborting it rejects with an `AbortError` (`AseError` code `ABORTED`). */
  signal?: AbortSignal;
  /** Rejects with `AseError('TIMEOUT')` after this many milliseconds of real time. */
  timeoutMs?: number;
}

export function waitForNotice<T extends SessionNoticeType | '*'>(
  source: NoticeSource & { doneSnapshot(): SessionSnapshot | undefined },
  type: T,
  predicate: ((notice: T extends SessionNoticeType ? NoticeOf<T> : SessionNotice) => boolean) | undefined,
  options: WaitForOptions = {},
): Promise<T extends SessionNoticeType ? NoticeOf<T> : SessionNotice> {
  type Result = T extends SessionNoticeType ? NoticeOf<T> : SessionNotice;
  const { signal, timeoutMs } = options;
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0)) {
    return Promise.reject(new AseError('INVALID_INPUT', `waitFor: timeoutMs must be a non-negative number, got ${String(timeoutMs)}`));
  }
  if (predicate !== undefined && typeof predicate !== 'function') {
    return Promise.reject(new AseError('INVALID_INPUT', 'waitFor: the predicate must be a function'));
  }
  const abortError = () => new AseError('ABORTED', `waitFor("${type}"): the signal was aborted`, signal?.reason !== undefined ? { cause: signal.reason } : {});
  if (signal?.aborted) return Promise.reject(abortError());

  const matches = (notice: SessionNotice): boolean => (type === '*' || notice.type === type) && (predicate === undefined || predicate(notice as Result));

  // The session is over: only its `done` can still be "the next" notice.
  if (source.finished()) {
    const snapshot = source.doneSnapshot()!;
    const done: SessionNotice = { type: 'done', snapshot };
    try {
      if (matches(done)) return Promise.resolve(done as Result);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.reject(new AseError('SESSION_STOPPED', `waitFor("${type}"): the session has ended`));
  }

  return new Promise<Result>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (outcome: () => void) => {
      unsubscribe();
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const onAbort = () => settle(() => reject(abortError()));
    const unsubscribe = source.subscribe((notice) => {
      let matched: boolean;
      try {
        matched = matches(notice);
      } catch (error) {
        // The caller's predicate threw: that is the caller's error, passed through as it is.
        settle(() => reject(error));
        return;
      }
      if (matched) settle(() => resolve(notice as Result));
      else if (notice.type === 'done') settle(() => reject(new AseError('SESSION_STOPPED', `waitFor("${type}"): the session ended before a matching notice`)));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => settle(() => reject(new AseError('TIMEOUT', `waitFor("${type}"): no matching notice within ${timeoutMs} ms`, { details: { timeoutMs } }))), timeoutMs);
    }
  });
}
