/**
 * `session/request_permission` bookkeeping: every request the agent sends is ALWAYS answered —
 * with the host's decision, or `cancelled` on `session/cancel`, at turn end (after a grace
 * period), on session close and on agent exit. An unanswered request blocks the agent's next
 * turn (reference "acp.md" §5.2).
 *
 * Decisions map to an option BY KIND, never by id (ids differ per agent: `allow`, `approved`,
 * `proceed_once`, `allow_once`, …). `allow_always` is never chosen unless the caller names it
 * explicitly through `updatedPermissions`.
 */
import { isDeepStrictEqual } from 'node:util';
import { AseError } from '../../errors.js';
import type { PermissionDecision } from '../../events/engine-input.js';
import type { AcpPermissionOption } from './messages.js';

/** What is sent back as the `session/request_permission` result. */
export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

/** The decision cannot be expressed with the options the agent offered: an AseError with code `INVALID_INPUT`. */
const choiceError = (message: string): AseError => new AseError('INVALID_INPUT', message);

/**
 * An explicit choice in `PermissionDecision.updatedPermissions` (the ACP shape of that field):
 * `{ optionId }` picks that option, `{ kind }` the first option of that kind — the only way to
 * select `allow_always`.
 */
export type AcpOptionChoice = { optionId: string } | { kind: string };

function explicitChoice(options: readonly AcpPermissionOption[], entries: readonly unknown[] | undefined): AcpPermissionOption | undefined {
  for (const entry of entries ?? []) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const found =
      typeof e['optionId'] === 'string' ? options.find((o) => o.optionId === e['optionId']) : typeof e['kind'] === 'string' ? options.find((o) => o.kind === e['kind']) : undefined;
    if (found) return found;
    throw choiceError(`no permission option matches ${JSON.stringify(entry)} (offered: ${options.map((o) => `${o.optionId}/${o.kind}`).join(', ')})`);
  }
  return undefined;
}

/**
 * Maps a host decision to the outcome sent to the agent:
 * - allow → an explicit `updatedPermissions` choice, else the `allow_once` option (an
 *   `updatedInput` other than the reported `input` cannot be expressed);
 * - deny → the `reject_once` option, else `cancelled` (never a persistent `reject_always`);
 * - deny with `interrupt` → `cancelled` (the caller also cancels the turn).
 * Throws an AseError `INVALID_INPUT` when an allow cannot be expressed (no `allow_once` offered, or a
 * changed input).
 */
export function chooseOutcome(options: readonly AcpPermissionOption[], decision: PermissionDecision, input?: unknown): PermissionOutcome {
  if (decision.behavior === 'allow') {
    // ACP has no way to hand the agent another input: allowing would run the ORIGINAL call, not
    // the one the host approved. The same input handed back unchanged is a plain allow.
    if (decision.updatedInput !== undefined && !isDeepStrictEqual(decision.updatedInput, input)) {
      throw choiceError('ACP agents cannot run a tool with a changed input (updatedInput); allow the call as it is, or deny it');
    }
    const chosen = explicitChoice(options, decision.updatedPermissions) ?? options.find((o) => o.kind === 'allow_once');
    if (!chosen) {
      throw choiceError(
        `the agent offered no allow_once option (offered: ${options.map((o) => `${o.optionId}/${o.kind}`).join(', ') || 'none'}); choose one explicitly with updatedPermissions: [{ optionId }]`,
      );
    }
    return { outcome: 'selected', optionId: chosen.optionId };
  }
  if (decision.interrupt) return { outcome: 'cancelled' };
  const reject = options.find((o) => o.kind === 'reject_once');
  return reject ? { outcome: 'selected', optionId: reject.optionId } : { outcome: 'cancelled' };
}

/** Whether an outcome allows the tool to run. */
export function outcomeAllows(options: readonly AcpPermissionOption[], outcome: PermissionOutcome): boolean {
  if (outcome.outcome !== 'selected') return false;
  const kind = options.find((o) => o.optionId === outcome.optionId)?.kind ?? '';
  return kind.startsWith('allow');
}

