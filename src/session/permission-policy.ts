/**
 * The inline permission policy, `canUseTool`: the Agent SDK's shape (an async callback per tool
 * request) on top of the session's durable permission ledger. Its answer goes in through
 * `decide()`, like any client's: the first answer wins, so a remote client (the web page, an API
 * client) may still answer first, and the policy's call is then told by its `signal`. A policy
 * that throws (or rejects) denies, with the error's message for the agent. Without a policy
 * nothing changes: prompts wait for `decide()`.
 *
 * A session has one policy (`createSession({ canUseTool })`); a `run()` may bring its own for the
 * prompts of its turn (from its `user_message` to its end), which then wins over the session's.
 */
import { errorMessage, isAseError } from '../errors.js';
import type { NoticeOf, SessionNotice } from './notices.js';

/** `decide()`'s options (session.ts's DecideOptions; restated here, as session.ts imports this file's types). */
interface DecideOptions {
  updatedInput?: unknown;
  message?: string;
  updatedPermissions?: unknown[];
}

/** What a policy answers: allow (optionally with a changed input or permission rules) or deny (with a reason the agent sees). */
export type PermissionResult = { behavior: 'allow'; updatedInput?: unknown; updatedPermissions?: unknown[] } | { behavior: 'deny'; message?: string };

export interface CanUseToolContext {
  /** The ledger's id of the request (what `decide()` takes). */
  requestId: string;
  /** The tool call it is about, when the engine names it. */
  callId?: string;
  /** The engine's suggested permission rules, when it offers some (Claude's `permission_suggestions`). */
  suggestions?: unknown[];
  /** Aborted when the request was answered elsewhere first, timed out or was cancelled, or the session ended. */
  signal: AbortSignal;
}

/**
 * Decides one tool permission request. Called once per request, in the order they come; several
 * may be pending at once. `input` is the tool's input as the agent sent it.
 */
export type CanUseTool = (toolName: string, input: unknown, context: CanUseToolContext) => Promise<PermissionResult> | PermissionResult;

/** The session as a policy sees it. */
export interface PolicyHost {
  on(type: 'permission_prompt' | 'permission_resolved' | 'done', listener: (notice: SessionNotice) => void): () => void;
  decide(requestId: string, decision: 'allow' | 'deny', options?: DecideOptions): Promise<void>;
}

export class PermissionPolicies {
  #session: CanUseTool | undefined;
  /** The policies of runs whose turn is in progress (normally one), newest last. */
  readonly #turns: CanUseTool[] = [];
  /** Requests a policy is deciding, with the abort of its call. */
  readonly #pending = new Map<string, AbortController>();

  constructor(private readonly host: PolicyHost) {
    // The three types it acts on, not every notice: a notice nobody listens to is not even built (NoticeBus.listens).
    for (const type of ['permission_prompt', 'permission_resolved', 'done'] as const) host.on(type, (notice) => this.#onNotice(notice));
  }

  /** Sets (or with undefined clears) the session's policy. */
  setSessionPolicy(policy: CanUseTool | undefined): void {
    this.#session = policy;
  }

  /** A run's policy, for the prompts of its turn; call the returned function when the turn ends. */
  enterTurn(policy: CanUseTool): () => void {
    this.#turns.push(policy);
    return () => {
      const index = this.#turns.lastIndexOf(policy);
      if (index >= 0) this.#turns.splice(index, 1);
    };
  }

  #onNotice(notice: SessionNotice): void {
    if (notice.type === 'permission_prompt') this.#ask(notice);
    else if (notice.type === 'permission_resolved') this.#settled(notice.requestId);
    else if (notice.type === 'done') for (const id of [...this.#pending.keys()]) this.#settled(id);
  }

  #settled(requestId: string): void {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    this.#pending.delete(requestId);
    pending.abort(new Error(`permission request ${requestId} was settled`));
  }

  #ask(prompt: NoticeOf<'permission_prompt'>): void {
    const policy = this.#turns.at(-1) ?? this.#session;
    // A prompt re-sent (a client came back online) while its call runs is not asked twice.
    if (!policy || this.#pending.has(prompt.requestId)) return;
    const controller = new AbortController();
    this.#pending.set(prompt.requestId, controller);
    const context: CanUseToolContext = {
      requestId: prompt.requestId,
      ...(prompt.callId !== undefined && { callId: prompt.callId }),
      ...(prompt.suggestions !== undefined && { suggestions: prompt.suggestions }),
      signal: controller.signal,
    };
    // Outside the emit: the policy and its decide() never run inside the listener that reported the prompt.
    void Promise.resolve()
      .then(() => policy(prompt.toolName, prompt.input, context))
      .then(
        (result) => toDecision(result),
        (error: unknown) => ({ decision: 'deny' as const, options: { message: `canUseTool threw: ${errorMessage(error)}` } }),
      )
      .then(async ({ decision, options }) => {
        if (controller.signal.aborted) return; // answered elsewhere first
        try {
          await this.host.decide(prompt.requestId, decision, options);
        } catch (error) {
          // Another answer won the race, or the session ended: the ledger already says what happened.
          if (!isAseError(error)) process.emitWarning(`agent-session-engine: canUseTool's answer could not be given: ${errorMessage(error)}`);
        }
      })
      .finally(() => {
        if (this.#pending.get(prompt.requestId) === controller) this.#pending.delete(prompt.requestId);
      });
  }
}

/** A policy's result as a `decide()` call; anything but a well-formed allow is a deny. */
function toDecision(result: unknown): { decision: 'allow' | 'deny'; options: DecideOptions } {
  if (typeof result === 'object' && result !== null) {
    const r = result as { behavior?: unknown; updatedInput?: unknown; updatedPermissions?: unknown; message?: unknown };
    if (r.behavior === 'allow') {
      return {
        decision: 'allow',
        options: {
          ...(r.updatedInput !== undefined && { updatedInput: r.updatedInput }),
          ...(Array.isArray(r.updatedPermissions) && { updatedPermissions: r.updatedPermissions }),
        },
      };
    }
    if (r.behavior === 'deny') return { decision: 'deny', options: typeof r.message === 'string' ? { message: r.message } : {} };
  }
  return { decision: 'deny', options: { message: `canUseTool returned ${JSON.stringify(result) ?? String(result)}, not {behavior: 'allow' | 'deny'}` } };
}
