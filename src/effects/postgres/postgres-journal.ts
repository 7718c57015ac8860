/**
 * A TranscriptJournal in PostgreSQL: `ase_journal (session_id, seq, fence, entry)`, the head of each
 * session's journal kept on its lease row (`ase_lease.last_seq`), so seqs are contiguous per session
 * and only grow, whichever host appends.
 *
 * Every append with a `fence` is fenced in its own statement: the UPDATE of the lease row that takes
 * the next seqs only matches while that fence is the current, unreleased lease, so an owner that lost
 * its lease writes nothing and gets `LEASE_LOST` (the gap the file journal leaves to the runtime's own
 * lease check is closed here). Group commit as in the FileJournal: while one statement of a session is
 * in flight, later appends queue and go out together as the next batch, one round trip and one commit.
 *
 * `watch` hears this journal's own appends. Appends of other hosts arrive through `watchAcross`
 * (LISTEN/NOTIFY as a hint, the table as the truth), see docs/multi-host.md.
 */
import { AseError, isAseError } from '../../errors.js';
import { TranscriptEntrySchema, type JournaledEntry, type TranscriptEntry } from '../../events/transcript-entry.js';
import { serializeEntry } from '../journal/serialize-entry.js';
import { JournalWatchers, type JournalAppendOptions, type JournalBounds, type JournalListener, type JournalRange, type TranscriptJournal } from '../journal/transcript-journal.js';
import { JournalFeed } from './journal-feed.js';
import { PostgresPool, type PostgresConnectionOptions } from './pool.js';
import { channelName, migrate, quoteSchema } from './schema.js';

export interface PostgresJournalOptions extends PostgresConnectionOptions {
  /**
   * Tell other hosts about appends (one coalesced NOTIFY per flush) and hear theirs in `watch`.
   * Default true; off, `watch` hears this journal's own appends only and nothing is notified.
   */
  acrossHosts?: boolean;
  /** The safety-net poll of watched sessions when hints are lost, in ms. Default 5000. */
  pollMs?: number;
}


/** A fence given must be a positive integer. */
function checkFence(fence: number | undefined): void {
  if (fence !== undefined && (!Number.isSafeInteger(fence) || fence < 1)) throw new AseError('INVALID_INPUT', `fence must be a positive integer, got ${String(fence)}`);
}

/**
 * The entry to write as JSON, without a `seq` (the database assigns it): serialized now, so a caller
 * mutating the entry after the call cannot change what is written (and serialized once: the text is
 * what the statement sends; watchers get it parsed back).
 */
function serializeForAppend(entry: TranscriptEntry): string {
  if (typeof entry?.sessionId !== 'string' || entry.sessionId === '') throw new AseError('INVALID_INPUT', 'a transcript entry needs a sessionId');
  return serializeEntry(entry);
}

/** An entry refused before anything is queued: an AseError as it is, anything else (a serialization failure) as INVALID_INPUT. */
function refusal(error: unknown): AseError {
  if (isAseError(error)) return error;
  return new AseError('INVALID_INPUT', `transcript entry is not serializable: ${(error as Error).message}`, { cause: error });
}

interface Pending {
  /** The entry's JSON without its seq (serializeForAppend). */
  text: string;
  fence: number | undefined;
  resolve: (seq: number) => void;
  reject: (error: unknown) => void;
}

export class PostgresJournal implements TranscriptJournal {
  readonly #db: PostgresPool;
  readonly #ready: Promise<void>;
  readonly #sql: ReturnType<typeof statements>;
  readonly #queues = new Map<string, Pending[]>();
  /** Per session, the batch statement in flight (at most one). */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Own appends only (acrossHosts false). */
  readonly #watchers = new JournalWatchers();
  readonly #feed: JournalFeed | undefined;