export interface PendingPermission {
  /** Our id (the `permission_request` event's `requestId`). */
  readonly requestId: string;
  /** The agent's JSON-RPC request id, as a map key. */
  readonly rpcKey: string;
  readonly toolCallId: string;
  readonly options: readonly AcpPermissionOption[];
  /** The tool input reported with the request (an allow may not change it). */
  readonly input?: unknown;
  /** Resolves with the answer sent back to the agent. */
  readonly answer: Promise<PermissionOutcome>;
}

interface Entry extends PendingPermission {
  resolve(outcome: PermissionOutcome): void;
  graceTimer: { readonly id: number } | undefined;
}

export interface PermissionTimers {
  setTimeout(fn: () => void, ms: number): { readonly id: number };
  clearTimeout(handle: { readonly id: number }): void;
}

export interface PermissionBrokerOptions {
  /** Prefix of our request ids; include the generation so ids stay unique across generations. */
  idPrefix: string;
  timers: PermissionTimers;
  /** How long a request may stay open after its turn ended. */
  graceMs: number;
  /** Called after every answer (for diagnostics and tests). */
  onAnswered?: (pending: PendingPermission, outcome: PermissionOutcome, why: string) => void;
}

export class PermissionBroker {
  readonly #options: PermissionBrokerOptions;
  readonly #byId = new Map<string, Entry>();
  readonly #byRpc = new Map<string, Entry>();
  #seq = 0;

  constructor(options: PermissionBrokerOptions) {
    this.#options = options;
  }

  /** Ids of requests not answered yet. */
  pending(): string[] {
    return [...this.#byId.keys()];
  }

  get(requestId: string): PendingPermission | undefined {
    return this.#byId.get(requestId);
  }

  /** Registers a request from the agent (JSON-RPC id `rpcKey`); its answer resolves later. */
  open(rpcKey: string, toolCallId: string, options: readonly AcpPermissionOption[], input?: unknown): PendingPermission {
    let resolve!: (outcome: PermissionOutcome) => void;
    const answer = new Promise<PermissionOutcome>((r) => (resolve = r));
    const entry: Entry = { requestId: `${this.#options.idPrefix}-${++this.#seq}`, rpcKey, toolCallId, options, input, answer, resolve, graceTimer: undefined };
    this.#byId.set(entry.requestId, entry);
    this.#byRpc.set(rpcKey, entry);
    return entry;
  }

  /**
   * The answer for the agent's request `rpcKey` (what the SDK handler returns), if we opened it.
   * Handed out once: the SDK's handler is its only reader, so the bookkeeping goes with it (kept,
   * it would hold every request's options and input for the whole session).
   */
  answerFor(rpcKey: string): Promise<PermissionOutcome> | undefined {
    const entry = this.#byRpc.get(rpcKey);
    this.#byRpc.delete(rpcKey);
    return entry?.answer;
  }

  /** Answers one request. Returns false when it is not pending (already answered or unknown). */
  settle(requestId: string, outcome: PermissionOutcome, why: string): boolean {
    const entry = this.#byId.get(requestId);
    if (!entry) return false;
    this.#byId.delete(requestId);
    // The rpc entry stays until the SDK handler took the (already settled) answer: see answerFor.
    if (entry.graceTimer) this.#options.timers.clearTimeout(entry.graceTimer);
    entry.resolve(outcome);
    this.#options.onAnswered?.(entry, outcome, why);
    return true;
  }

  /** Answers every pending request `cancelled`. Returns the ids answered. */
  cancelAll(why: string): string[] {
    const ids = this.pending();
    for (const id of ids) this.settle(id, { outcome: 'cancelled' }, why);
    return ids;
  }

  /** Pending requests get `graceMs` more, then are answered `cancelled` (turn ended without them). */
  expireLater(why: string, requestIds: readonly string[] = this.pending()): void {
    for (const id of requestIds) {
      const entry = this.#byId.get(id);
      if (!entry || entry.graceTimer) continue;
      entry.graceTimer = this.#options.timers.setTimeout(() => {
        entry.graceTimer = undefined;
        this.settle(id, { outcome: 'cancelled' }, why);
      }, this.#options.graceMs);
    }
  }
}
