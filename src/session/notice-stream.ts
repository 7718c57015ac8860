/**
 * `session.events()`: the session's notices as an async iterator that subscribes when it is
 * created (not when iteration starts), buffers what the consumer has not read yet, and ends after
 * `done`.
 *
 * The buffer is bounded (`maxBuffered`). When a consumer falls that far behind, the stream first
 * compacts what only says "the current state" or carries nothing: it merges adjacent text deltas of
 * one message, keeps only the newest agent `thinking`, `available_commands` and `context_usage`
 * event and the newest `thinking` / `presence` notice, and drops agent `activity` events, then puts
 * one `lagged` marker (with the counts) in
 * front of what is left. Durable notices (`transcript`, `error`, `done`, permission prompts and
 * resolutions, `status`, every other agent event) are never dropped: when compaction cannot free a
 * tenth of the buffer, the stream stops listening, yields what it holds, and then throws
 * `AseError('SLOW_CONSUMER')`. An aborted signal rejects at once with an `AbortError`.
 */
import { AseError } from '../errors.js';
import type { NoticeOf, SessionNotice, SessionNoticeType } from './notices.js';

export type NoticeMap = { [K in SessionNoticeType]: NoticeOf<K> };

/** Only in `events()` streams: the consumer fell behind, and the notices after this were compacted. */
export interface LaggedNotice {
  type: 'lagged';
  /** Ephemeral notices removed (agent `activity`, superseded `thinking` / `presence` states). */
  dropped: number;
  /** Agent `text_delta`s joined into the one before them (same message; no text is lost). */
  merged: number;
}

/** What an `events()` stream yields: every session notice, plus a `lagged` marker after compaction. */
export type StreamNotice = SessionNotice | LaggedNotice;

export interface EventsOptions {
  /** Aborting it rejects the pending (or next) `next()` with an `AbortError` and unsubscribes. */
  signal?: AbortSignal;
  /** The most unread notices the stream holds before it compacts them (default 10,000; at least 10). */
  maxBuffered?: number;
}

export const DEFAULT_MAX_BUFFERED = 10_000;

/** The part of the session a stream needs: a way to subscribe to every notice, and whether `done` was emitted. */
export interface NoticeSource {
  subscribe(listener: (notice: SessionNotice) => void): () => void;
  /** True once `done` was emitted: a stream made after that ends at once. */
  finished(): boolean;
}

