/**
 * The `tree` frames of the event streams: a client watching a session of a session tree is told the
 * tree (`{sessionId, rootId, focus, nodes}`, the body of `GET /api/sessions/:id/tree`) when it
 * connects and whenever it changes (enter, exit, complete, spawn), whoever changed it: the host's
 * tree watch (`SessionHost.watchTrees`, on the tree files) wakes the feed, which re-reads each
 * watched session's tree and pushes only real changes. A tree file that cannot be read is reported
 * once per session as an `error` frame (`STORE_CORRUPT`), like other store failures on a stream. A
 * tree the session no longer belongs to is a `tree` frame with `null`. The watch runs only while
 * some stream is open.
 */
import type { TreeRecord } from '../session/session-tree-state.js';
import type { SessionTreeWatch } from '../session/session-tree-watch.js';
import { encodeFrame, type EventStream } from './event-stream.js';
import type { SessionHost } from './session-host.js';
import type { SessionHub } from './session-hub.js';

/** What a session's tree reads as now: a key to compare, and the frame that tells it. */
type Reading = { key: string; frame: Uint8Array };

export class TreeFeed {
  readonly #host: SessionHost;
  readonly #hubs: Map<string, SessionHub>;
  /** What each stream was last told (its key); a stream never told anything has no entry. */
  readonly #told = new WeakMap<EventStream, string>();
  #watch: SessionTreeWatch | undefined;
  /** Reads and pushes run one at a time, so a newer tree is never overtaken by an older one. */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(host: SessionHost, hubs: Map<string, SessionHub>) {
    this.#host = host;
    this.#hubs = hubs;
  }

  /** A stream of `hub` opened: it gets the session's tree (if any); the watch starts with the first stream. */
  greet(hub: SessionHub, stream: EventStream): void {
    if (!this.#host.tree || this.#closed) return;
    this.#watch ??= this.#host.watchTrees?.(() => this.refresh());
    this.#enqueue(async () => this.#tell(stream, await this.#read(hub.id)));
  }

  /** The trees may have changed (the watch, or a move made here): every watched session looks again. */
  refresh(): void {
    if (!this.#host.tree || this.#closed) return;
    this.#enqueue(async () => {
      for (const [id, hub] of [...this.#hubs]) {
        if (hub.streams.size === 0) continue;
        const now = await this.#read(id);
        for (const stream of hub.streams) this.#tell(stream, now);
      }
    });
  }

  /** A stream closed: once none is left the watch stops (it starts again with the next stream). */
  idle(): void {
    for (const hub of this.#hubs.values()) if (hub.streams.size > 0) return;
    this.#watch?.close();
    this.#watch = undefined;
  }

  close(): void {
    this.#closed = true;
    this.#watch?.close();
    this.#watch = undefined;
  }

  /** Only a change is told; a session that never was in a tree is told nothing. */
  #tell(stream: EventStream, now: Reading): void {
    const before = this.#told.get(stream);
    if (before === now.key || (before === undefined && now.key === 'none') || stream.closed) return;
    this.#told.set(stream, now.key);
    stream.write(now.frame);
  }

  async #read(id: string): Promise<Reading> {
    let tree: TreeRecord | undefined;
    try {
      tree = await this.#host.tree!(id);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const message = error instanceof Error ? error.message : String(error);
      return { key: `error:${message}`, frame: encodeFrame('error', { code: typeof code === 'string' ? code : 'STORE_IO', message }) };
    }
    if (!tree) return { key: 'none', frame: encodeFrame('tree', null) };
    const body = { sessionId: id, ...tree };
    const json = JSON.stringify(body);
    return { key: json, frame: encodeFrame('tree', body) };
  }

  #enqueue(work: () => Promise<void>): void {
    this.#chain = this.#chain.then(() => (this.#closed ? undefined : work())).catch(() => undefined);
  }
}
