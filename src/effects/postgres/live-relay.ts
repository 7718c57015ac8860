/**
 * `SessionLiveRelay` over LISTEN/NOTIFY: the ephemeral frames of a session (text deltas, thinking,
 * status, permission prompts) from the host that runs it to pages on other hosts.
 *
 * - Only while watched. A host with a page on a session it does not run announces it on the
 *   schema's watch channel at once and then every `announceMs`; the owner publishes a session's
 *   frames only while an announcement of it is fresh (3 × `announceMs`). Nobody watching from
 *   elsewhere, nothing reaches the database.
 * - Coalesced, never in a transaction of its own per frame. A notifying commit takes a database-wide
 *   lock (measured to cut concurrent append throughput 8-10x), so frames wait `flushMs` and go out
 *   as one statement on one notifier connection (`synchronous_commit = off`): consecutive text
 *   deltas of one message are joined into one, and each session's frames fill as few notifications
 *   as fit under PostgreSQL's 8000-byte payload limit.
 * - Gaps are said, not hidden. Every notification carries its publisher and a counter; a watcher
 *   that sees a counter skip, a new publisher, its own connection drop, or a frame too big for a
 *   payload, gets a `resync` frame (it then fetches the owner's snapshot: open prompts again).
 */
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { LiveFrame, SessionLiveRelay } from '../session-live-relay.js';
import { PostgresPool, type PostgresConnectionOptions } from './pool.js';
import { channelName, migrate } from './schema.js';

export interface PostgresLiveRelayOptions extends PostgresConnectionOptions {
  /** How long frames wait to be sent together, in ms. Default 25. */
  flushMs?: number;
  /** How often a watching host repeats that it watches, in ms. Default 2000. */
  announceMs?: number;
}

/** Room under PostgreSQL's 8000-byte NOTIFY payload limit. */
const MAX_PAYLOAD = 7_900;

interface Payload {
  /** The publishing relay (one per process). */
  p: string;
  /** Its counter for this session: +1 per notification. */
  n: number;
  f: LiveFrame[];
}

export class PostgresLiveRelay implements SessionLiveRelay {
  readonly #db: PostgresPool;
  readonly #ready: Promise<void>;
  readonly #flushMs: number;
  readonly #announceMs: number;
  readonly #id = randomUUID();
  readonly #watchChannel: string;
  #closed = false;
  // Connections: one LISTEN (announcements, and the sessions this host watches), one notifier.
  #listener: Promise<PoolClient> | undefined;
  #notifier: Promise<PoolClient> | undefined;
  #announceTimer: NodeJS.Timeout | undefined;
  // Owner side.
  readonly #watchedUntil = new Map<string, number>();
  readonly #pending = new Map<string, LiveFrame[]>();
  readonly #counters = new Map<string, number>();
  #flushTimer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();
  // Watcher side.
  readonly #subscribers = new Map<string, Set<(frame: LiveFrame) => void>>();
  readonly #channels = new Map<string, string>();
  readonly #heard = new Map<string, { p: string; n: number }>();

  constructor(options: PostgresLiveRelayOptions) {
    this.#db = new PostgresPool({ ...options, maxConnections: options.maxConnections ?? 3 }, 'PostgresLiveRelay');
    this.#flushMs = options.flushMs ?? 25;
    this.#announceMs = options.announceMs ?? 2_000;
    this.#watchChannel = channelName('ase_watch', this.#db.schema);
    this.#ready = migrate(this.#db, this.#db.schema);
    this.#ready.catch(() => {});
    // Listening from the start: an owner must hear a watcher's first announcement.
    this.#connect();
    this.#announceTimer = setInterval(() => {
      if (!this.#listener) this.#connect();
      this.#announce([...this.#subscribers.keys()]);
    }, this.#announceMs);
    this.#announceTimer.unref();
  }

  // ------------------------------------------------------------------ owner side

