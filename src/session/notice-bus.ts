/**
 * The session's notice bus: listeners per notice type, and for every notice (`'*'`). An emit walks
 * the listener lists as they are, without copying them per notice (mitt, used before, sliced both
 * lists on every emit: a cost paid for every streamed delta). Subscribing or unsubscribing replaces
 * a list instead, so a listener added or removed while a notice is delivered counts from the next one.
 */
import type { SessionNotice, SessionNoticeType } from './notices.js';

type Listener = (notice: SessionNotice) => void;

export class NoticeBus {
  readonly #byType = new Map<SessionNoticeType, readonly Listener[]>();
  #all: readonly Listener[] = [];

  /** Listens to one notice type, or to every notice with `'*'`; returns the unsubscribe. */
  on(type: SessionNoticeType | '*', listener: Listener): () => void {
    if (type === '*') this.#all = [...this.#all, listener];
    else this.#byType.set(type, [...(this.#byType.get(type) ?? []), listener]);
    return () => {
      if (type === '*') this.#all = without(this.#all, listener);
      else this.#byType.set(type, without(this.#byType.get(type) ?? [], listener));
    };
  }

  /** Whether a notice of this type would reach any listener: the session builds notices only for someone. */
  listens(type: SessionNoticeType): boolean {
    return this.#all.length > 0 || (this.#byType.get(type)?.length ?? 0) > 0;
  }

  /** Delivers a notice to its type's listeners, then to the `'*'` ones (mitt's order). */
  emit(notice: SessionNotice): void {
    const typed = this.#byType.get(notice.type);
    if (typed) for (const listener of typed) listener(notice);
    for (const listener of this.#all) listener(notice);
  }
}

function without(list: readonly Listener[], listener: Listener): readonly Listener[] {
  const index = list.indexOf(listener);
  return index < 0 ? list : [...list.slice(0, index), ...list.slice(index + 1)];
}