export function noticeStream(source: NoticeSource, options: EventsOptions = {}): AsyncIterableIterator<StreamNotice> {
  const max = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
  if (!Number.isInteger(max) || max < 10) throw new AseError('INVALID_INPUT', `events(): maxBuffered must be an integer >= 10, got ${String(max)}`);
  const signal = options.signal;
  // Compaction must get the buffer down to this, or the stream overflows: a buffer of durable
  // notices cannot be made smaller, and compacting a nearly full one on every push would be quadratic.
  const floor = max - Math.max(1, Math.floor(max / 10));

  let buffer: StreamNotice[] = [];
  let head = 0;
  /** The `lagged` marker still unread at the front of the buffer, updated by later compactions instead of adding another. */
  let marker: LaggedNotice | undefined;
  /** False once the stream receives nothing more: after `done`, on overflow, abort or return(). */
  let listening = true;
  /** The overflow error, thrown once the notices held before it were read. */
  let failure: AseError | undefined;
  /** The signal aborted and that has not been reported to the consumer yet. */
  let abortPending = false;
  /** The iterator returned `done: true` or threw: every later `next()` is `done`. */
  let over = false;
  const waiting: { resolve: (r: IteratorResult<StreamNotice>) => void; reject: (e: unknown) => void }[] = [];

  const size = () => buffer.length - head;
  const abortError = () => new AseError('ABORTED', 'events(): the signal was aborted', signal?.reason !== undefined ? { cause: signal.reason } : {});

  const onAbort = () => {
    stopListening();
    release();
    buffer = [];
    head = 0;
    if (waiting.length === 0) abortPending = true;
    else {
      over = true;
      const error = abortError();
      for (const w of waiting.splice(0)) w.reject(error);
    }
  };
  const unsubscribe = source.finished() || signal?.aborted ? undefined : source.subscribe(onNotice);
  if (!unsubscribe) listening = false;
  if (signal?.aborted) abortPending = true;
  else if (listening) signal?.addEventListener('abort', onAbort, { once: true });

  /**
   * Stops receiving notices: the session's bus no longer holds this stream, nor does the caller's
   * signal (a long-lived signal must not keep finished streams alive). What is buffered stays readable.
   */
  function stopListening(): void {
    if (!listening) return;
    listening = false;
    unsubscribe?.();
    release();
  }

  /** The iteration is over: nothing of the caller's (its signal) is held any more. */
  function release(): void {
    signal?.removeEventListener('abort', onAbort);
  }

  function onNotice(notice: SessionNotice): void {
    if (!listening) return;
    const w = waiting.shift();
    if (w) w.resolve({ done: false, value: notice });
    else {
      buffer.push(notice);
      if (size() >= max) compact();
    }
    if (notice.type === 'done') stopListening();
  }

  function compact(): void {
    const items = buffer.slice(head);
    let dropped = 0;
    let merged = 0;
    // Newest state notices win: find the last of each kind, drop the earlier ones.
    const lastIndex = new Map<string, number>();
    items.forEach((n, i) => {
      const key = supersededKey(n);
      if (key) lastIndex.set(key, i);
    });
    const kept: StreamNotice[] = [];
    // A run of adjacent deltas of one message becomes one delta whose text is joined once (a flat
    // string, not a rope of one node per delta: a long answer streamed to a stalled consumer).
    let run: { index: number; pieces: string[] } | undefined;
    const closeRun = () => {
      if (!run) return;
      const first = kept[run.index] as Extract<StreamNotice, { type: 'agent' }> & { event: { type: 'text_delta' } };
      // The first piece may be what an earlier compaction merged: append to it rather than copy it.
      if (run.pieces.length > 1) kept[run.index] = { type: 'agent', event: { ...first.event, text: run.pieces[0]! + run.pieces.slice(1).join('') } };
      run = undefined;
    };
    items.forEach((n, i) => {
      if (n.type === 'lagged') return; // re-added in front below
      if (n.type === 'agent' && n.event.type === 'activity') {
        dropped++;
        return;
      }
      const key = supersededKey(n);
      if (key && lastIndex.get(key) !== i) {
        dropped++;
        return;
      }
      const prev = kept.at(-1);
      if (
        n.type === 'agent' &&
        n.event.type === 'text_delta' &&
        prev?.type === 'agent' &&
        prev.event.type === 'text_delta' &&
        prev.event.gen === n.event.gen &&
        prev.event.messageId === n.event.messageId
      ) {
        run ??= { index: kept.length - 1, pieces: [prev.event.text] };
        run.pieces.push(n.event.text);
        // The merged delta is stamped with the time of its last piece.
        kept[kept.length - 1] = { type: 'agent', event: { ...prev.event, at: n.event.at } };
        merged++;
        return;
      }
      closeRun();
      kept.push(n);
    });
    closeRun();
    if (dropped + merged > 0 || marker) {
      const previous = marker ?? { type: 'lagged' as const, dropped: 0, merged: 0 };
      marker = { type: 'lagged', dropped: previous.dropped + dropped, merged: previous.merged + merged };
      kept.unshift(marker);
    }
    buffer = kept;
    head = 0;
    if (size() > floor) {
      failure = new AseError(
        'SLOW_CONSUMER',
        `events(): the consumer fell ${size()} notices behind and they cannot be compacted (maxBuffered ${max}); the stream stopped listening and throws this after the notices it holds. Read what came later from the transcript journal and session.snapshot(), and open a new stream.`,
        { details: { maxBuffered: max, buffered: size() } },
      );
      stopListening();
    }
  }

  function take(): IteratorResult<StreamNotice> | undefined {
    if (size() === 0) return undefined;
    const value = buffer[head]!;
    buffer[head] = undefined as never; // let it be collected
    head++;
    if (head > 1024 && head * 2 > buffer.length) {
      buffer = buffer.slice(head);
      head = 0;
    }
    if (value === marker) marker = undefined;
    return { done: false, value };
  }

  const finish = (): IteratorResult<StreamNotice> => {
    over = true;
    release();
    return { done: true, value: undefined };
  };

  const iterator: AsyncIterableIterator<StreamNotice> = {
    next(): Promise<IteratorResult<StreamNotice>> {
      if (over) return Promise.resolve({ done: true, value: undefined });
      if (abortPending) {
        abortPending = false;
        over = true;
        return Promise.reject(abortError());
      }
      const item = take();
      if (item) return Promise.resolve(item);
      if (failure) {
        finish();
        return Promise.reject(failure);
      }
      if (!listening) return Promise.resolve(finish());
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return(): Promise<IteratorResult<StreamNotice>> {
      stopListening();
      buffer = [];
      head = 0;
      abortPending = false;
      const result = finish();
      for (const w of waiting.splice(0)) w.resolve(result);
      return Promise.resolve(result);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** Notices where only the newest matters: their kind; anything else: undefined. */
function supersededKey(notice: StreamNotice): string | undefined {
  if (notice.type === 'thinking' || notice.type === 'presence') return notice.type;
  if (notice.type === 'agent' && notice.event.type === 'thinking') return 'agent.thinking';
  // Gauges of the agent's state: each one is the whole current value.
  if (notice.type === 'agent' && (notice.event.type === 'available_commands' || notice.event.type === 'context_usage')) return `agent.${notice.event.type}`;
  return undefined;
}