  publish(sessionId: string, event: string, data: unknown): void {
    if (this.#closed) return;
    const until = this.#watchedUntil.get(sessionId);
    if (until === undefined) return;
    if (until < Date.now()) {
      this.#watchedUntil.delete(sessionId);
      return;
    }
    const frames = this.#pending.get(sessionId) ?? [];
    const last = frames.at(-1);
    if (last && isDelta(last) && event === 'agent' && isDelta([event, data]) && last[1].messageId === (data as Delta).messageId) {
      last[1] = { ...last[1], text: last[1].text + (data as Delta).text };
    } else {
      frames.push([event, data]);
    }
    this.#pending.set(sessionId, frames);
    this.#flushTimer ??= setTimeout(() => this.#flush(), this.#flushMs);
  }

  #flush(): void {
    this.#flushTimer = undefined;
    const channels: string[] = [];
    const payloads: string[] = [];
    for (const [sessionId, frames] of this.#pending) {
      for (const f of chunk(frames)) {
        const n = (this.#counters.get(sessionId) ?? 0) + 1;
        this.#counters.set(sessionId, n);
        channels.push(channelName('ase_live', this.#db.schema, sessionId));
        payloads.push(`{"p":${JSON.stringify(this.#id)},"n":${n},"f":${f}}`);
      }
    }
    this.#pending.clear();
    if (channels.length === 0) return;
    // One statement, one commit, in order; the next flush waits for this one (order across flushes).
    this.#sending = this.#sending.then(async () => {
      try {
        const client = await this.#notifierClient();
        await client.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(c, p, o) ORDER BY o', [channels, payloads]);
      } catch {
        // Lost: the watchers see the counter skip at the next notification and resync.
        this.#notifier = undefined;
      }
    });
  }

  #notifierClient(): Promise<PoolClient> {
    this.#notifier ??= (async () => {
      await this.#ready;
      const client = await this.#db.connect();
      client.on('error', () => {
        this.#notifier = undefined;
        client.release(true);
      });
      // A hint of ephemeral frames needs no durability of its own.
      await client.query('SET synchronous_commit = off');
      return client;
    })();
    this.#notifier.catch(() => {
      this.#notifier = undefined;
    });
    return this.#notifier;
  }

  // ------------------------------------------------------------------ watcher side

  subscribe(sessionId: string, listener: (frame: LiveFrame) => void): () => void {
    let set = this.#subscribers.get(sessionId);
    if (!set) {
      set = new Set();
      this.#subscribers.set(sessionId, set);
      const channel = channelName('ase_live', this.#db.schema, sessionId);
      this.#channels.set(channel, sessionId);
      void this.#listenTo(channel).then(() => this.#announce([sessionId]));
    }
    set.add(listener);
    return () => {
      const current = this.#subscribers.get(sessionId);
      if (!current?.delete(listener) || current.size > 0) return;
      this.#subscribers.delete(sessionId);
      this.#heard.delete(sessionId);
      const channel = channelName('ase_live', this.#db.schema, sessionId);
      this.#channels.delete(channel);
      void this.#listener?.then((client) => client.query(`UNLISTEN "${channel}"`)).catch(() => {});
    };
  }

  async #listenTo(channel: string): Promise<void> {
    try {
      const client = await this.#listenerClient();
      await client.query(`LISTEN "${channel}"`);
    } catch {
      // The announce tick connects again and listens to every channel then.
    }
  }

  #announce(sessionIds: string[]): void {
    if (sessionIds.length === 0 || this.#closed) return;
    const parts: string[] = [];
    let size = 0;
    for (const id of sessionIds) {
      if (parts.length > 0 && size + id.length + 1 > MAX_PAYLOAD) {
        this.#send(this.#watchChannel, parts.splice(0).join(','));
        size = 0;
      }
      parts.push(id);
      size += id.length + 1;
    }
    this.#send(this.#watchChannel, parts.join(','));
  }

  #send(channel: string, payload: string): void {
    this.#sending = this.#sending.then(async () => {
      try {
        await (await this.#notifierClient()).query('SELECT pg_notify($1, $2)', [channel, payload]);
      } catch {
        this.#notifier = undefined; // The next announcement is in announceMs.
      }
    });
  }

  #deliver(sessionId: string, payload: Payload): void {
    const listeners = this.#subscribers.get(sessionId);
    if (!listeners) return;
    const before = this.#heard.get(sessionId);
    this.#heard.set(sessionId, { p: payload.p, n: payload.n });
    const frames: LiveFrame[] = before && before.p === payload.p && before.n + 1 === payload.n ? payload.f : [['resync', null], ...payload.f];
    for (const frame of frames) {
      for (const listener of [...listeners]) {
        try {
          listener(frame);
        } catch {
          // One listener's failure is its own: the others, and the next frames, still get theirs.
        }
      }
    }
  }

  // ------------------------------------------------------------------ the LISTEN connection

  #connect(): void {
    if (this.#closed) return;
    void this.#listenerClient().catch(() => {});
  }

  #listenerClient(): Promise<PoolClient> {
    this.#listener ??= (async () => {
      await this.#ready;
      const client = await this.#db.connect();
      client.on('notification', (message) => {
        if (!message.payload) return;
        if (message.channel === this.#watchChannel) {
          const until = Date.now() + 3 * this.#announceMs;
          for (const id of message.payload.split(',')) this.#watchedUntil.set(id, until);
          return;
        }
        const sessionId = this.#channels.get(message.channel);
        if (sessionId === undefined) return;
        let payload: Payload;
        try {
          payload = JSON.parse(message.payload) as Payload;
        } catch {
          return;
        }
        this.#deliver(sessionId, payload);
      });
      client.on('error', () => {
        this.#listener = undefined;
        client.release(true);
        // Frames sent until a new connection listens are lost: every watcher resyncs then.
        this.#heard.clear();
      });
      await client.query(`LISTEN "${this.#watchChannel}"`);
      for (const channel of this.#channels.keys()) await client.query(`LISTEN "${channel}"`);
      return client;
    })();
    this.#listener.catch(() => {
      this.#listener = undefined;
    });
    return this.#listener;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#announceTimer);
    clearTimeout(this.#flushTimer);
    await this.#sending;
    for (const connection of [this.#listener, this.#notifier]) (await connection?.catch(() => undefined))?.release(true);
    this.#listener = undefined;
    this.#notifier = undefined;
    await this.#ready.catch(() => {});
    await this.#db.end();
  }
}

interface Delta {
  type: 'text_delta';
  messageId: string;
  text: string;
}

function isDelta(frame: LiveFrame): frame is ['agent', Delta] {
  const data = frame[1] as Partial<Delta> | null;
  return frame[0] === 'agent' && data !== null && typeof data === 'object' && data.type === 'text_delta' && typeof data.text === 'string';
}

/** Frames as JSON arrays of at most MAX_PAYLOAD bytes; one frame too big alone becomes `resync`. */
function chunk(frames: LiveFrame[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let size = 2;
  const RESYNC = JSON.stringify(['resync', null]);
  for (const frame of frames) {
    let json = JSON.stringify(frame);
    // Room for the envelope ({"p":uuid,"n":...,"f":...}, about 70 bytes).
    if (Buffer.byteLength(json) > MAX_PAYLOAD - 100) json = RESYNC;
    const bytes = Buffer.byteLength(json) + 1;
    if (parts.length > 0 && size + bytes > MAX_PAYLOAD - 100) {
      out.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    parts.push(json);
    size += bytes;
  }
  if (parts.length > 0) out.push(`[${parts.join(',')}]`);
  return out;
}
