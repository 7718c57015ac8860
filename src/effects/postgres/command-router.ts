/**
 * `SessionCommandRouter` over PostgreSQL: a command for a session another host owns goes into
 * `ase_command` (durable; one row per message `localId`, so a retry is the same row) addressed to the
 * owning process, plus a NOTIFY on that process's channel; the owner claims it (`FOR UPDATE SKIP
 * LOCKED`), applies it through the ordinary Session API, writes the outcome into the row and notifies
 * the reply channel. Hints save time; a poll on both sides makes up for any lost one.
 *
 * The owning process is named by its lease (host, pid, start time, boot id), so two servers on one
 * machine are two owners, and a restarted server is a new one: commands its dead predecessor left
 * unanswered are re-addressed when a client retries them.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import type { PoolClient } from 'pg';
import { AseError, isAseError } from '../../errors.js';
import type { CommandOutcome, SessionCommand, SessionCommandRouter } from '../session-commands.js';
import { currentProcess, liveness, type ProcessIdentity } from '../store/process-identity.js';
import type { LeaseOwner } from '../store/session-store.js';
import { PostgresPool, type PostgresConnectionOptions } from './pool.js';
import { EPOCH_MS } from './postgres-store.js';
import { channelName, migrate, quoteSchema } from './schema.js';

export interface PostgresCommandRouterOptions extends PostgresConnectionOptions {
  /** This host's name as its store writes it into leases (default `os.hostname()`). */
  hostId?: string;
  /** How long `route` waits for the owner's answer. Default 15000 ms. */
  timeoutMs?: number;
  /** The safety-net poll, in ms (both for the owner's inbox and for answers). Default 500. */
  pollMs?: number;
}

/** The key of the process a lease names (its channel and its rows). */
export function ownerKey(owner: Pick<LeaseOwner, 'host' | 'pid' | 'startTime' | 'bootId'>): string {
  return createHash('sha256').update(`${owner.host}\0${owner.pid}\0${owner.startTime ?? ''}\0${owner.bootId ?? ''}`).digest('hex').slice(0, 24);
}

interface CommandRow {
  id: string;
  session_id: string;
  body: string;
}

export class PostgresCommandRouter implements SessionCommandRouter {
  readonly #db: PostgresPool;
  readonly #ready: Promise<void>;
  readonly #s: string;
  readonly #me: string;
  readonly #process: ProcessIdentity;
  readonly #timeoutMs: number;
  readonly #pollMs: number;
  readonly #replyChannel: string;
  readonly #waiting = new Map<string, () => void>();
  #listener: Promise<PoolClient> | undefined;
  #apply: ((sessionId: string, command: SessionCommand) => Promise<CommandOutcome>) | undefined;
  #inboxTimer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;
  #drainAgain = false;
  #closed = false;

  constructor(options: PostgresCommandRouterOptions) {
    this.#db = new PostgresPool(options, 'PostgresCommandRouter');
    this.#s = quoteSchema(this.#db.schema);
    const me = currentProcess(options.hostId ?? os.hostname());
    this.#process = me;
    this.#me = ownerKey({ host: me.host, pid: me.pid, startTime: me.startTime || undefined, bootId: me.bootId || undefined });
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#pollMs = options.pollMs ?? 500;
    this.#replyChannel = channelName('ase_reply', this.#db.schema);
    this.#ready = migrate(this.#db, this.#db.schema);
    this.#ready.catch(() => {});
  }

  async route(sessionId: string, command: SessionCommand): Promise<CommandOutcome | undefined> {
    const owner = await this.#holder(sessionId);
    if (!owner) return undefined;
    const key = ownerKey(owner);
    const localId = command.kind === 'send' ? command.localId : null;
    // A retry of a message is the same row; one still unanswered goes to the current owner.
    const [row] = await this.#db.query<{ id: string }>(
      `INSERT INTO ${this.#s}.ase_command AS c (session_id, owner_key, local_id, body) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id, local_id) DO UPDATE
          SET owner_key = EXCLUDED.owner_key, claimed_at = CASE WHEN c.owner_key = EXCLUDED.owner_key THEN c.claimed_at END
        WHERE c.done_at IS NULL
       RETURNING id`,
      [sessionId, key, localId, JSON.stringify(command)],
    );
    const id = row?.id ?? (await this.#db.query<{ id: string }>(`SELECT id FROM ${this.#s}.ase_command WHERE session_id = $1 AND local_id = $2`, [sessionId, localId]))[0]!.id;
    await this.#listen();
    const answered = this.#answer(id, () => this.#abandoned(id, sessionId, key));
    await this.#db.query('SELECT pg_notify($1, $2)', [channelName('ase_cmd', this.#db.schema, key), id]);
    let outcome: CommandOutcome | undefined;
    try {
      outcome = await answered;
    } catch (error) {
      throw isAseError(error, 'TIMEOUT') ? await this.#unanswered(error, id, sessionId, owner, localId) : error;
    }
    // The owner died (or lost the session) before it took the command: not routed after all.
    if (outcome === undefined) return undefined;
    // A command without a localId is answered once and never retried as the same row: drop it now.
    if (localId === null) await this.#db.query(`DELETE FROM ${this.#s}.ase_command WHERE id = $1`, [id]).catch(() => {});
    return outcome;
  }

