/**
 * `session.runStreamed(text)`: one turn as a stream, like the Codex SDK's `runStreamed()` and the
 * Agent SDK's `query()`. `events` yields the turn's AgentEvents (text deltas, tool calls,
 * permission requests, its `turn_complete`) and ends when the turn does; nothing of other turns.
 * `result` is what `run()` resolves with. Both come from one `run()` with an `onEvent` listener,
 * so the two never disagree.
 *
 * The events of one turn are held until read (a turn is bounded; a consumer that never reads holds
 * only that turn). When the run rejects (an aborted signal, a refused send), the iteration throws
 * that error after the events it holds. `result` is marked handled: reading only `events` never
 * leaves an unhandled rejection behind.
 */
import type { AgentEvent } from '../events/agent-event.js';
import type { RunOptions, TurnResult } from './turn-runner.js';

export interface StreamedTurn {
  /** This turn's AgentEvents, in order; ends at the turn's end. One consumer: it is its own iterator. */
  events: AsyncIterableIterator<AgentEvent>;
  /** What `run()` gives: the turn's status, answer text, usage, cost, messages, entries. */
  result: Promise<TurnResult>;
}

/** Wraps `run` (the session's) into a stream of its turn's events and its result. */
export function streamTurn(run: (options: RunOptions) => Promise<TurnResult>, options: Omit<RunOptions, 'onEvent'> = {}): StreamedTurn {
  const held: AgentEvent[] = [];
  let head = 0;
  let finished = false;
  let failure: unknown;
  let failed = false;
  let returned = false;
  let waiting: { resolve: (r: IteratorResult<AgentEvent>) => void; reject: (e: unknown) => void } | undefined;

  const wake = () => {
    if (!waiting) return;
    const w = waiting;
    waiting = undefined;
    void iterator.next().then(w.resolve, w.reject);
  };
  const result = run({
    ...options,
    onEvent: (event) => {
      if (returned) return;
      held.push(event);
      wake();
    },
  });
  result.then(
    () => {
      finished = true;
      wake();
    },
    (error: unknown) => {
      finished = true;
      failed = true;
      failure = error;
      wake();
    },
  );

  const iterator: AsyncIterableIterator<AgentEvent> = {
    next(): Promise<IteratorResult<AgentEvent>> {
      if (returned) return Promise.resolve({ done: true, value: undefined });
      if (head < held.length) {
        const value = held[head]!;
        held[head] = undefined as never; // let it be collected
        head++;
        return Promise.resolve({ done: false, value });
      }
      if (finished) {
        returned = true;
        return failed ? Promise.reject(failure) : Promise.resolve({ done: true, value: undefined });
      }
      if (waiting) return Promise.reject(new Error('runStreamed(): events has one reader: await each next() before the next'));
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    return(): Promise<IteratorResult<AgentEvent>> {
      // Leaving the loop early stops the stream, not the turn: `result` still settles.
      returned = true;
      held.length = 0;
      head = 0;
      const w = waiting;
      waiting = undefined;
      w?.resolve({ done: true, value: undefined });
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  result.catch(() => undefined);
  return { events: iterator, result };
}