  constructor(options: PostgresJournalOptions) {
    this.#db = new PostgresPool(options, 'PostgresJournal');
    this.#sql = statements(quoteSchema(this.#db.schema));
    this.#ready = migrate(this.#db, this.#db.schema);
    this.#ready.catch(() => {});
    if (options.acrossHosts !== false) {
      this.#feed = new JournalFeed(
        {
          readAfter: async (sessionId, afterSeq, limit) => (await this.#read('read', [sessionId, afterSeq, null, limit])).map((row) => parseEntry(sessionId, row)),
          heads: async (ids) => new Map((await this.#read('heads', [ids])).map((row) => [row.session_id as string, Number(row.last_seq)])),
          connect: async () => {
            await this.#ready;
            return this.#db.connect();
          },
        },
        { channel: channelName('ase_journal', this.#db.schema), ...(options.pollMs !== undefined && { pollMs: options.pollMs }) },
      );
    }
  }

  get schema(): string {
    return this.#db.schema;
  }

  append(entry: TranscriptEntry, options: JournalAppendOptions = {}): Promise<number> {
    let text: string;
    try {
      checkFence(options.fence);
      text = serializeForAppend(entry);
    } catch (error) {
      return Promise.reject(refusal(error));
    }
    return new Promise<number>((resolve, reject) => this.#queue(entry.sessionId, [{ text, fence: options.fence, resolve, reject }]));
  }

  /**
   * Several entries of one session with one fence: queued together, so they go out in one statement
   * (with whatever else is queued meanwhile), one promise for the lot. A bad entry refuses the call
   * before anything is queued.
   */
  appendMany(entries: readonly TranscriptEntry[], options: JournalAppendOptions = {}): Promise<number[]> {
    let texts: string[];
    let sessionId: string | undefined;
    try {
      if (!Array.isArray(entries)) throw new AseError('INVALID_INPUT', 'appendMany takes an array of transcript entries');
      checkFence(options.fence);
      sessionId = entries[0]?.sessionId;
      texts = entries.map((entry) => {
        if (entry?.sessionId !== sessionId) throw new AseError('INVALID_INPUT', `appendMany takes entries of one session: "${String(entry?.sessionId)}" after "${String(sessionId)}"`);
        return serializeForAppend(entry);
      });
    } catch (error) {
      return Promise.reject(refusal(error));
    }
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<number[]>((resolve, reject) => {
      const seqs = new Array<number>(texts.length);
      let left = texts.length;
      let failed = false;
      const pending = texts.map(
        (text, i): Pending => ({
          text,
          fence: options.fence,
          resolve: (seq) => {
            seqs[i] = seq;
            if (--left === 0 && !failed) resolve(seqs);
          },
          reject: (error) => {
            if (failed) return;
            failed = true;
            reject(error);
          },
        }),
      );
      this.#queue(sessionId!, pending);
    });
  }

  #queue(sessionId: string, pending: Pending[]): void {
    const queue = this.#queues.get(sessionId) ?? [];
    for (const p of pending) queue.push(p);
    this.#queues.set(sessionId, queue);
    this.#pump(sessionId);
  }

  /** Sends the next batch of a session unless one is in flight: the queued appends with the first one's fence, in call order. */
  #pump(sessionId: string): void {
    if (this.#inFlight.has(sessionId)) return;
    const queue = this.#queues.get(sessionId);
    if (!queue || queue.length === 0) {
      this.#queues.delete(sessionId);
      return;
    }
    const fence = queue[0]!.fence;
    let n = 1;
    while (n < queue.length && queue[n]!.fence === fence) n++;
    const batch = queue.splice(0, n);
    const run = this.#write(sessionId, batch, fence).finally(() => {
      this.#inFlight.delete(sessionId);
      this.#pump(sessionId);
    });
    this.#inFlight.set(sessionId, run);
  }

  async #write(sessionId: string, batch: Pending[], fence: number | undefined): Promise<void> {
    const texts = batch.map((p) => p.text);
    let seqs: number[];
    try {
      await this.#ready;
      // A watch begun before this append learns its start first, so it hears this append.
      await this.#feed?.ready(sessionId);
      const rows = fence === undefined
        ? await this.#db.query<{ seq: string }>(this.#sql.append, [sessionId, texts, texts.length], 'journal.append')
        : await this.#db.query<{ seq: string }>(this.#sql.appendFenced, [sessionId, texts, texts.length, fence], 'journal.appendFenced');
      seqs = rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
    } catch (error) {
      const failure = isAseError(error) ? error : new AseError('JOURNAL_IO', `PostgresJournal append: ${(error as Error).message}`, { cause: error });
      for (const p of batch) p.reject(failure);
      return;
    }
    if (seqs.length !== batch.length) {
      const lost = new AseError('LEASE_LOST', `journal append refused: fence ${fence} is no longer the current lease of session "${sessionId}"; nothing was written`, {
        details: { sessionId, fence },
      });
      for (const p of batch) p.reject(lost);
      return;
    }
    // Watchers get objects: parsed back from the texts written, only when someone watches.
    const entries = (): JournaledEntry[] => batch.map((p, i) => ({ ...(JSON.parse(p.text) as TranscriptEntry), seq: seqs[i]! }) as JournaledEntry);
    if (this.#feed) {
      if (this.#feed.watches(sessionId)) this.#feed.offer(sessionId, entries());
      this.#feed.committed(sessionId, seqs.at(-1)!);
    } else if (this.#watchers.has(sessionId)) {
      for (const entry of entries()) this.#watchers.notify(entry);
    }
    batch.forEach((p, i) => p.resolve(seqs[i]!));
  }

  async read(sessionId: string, range: JournalRange = {}): Promise<TranscriptEntry[]> {
    await this.#settled(sessionId); // Read-your-writes: include appends already called.
    const after = range.afterSeq ?? 0;
    const before = range.beforeSeq ?? null;
    const limit = range.limit === undefined ? null : Math.max(0, Math.floor(range.limit));
    // Only a beforeSeq with a limit: the newest ones before the cursor (backward paging).
    const backward = range.afterSeq === undefined && range.beforeSeq !== undefined && limit !== null;
    const rows = await this.#read(backward ? 'readBackward' : 'read', [sessionId, after, before, limit]);
    if (backward) rows.reverse();
    return rows.map((row) => parseEntry(sessionId, row));
  }

  async bounds(sessionId: string): Promise<JournalBounds> {
    await this.#settled(sessionId);
    const [row] = await this.#read('bounds', [sessionId]);
    return { firstSeq: Number(row?.first_seq ?? 0), lastSeq: Number(row?.last_seq ?? 0) };
  }

  /** Hears the session's entries after the watch began, in seq order, once: this host's appends and (acrossHosts) every other host's. */
  watch(sessionId: string, listener: JournalListener): () => void {
    return this.#feed ? this.#feed.watch(sessionId, listener) : this.#watchers.watch(sessionId, listener);
  }

  /**
   * A watch across hosts starts where the session's head is when it reads it (a query of its own):
   * this resolves once that read is done, so what any host appends afterwards reaches the watch.
   * (This host's own appends wait for it anyway.) Without `acrossHosts`: at once.
   */
  async watchStarted(sessionId: string): Promise<void> {
    await this.#feed?.ready(sessionId);
  }

  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight.values()]);
  }

  /** Removes a session's entries; its next append starts again at 1 (as a deleted file does). */
  async delete(sessionId: string): Promise<void> {
    await this.#settled(sessionId);
    await this.#read('delete', [sessionId]);
  }

  /** Waits for pending appends, then closes the pool the journal opened (a pool passed in is the caller's). */
  async close(): Promise<void> {
    await this.flush();
    await this.#feed?.close();
    await this.#ready.catch(() => {});
    await this.#db.end();
  }

  async #settled(sessionId: string): Promise<void> {
    // A watch that began before this read knows its start first, so nothing falls between the two.
    await this.#feed?.ready(sessionId);
    while (this.#inFlight.has(sessionId)) await this.#inFlight.get(sessionId);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async #read(name: 'read' | 'readBackward' | 'bounds' | 'delete' | 'heads', values: unknown[]): Promise<any[]> {
    try {
      await this.#ready;
      return await this.#db.query(this.#sql[name], values, `journal.${name}`);
    } catch (error) {
      if (isAseError(error)) throw error;
      throw new AseError('JOURNAL_IO', `PostgresJournal ${name}: ${(error as Error).message}`, { cause: error });
    }
  }
}

