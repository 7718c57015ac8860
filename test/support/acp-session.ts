/** Waiting on SessionActor notices in the ACP real-agent tests. */
import type { NoticeOf, Session, SessionNoticeType } from '../../src/index.js';

/** The next notice of `type` (from now on). */
export function nextNotice<T extends SessionNoticeType>(session: Session, type: T, ms = 30_000): Promise<NoticeOf<T>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for a ${type} notice`));
    }, ms);
    const off = session.on(type, (notice) => {
      clearTimeout(timer);
      off();
      resolve(notice);
    });
  });
}
