/**
 * What feeds `PostgresJournal.watch` across hosts: LISTEN/NOTIFY as a hint, the table as the truth.
 *
 * - Writer side: after an append batch commits, the session's new head goes into a map; one notifier
 *   connection (`synchronous_commit = off`) drains it as one coalesced `pg_notify` per flush
 *   (`s1:17,s9:4`, under the 8000-byte payload limit). Never inside the append's transaction: a
 *   notifying commit takes a database-wide lock, measured to cut concurrent append throughput 8-10x.
 * - Reader side: one LISTEN connection per journal. A hint with a seq past a watched session's cursor
 *   reads `seq > cursor` from the table and delivers in seq order. Notifications sent while the LISTEN
 *   connection was down are lost, so every (re)connect and a slow poll re-read all cursors.
 *
 * Each watched session has one cursor: its watchers hear every entry after the seq the watch began at,
 * in order, once (own appends are offered directly; a gap is filled by a read, never skipped).
 */
import type { PoolClient } from 'pg';
import type { JournaledEntry } from '../../events/transcript-entry.js';
import { JournalWatchers, type JournalListener } from '../journal/transcript-journal.js';

/** What the feed needs of the journal. */
export interface JournalFeedSource {
  /** Entries after `afterSeq`, ascending, at most `limit`. */
  readAfter(sessionId: string, afterSeq: number, limit: number): Promise<JournaledEntry[]>;
  /** The heads of these sessions. */
  heads(sessionIds: string[]): Promise<Map<string, number>>;
  /** A connection of its own (for LISTEN and for the notifier). */
  connect(): Promise<PoolClient>;
}

export interface JournalFeedOptions {
  /** The channel: one per schema. */
  channel: string;
  /** The safety-net poll of watched sessions, in ms. Default 5000. */
  pollMs?: number;
}

interface Watched {
  /** The last seq delivered (or the head when the watch began); undefined until that head is read. */
  cursor: number | undefined;
  /** Resolves once the cursor is known. */
  ready: Promise<void>;
  /** A catch-up read in progress, and whether another was asked for meanwhile. */
  reading: Promise<void> | undefined;
  again: boolean;
}

const PAGE = 500;
/** Room under PostgreSQL's 8000-byte NOTIFY payload limit. */
const MAX_PAYLOAD = 7_900;

export class JournalFeed {
  readonly #source: JournalFeedSource;
  readonly #channel: string;
  readonly #pollMs: number;
  readonly #watchers = new JournalWatchers();
  readonly #watched = new Map<string, Watched>();
  #listener: PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #poll: NodeJS.Timeout | undefined;
  #closed = false;
  // The writer side.
  readonly #heads = new Map<string, number>();
  #notifier: Promise<PoolClient> | undefined;
  #notifying: Promise<void> | undefined;

  constructor(source: JournalFeedSource, options: JournalFeedOptions) {
    this.#source = source;
    this.#channel = options.channel;
    this.#pollMs = options.pollMs ?? 5_000;
  }

  // ------------------------------------------------------------------ reader side