function parseEntry(sessionId: string, row: { seq: string; entry: string }): JournaledEntry {
  let data: unknown;
  try {
    data = JSON.parse(row.entry);
  } catch (error) {
    throw new AseError('STORE_CORRUPT', `PostgresJournal: entry ${row.seq} of session "${sessionId}" is not JSON`, { cause: error });
  }
  const parsed = TranscriptEntrySchema.safeParse(data);
  if (!parsed.success) throw new AseError('STORE_CORRUPT', `PostgresJournal: entry ${row.seq} of session "${sessionId}" is not a transcript entry: ${parsed.error.message}`);
  return { ...parsed.data, seq: Number(row.seq) } as JournaledEntry;
}

/** The journal's fixed statements, for one schema. */
function statements(s: string) {
  const insert = (fence: string) => `
      INSERT INTO ${s}.ase_journal (session_id, seq, fence, entry)
      SELECT $1, head.base + e.ord, ${fence}, e.entry
        FROM head, unnest($2::text[]) WITH ORDINALITY AS e(entry, ord)
      RETURNING seq`;
  return {
    // Unfenced: the head row is made on first use (fence 0: never leased).
    append: `
      WITH head AS (
        INSERT INTO ${s}.ase_lease AS l (session_id, fence, owner, host_id, expires_at, ttl_ms, last_seq)
        VALUES ($1, 0, NULL, NULL, clock_timestamp(), 0, $3::bigint)
        ON CONFLICT (session_id) DO UPDATE SET last_seq = l.last_seq + $3::bigint
        RETURNING last_seq - $3::bigint AS base)${insert('0')}`,
    // Fenced: takes the next seqs only while $4 is the current, unreleased lease; else no row at all.
    appendFenced: `
      WITH head AS (
        UPDATE ${s}.ase_lease SET last_seq = last_seq + $3::bigint
         WHERE session_id = $1 AND fence = $4::bigint AND owner IS NOT NULL
        RETURNING last_seq - $3::bigint AS base)${insert('$4::bigint')}`,
    read: `
      SELECT seq, entry FROM ${s}.ase_journal
       WHERE session_id = $1 AND seq > $2::bigint AND ($3::bigint IS NULL OR seq < $3::bigint)
       ORDER BY seq LIMIT $4::bigint`,
    readBackward: `
      SELECT seq, entry FROM ${s}.ase_journal
       WHERE session_id = $1 AND seq > $2::bigint AND ($3::bigint IS NULL OR seq < $3::bigint)
       ORDER BY seq DESC LIMIT $4::bigint`,
    bounds: `
      SELECT (SELECT min(seq) FROM ${s}.ase_journal WHERE session_id = $1) AS first_seq,
             (SELECT last_seq FROM ${s}.ase_lease WHERE session_id = $1) AS last_seq`,
    heads: `SELECT session_id, last_seq FROM ${s}.ase_lease WHERE session_id = ANY($1::text[])`,
    delete: `
      WITH gone AS (DELETE FROM ${s}.ase_journal WHERE session_id = $1)
      UPDATE ${s}.ase_lease SET last_seq = 0 WHERE session_id = $1`,
  };
}
