/**
 * `session.events()`: the session's notices as an AsyncIterable, ending after `done` (or when the
 * signal aborts). Breaking out of the loop unsubscribes.
 */
import type { Emitter } from 'mitt';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';

export type NoticeMap = { [K in SessionNoticeType]: NoticeOf<K> };

/** @param finished true once `done` was emitted: an iterator made after that ends at once. */
export function noticeStream(bus: Emitter<NoticeMap>, finished: () => boolean, options: { signal?: AbortSignal } = {}): AsyncIterable<SessionNotice> {
  return {
    [Symbol.asyncIterator]() {
      const buffer: SessionNotice[] = [];
      let wake: (() => void) | undefined;
      let ended = finished() || options.signal?.aborted === true;
      const onNotice = (_type: SessionNoticeType, notice: SessionNotice) => {
        buffer.push(notice);
        if (notice.type === 'done') ended = true;
        wake?.();
      };
      const onAbort = () => {
        ended = true;
        wake?.();
      };
      bus.on('*', onNotice as never);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        bus.off('*', onNotice as never);
        options.signal?.removeEventListener('abort', onAbort);
      };
      return {
        async next(): Promise<IteratorResult<SessionNotice>> {
          while (buffer.length === 0 && !ended) await new Promise<void>((r) => (wake = r));
          wake = undefined;
          const value = buffer.shift();
          if (value === undefined || options.signal?.aborted) {
            cleanup();
            return { done: true, value: undefined };
          }
          return { done: false, value };
        },
        async return(): Promise<IteratorResult<SessionNotice>> {
          cleanup();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
