/**
 * Deduplication of rollout-derived events against the live protocol stream (MCP `codex/event`
 * or app-server notifications) of the same thread — reference codex.md §10.4.
 *
 * Key: `(threadId, turnId, kind, itemId)`. The upstream item ids are unique within a thread
 * (Responses item ids `msg_…`/`rs_…`, tool `call_…` ids, UUIDv7 user-message and turn ids), and
 * every synthetic id the tailer makes embeds its turn id, so two keys MATCH when `threadId`,
 * `kind` and `itemId` are equal: `turnId` is carried for diagnostics but not compared. That keeps
 * dedupe working when one side does not know the turn (a legacy line before any `task_started`,
 * or a live event without a turn id) — see docs/engines/codex-rollout.md for what each dialect
 * provides.
 *
 * "The live stream wins": live events are delivered at once and claim their key; tailed events
 * are held for `graceMs` (rollout lines land ~10–20 ms after the live event) and delivered, in
 * arrival order, only if no live event claimed the key meanwhile. A key is delivered at most once,
 * whichever source delivers it.
 */

export type DedupeKind = 'session_identified' | 'message' | 'tool_call' | 'tool_result' | 'turn_complete' | 'error';

export interface DedupeKey {
  threadId: string;
  /** '' when unknown */
  turnId: string;
  kind: DedupeKind;
  itemId: string;
}

/** The string two matching keys share. */
export function dedupeKeyString(key: DedupeKey): string {
  return `${key.threadId}\u0000${key.kind}\u0000${key.itemId}`;
}

export interface DeduperTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface DeduperOptions {
  /** how long a tailed event waits for its live twin (default 250 ms; 0 = deliver at once if unseen) */
  graceMs?: number;
  /** keys remembered (oldest forgotten first; default 100 000) */
  maxKeys?: number;
  /** clock injection (default: global timers); `now` for the hold deadlines */
  timers?: DeduperTimers;
  now?: () => number;
}

interface Held<T> {
  key: string;
  due: number;
  value: T;
  deliver: (value: T) => void;
}

const globalTimers: DeduperTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class EventDeduper<T = unknown> {
  readonly graceMs: number;
  private readonly maxKeys: number;
  private readonly timers: DeduperTimers;
  private readonly now: () => number;
  /** delivered keys, insertion-ordered so the oldest can be forgotten */
  private readonly delivered = new Set<string>();
  private held: Held<T>[] = [];
  private timer: unknown;
  private closed = false;
  /** tailed events dropped because the key was already delivered */
  suppressed = 0;

  constructor(options: DeduperOptions = {}) {
    this.graceMs = options.graceMs ?? 250;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.timers = options.timers ?? globalTimers;
    this.now = options.now ?? Date.now;
  }

  /** True if an event with this key was already delivered (by either source). */
  has(key: DedupeKey): boolean {
    return this.delivered.has(dedupeKeyString(key));
  }

  /**
   * A live event. Returns true when the caller should deliver it: always, unless the same key was
   * already delivered (a live repeat, or a tailed copy whose grace ran out first). A held tailed
   * copy is cancelled.
   */
  offerLive(key: DedupeKey): boolean {
    const k = dedupeKeyString(key);
    if (this.delivered.has(k)) return false;
    this.remember(k);
    return true;
  }

  /**
   * A tailed (rollout-derived) event: dropped if its key was delivered, else held for `graceMs`
   * and passed to `deliver` unless a live event claims the key first. Returns false if dropped now.
   */
  offerTailed(key: DedupeKey, value: T, deliver: (value: T) => void): boolean {
    const k = dedupeKeyString(key);
    if (this.closed || this.delivered.has(k) || this.held.some((h) => h.key === k)) {
      this.suppressed++;
      return false;
    }
    this.held.push({ key: k, due: this.now() + this.graceMs, value, deliver });
    this.pump();
    return true;
  }

  /** Delivers every held tailed event that is still unclaimed, now. */
  flush(): void {
    this.pump(Number.POSITIVE_INFINITY);
  }

  /** Drops held events and stops the timer. */
  close(): void {
    this.closed = true;
    this.held = [];
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private remember(k: string): void {
    this.delivered.add(k);
    if (this.delivered.size > this.maxKeys) {
      const oldest = this.delivered.values().next().value;
      if (oldest !== undefined) this.delivered.delete(oldest);
    }
  }

  /** Delivers held events in arrival order up to the first one not yet due; re-arms the timer. */
  private pump(now = this.now()): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    while (this.held.length > 0) {
      const head = this.held[0]!;
      if (this.delivered.has(head.key)) {
        this.held.shift();
        this.suppressed++;
        continue;
      }
      if (head.due > now) break;
      this.held.shift();
      this.remember(head.key);
      head.deliver(head.value);
    }
    if (this.held.length > 0 && !this.closed) {
      this.timer = this.timers.setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, Math.max(0, this.held[0]!.due - this.now()));
    }
  }
}