  watch(sessionId: string, listener: JournalListener): () => void {
    if (!this.#watched.has(sessionId)) {
      const watched: Watched = { cursor: undefined, ready: Promise.resolve(), reading: undefined, again: false };
      watched.ready = this.#source.heads([sessionId]).then(
        (heads) => {
          watched.cursor ??= heads.get(sessionId) ?? 0;
        },
        () => {
          watched.cursor ??= 0;
        },
      );
      this.#watched.set(sessionId, watched);
      this.#ensureListening();
    }
    const unwatch = this.#watchers.watch(sessionId, listener);
    return () => {
      unwatch();
      if (!this.#watchers.has(sessionId)) this.#watched.delete(sessionId);
      if (this.#watched.size === 0) this.#stopListening();
    };
  }

  /** Resolves once a watch of `sessionId` begun earlier knows where it starts (reads wait for it, so nothing falls between). */
  async ready(sessionId: string): Promise<void> {
    await this.#watched.get(sessionId)?.ready;
  }

  /** Whether a watch of `sessionId` is open (`offer` does nothing otherwise). */
  watches(sessionId: string): boolean {
    return this.#watched.has(sessionId);
  }

  /** This journal's own appends, just committed, in seq order. */
  offer(sessionId: string, entries: JournaledEntry[]): void {
    const watched = this.#watched.get(sessionId);
    if (!watched) return;
    if (watched.cursor === undefined) {
      // The watch began before these committed: they are after its start. Once its head is known,
      // a catch-up read delivers whatever is past it.
      void watched.ready.then(() => this.#catchUp(sessionId, Number.POSITIVE_INFINITY));
      return;
    }
    for (const entry of entries) {
      if (entry.seq <= watched.cursor) continue;
      if (entry.seq !== watched.cursor + 1 || watched.reading) {
        this.#catchUp(sessionId, entry.seq);
        return;
      }
      watched.cursor = entry.seq;
      this.#watchers.notify(entry);
    }
  }

  /** A hint (a notification, a poll): `sessionId` has entries up to `seq`. */
  #catchUp(sessionId: string, seq: number): void {
    const watched = this.#watched.get(sessionId);
    if (!watched || watched.cursor === undefined || seq <= watched.cursor) return;
    if (watched.reading) {
      watched.again = true;
      return;
    }
    watched.reading = (async () => {
      do {
        watched.again = false;
        for (;;) {
          let page: JournaledEntry[];
          try {
            page = await this.#source.readAfter(sessionId, watched.cursor!, PAGE);
          } catch {
            return; // The next hint or poll tries again.
          }
          for (const entry of page) {
            if (this.#watched.get(sessionId) !== watched) return;
            // Seqs are contiguous in the table; one that is not next means the journal was deleted
            // and restarted under this watch: stop here rather than deliver out of order.
            if (entry.seq !== watched.cursor! + 1) return;
            watched.cursor = entry.seq;
            this.#watchers.notify(entry);
          }
          if (page.length < PAGE) break;
        }
      } while (watched.again);
    })().finally(() => {
      watched.reading = undefined;
    });
  }

  #catchUpAll(): void {
    const ids = [...this.#watched.keys()];
    if (ids.length === 0) return;
    this.#source.heads(ids).then(
      (heads) => {
        for (const [id, head] of heads) this.#catchUp(id, head);
      },
      () => {},
    );
  }

  #ensureListening(): void {
    if (this.#closed || this.#listener || this.#connecting) return;
    this.#connecting = (async () => {
      let client: PoolClient;
      try {
        client = await this.#source.connect();
        await client.query(`LISTEN "${this.#channel}"`);
      } catch {
        // The poll below keeps watchers fed meanwhile; try LISTEN again at its next tick.
        return;
      }
      if (this.#closed || this.#watched.size === 0) {
        client.release(true);
        return;
      }
      this.#listener = client;
      client.on('notification', (message) => {
        if (message.channel !== this.#channel || !message.payload) return;
        for (const part of message.payload.split(',')) {
          const at = part.lastIndexOf(':');
          this.#catchUp(part.slice(0, at), Number(part.slice(at + 1)));
        }
      });
      client.on('error', () => {
        // The connection is gone: notifications sent until we are back are lost, so re-read all cursors then.
        if (this.#listener === client) this.#listener = undefined;
        client.release(true);
      });
      this.#catchUpAll(); // Anything committed before LISTEN took effect.
    })().finally(() => {
      this.#connecting = undefined;
    });
    this.#poll ??= setInterval(() => {
      if (!this.#listener) this.#ensureListening();
      this.#catchUpAll();
    }, this.#pollMs);
    this.#poll.unref();
  }

  #stopListening(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    const client = this.#listener;
    this.#listener = undefined;
    client?.release(true);
  }

  // ------------------------------------------------------------------ writer side

  /** `sessionId`'s head is now `seq`: other hosts hear it with the next coalesced notify. */
  committed(sessionId: string, seq: number): void {
    this.#heads.set(sessionId, Math.max(seq, this.#heads.get(sessionId) ?? 0));
    this.#notifying ??= this.#drain().finally(() => {
      this.#notifying = undefined;
      if (this.#heads.size > 0 && !this.#closed) this.committed(...this.#first());
    });
  }

  #first(): [string, number] {
    const [entry] = this.#heads;
    return entry!;
  }

  async #drain(): Promise<void> {
    try {
      this.#notifier ??= this.#source.connect().then(async (client) => {
        client.on('error', () => {
          this.#notifier = undefined;
          client.release(true);
        });
        // A hint needs no durability of its own: the entries it points at are committed already.
        await client.query('SET synchronous_commit = off');
        return client;
      });
      const client = await this.#notifier;
      while (this.#heads.size > 0) {
        const parts: string[] = [];
        let size = 0;
        for (const [id, seq] of this.#heads) {
          const part = `${id}:${seq}`;
          if (parts.length > 0 && size + part.length + 1 > MAX_PAYLOAD) break;
          parts.push(part);
          size += part.length + 1;
          this.#heads.delete(id);
        }
        await client.query('SELECT pg_notify($1, $2)', [this.#channel, parts.join(',')]);
      }
    } catch {
      // A lost hint costs latency only: the readers' poll finds the entries.
      this.#notifier = undefined;
      this.#heads.clear();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopListening();
    await this.#notifying;
    const notifier = this.#notifier;
    this.#notifier = undefined;
    if (notifier) (await notifier.catch(() => undefined))?.release(true);
  }
}