  async refuseOrphaned(sessionId: string): Promise<void> {
    await this.#holder(sessionId);
  }

  /**
   * The process whose lease holds `sessionId`, when another live one does; undefined when none
   * does, this process does, or the holder is a dead process of this host (its lease is taken at
   * once, as a restarted server takes its own sessions back). A holder that stopped renewing is
   * refused: `SESSION_OWNED` with `details.orphaned`, adopted only when asked (`POST …/adopt`).
   */
  async #holder(sessionId: string): Promise<LeaseOwner | undefined> {
    await this.#ready;
    const [lease] = await this.#db.query<{ owner: string | null; live: boolean; expires_at: string }>(
      `SELECT owner, expires_at > clock_timestamp() AS live, ${EPOCH_MS('expires_at')} AS expires_at FROM ${this.#s}.ase_lease WHERE session_id = $1`,
      [sessionId],
    );
    if (!lease?.owner) return undefined;
    const owner = JSON.parse(lease.owner) as LeaseOwner;
    if (ownerKey(owner) === this.#me) return undefined;
    if (liveness(owner, this.#process) === 'dead') return undefined;
    if (!lease.live) {
      throw new AseError('SESSION_OWNED', `session "${sessionId}" is orphaned: its owner, pid ${owner.pid} on ${owner.host}, stopped renewing its lease at ${new Date(Number(lease.expires_at)).toISOString()}; it continues when that host opens it again, or here after POST /api/sessions/${sessionId}/adopt`, {
        details: { sessionId, owner, orphaned: true, expiresAt: Number(lease.expires_at) },
      });
    }
    return owner;
  }

  /**
   * The `TIMEOUT` a caller gets when the owner did not answer in time, saying what became of the
   * command. The owner stalled, or died on another machine (where its pid cannot be checked: only
   * its lease's expiry tells, and the session is then `orphaned`). A command without a `localId`
   * (abort, mode, stop, a decision) that it has not taken is withdrawn: it must not run minutes
   * later, when a stalled owner wakes (an abort would stop a turn nobody asked to stop), and the
   * caller is told nothing was done. One it took may still be applied; a message stays queued for
   * it (a retry with the same `localId` is the same command).
   */
  async #unanswered(timeout: AseError, id: string, sessionId: string, owner: LeaseOwner, localId: string | null): Promise<AseError> {
    const withdrawn =
      localId === null && (await this.#db.query(`DELETE FROM ${this.#s}.ase_command WHERE id = $1 AND done_at IS NULL AND claimed_at IS NULL RETURNING id`, [id]).catch(() => [])).length > 0;
    const [lease] = await this.#db.query<{ expires_at: string }>(`SELECT ${EPOCH_MS('expires_at')} AS expires_at FROM ${this.#s}.ase_lease WHERE session_id = $1`, [sessionId]).catch(() => []);
    const what = withdrawn
      ? 'the command was withdrawn: nothing was done'
      : localId === null
        ? 'it took the command and may still apply it'
        : 'the message stays queued for it (a retry with the same localId is the same command)';
    const until = lease ? `; if it is gone, the session is listed orphaned once its lease expires (${new Date(Number(lease.expires_at)).toISOString()}) and can be adopted (POST /api/sessions/${sessionId}/adopt)` : '';
    return new AseError('TIMEOUT', `the host that owns session "${sessionId}", pid ${owner.pid} on ${owner.host}, did not answer within ${this.#timeoutMs} ms: ${what}${until}`, {
      details: { ...(timeout.details as Record<string, unknown>), sessionId, owner, withdrawn, ...(lease && { expiresAt: Number(lease.expires_at) }) },
    });
  }

  /**
   * Whether the command `id`, addressed to the process `key`, will never be answered by it, and
   * so is withdrawn (its row deleted): that process is dead on this host (a SIGKILLed server, whose
   * inbox nobody reads: without this its caller waited for the TIMEOUT, told the command "stays
   * queued" for nobody), or the lease has moved on (released, another process holds it, or it
   * expired: the owner is gone or stalled, the session orphaned) before the process claimed the
   * command. A command a live process has claimed is left to it: it answers.
   * The caller then applies the command itself (its own host takes the dead owner's lease) or routes
   * it to the new owner; a message the dead process had already accepted is known by its `localId`.
   */
  async #abandoned(id: string, sessionId: string, key: string): Promise<boolean> {
    const [lease] = await this.#db.query<{ owner: string | null; live: boolean }>(`SELECT owner, expires_at > clock_timestamp() AS live FROM ${this.#s}.ase_lease WHERE session_id = $1`, [sessionId]);
    const owner = lease?.owner ? (JSON.parse(lease.owner) as LeaseOwner) : undefined;
    const dead = owner !== undefined && ownerKey(owner) === key && liveness(owner, this.#process) === 'dead';
    // Its lease expired while the command waited (a host on another machine that died): the
    // session is orphaned now, and the caller is told so at once rather than at the timeout.
    const expired = owner !== undefined && ownerKey(owner) === key && lease?.live === false;
    if (owner !== undefined && ownerKey(owner) === key && !dead && !expired) return false;
    const withdrawn = await this.#db.query(`DELETE FROM ${this.#s}.ase_command WHERE id = $1 AND done_at IS NULL AND (claimed_at IS NULL OR $2::boolean) RETURNING id`, [id, dead]);
    return withdrawn.length > 0;
  }

  /**
   * Waits for the row's outcome: woken by the reply channel, checked at every poll, until the
   * timeout; undefined when `abandoned` (asked at each poll without an answer) withdrew it.
   */
  async #answer(id: string, abandoned: () => Promise<boolean>): Promise<CommandOutcome | undefined> {
    const deadline = Date.now() + this.#timeoutMs;
    try {
      for (let look = 0; ; look++) {
        const [row] = await this.#db.query<{ result: string | null }>(`SELECT result FROM ${this.#s}.ase_command WHERE id = $1`, [id]);
        if (row?.result) return JSON.parse(row.result) as CommandOutcome;
        if (look > 0 && (await abandoned())) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new AseError('TIMEOUT', `the host that owns this session did not answer within ${this.#timeoutMs} ms; the command stays queued for it (a retry with the same localId is the same command)`, {
            details: { commandId: id, timeoutMs: this.#timeoutMs },
          });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, this.#pollMs));
          this.#waiting.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    } finally {
      this.#waiting.delete(id);
    }
  }

  serve(apply: (sessionId: string, command: SessionCommand) => Promise<CommandOutcome>): void {
    this.#apply = apply;
    void this.#listen().catch(() => {});
    let polls = 0;
    this.#inboxTimer ??= setInterval(() => {
      this.#drain();
      // Now and then, commands older than a day go (any host's: one whose owner died is never
      // answered). A retry of a message that late meets the session's own DUPLICATE_SEND check.
      if (++polls % 1000 === 0) void this.#db.query(`DELETE FROM ${this.#s}.ase_command WHERE created_at < clock_timestamp() - interval '1 day'`).catch(() => {});
    }, this.#pollMs);
    this.#inboxTimer.unref();
    this.#drain();
  }

  /** One LISTEN connection: answers for `route`, and (once serving) this host's inbox. */
  #listen(): Promise<PoolClient> {
    this.#listener ??= (async () => {
      await this.#ready;
      const client = await this.#db.connect();
      const inbox = channelName('ase_cmd', this.#db.schema, this.#me);
      client.on('notification', (message) => {
        if (message.channel === this.#replyChannel) this.#waiting.get(message.payload ?? '')?.();
        else if (message.channel === inbox) this.#drain();
      });
      client.on('error', () => {
        // Hints are lost until a new connection listens; the polls cover the gap.
        this.#listener = undefined;
        client.release(true);
      });
      await client.query(`LISTEN "${this.#replyChannel}"`);
      await client.query(`LISTEN "${inbox}"`);
      return client;
    })();
    this.#listener.catch(() => {
      this.#listener = undefined;
    });
    return this.#listener;
  }

  #drain(): void {
    if (!this.#apply || this.#closed) return;
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#draining = (async () => {
      do {
        this.#drainAgain = false;
        let claimed: CommandRow[];
        try {
          await this.#ready;
          claimed = await this.#db.query<CommandRow>(
            `UPDATE ${this.#s}.ase_command SET claimed_at = clock_timestamp()
              WHERE id IN (SELECT id FROM ${this.#s}.ase_command
                            WHERE owner_key = $1 AND done_at IS NULL AND claimed_at IS NULL
                            ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 50)
              RETURNING id, session_id, body`,
            [this.#me],
          );
        } catch {
          return; // The next poll tries again.
        }
        claimed.sort((a, b) => Number(a.id) - Number(b.id));
        for (const row of claimed) {
          let outcome: CommandOutcome;
          try {
            outcome = await this.#apply!(row.session_id, JSON.parse(row.body) as SessionCommand);
          } catch (error) {
            outcome = isAseError(error)
              ? { ok: false, error: { code: error.code, message: error.message, ...(error.details !== undefined && { details: error.details }) } }
              : { ok: false, error: { code: 'INTERNAL', message: 'the owning host failed to apply the command' } };
          }
          try {
            await this.#db.query(`UPDATE ${this.#s}.ase_command SET done_at = clock_timestamp(), result = $2 WHERE id = $1`, [row.id, JSON.stringify(outcome)]);
            await this.#db.query('SELECT pg_notify($1, $2)', [this.#replyChannel, row.id]);
          } catch {
            // The caller polls the row; a lost notify costs latency only.
          }
        }
      } while (this.#drainAgain && !this.#closed);
    })().finally(() => {
      this.#draining = undefined;
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#inboxTimer);
    await this.#draining;
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener) (await listener.catch(() => undefined))?.release(true);
    await this.#ready.catch(() => {});
    await this.#db.end();
  }
}
