/**
 * Tool calls of one turn, so each is reported exactly once as `tool_call` and once as
 * `tool_result` whatever the upstream stream does: Codex reports the same call several times
 * (MCP: approval request, legacy begin/end and item_started/completed; app-server: item/started
 * and item/completed), sometimes a result without a start (a declined call) and sometimes a start
 * without a result (an interrupted turn). Calls still open when the turn ends are closed as
 * `cancelled`.
 */
import type { AgentEventBody } from '../../events/agent-event.js';

type ToolCallBody = Extract<AgentEventBody, { type: 'tool_call' }>;
type ToolResultBody = Extract<AgentEventBody, { type: 'tool_result' }>;

/** A result carries the sub-agent scope of its call (a sub-agent's call is closed in its scope). */
function scopeOf(call: ToolCallBody | undefined): { parentCallId?: string } {
  return call?.parentCallId !== undefined ? { parentCallId: call.parentCallId } : {};
}

export class ToolCallLedger {
  readonly #called = new Map<string, ToolCallBody>();
  readonly #finished = new Set<string>();
  readonly #denied = new Set<string>();

  /** `tool_call` for this call unless it was already reported. */
  call(body: Omit<ToolCallBody, 'type'>): AgentEventBody[] {
    if (this.#called.has(body.callId)) return [];
    const event: ToolCallBody = { type: 'tool_call', ...body };
    this.#called.set(body.callId, event);
    return [event];
  }

  hasCall(callId: string): boolean {
    return this.#called.has(callId);
  }

  /** The host denied this call: its failure is reported as `denied`. */
  noteDenied(callId: string): void {
    this.#denied.add(callId);
  }

  /**
   * `tool_result` (preceded by `tool_call` from `fallbackCall` if none was reported) unless a
   * result was already reported. A failure of a denied call becomes `denied`.
   */
  result(body: Omit<ToolResultBody, 'type'>, fallbackCall?: Omit<ToolCallBody, 'type' | 'callId'>): AgentEventBody[] {
    if (this.#finished.has(body.callId)) return [];
    this.#finished.add(body.callId);
    const out: AgentEventBody[] = [];
    if (!this.#called.has(body.callId)) out.push(...this.call({ toolName: 'unknown', input: {}, ...fallbackCall, callId: body.callId }));
    const status = body.status === 'failed' && this.#denied.has(body.callId) ? 'denied' : body.status;
    out.push({ type: 'tool_result', ...scopeOf(this.#called.get(body.callId)), ...body, status });
    return out;
  }

  /** Closes every call without a result as `cancelled` (the turn ended) and forgets the turn. */
  closeTurn(): AgentEventBody[] {
    const out: AgentEventBody[] = [];
    for (const [callId, call] of this.#called) {
      if (!this.#finished.has(callId)) out.push({ type: 'tool_result', callId, status: 'cancelled', isError: true, ...scopeOf(call) });
    }
    this.#called.clear();
    this.#finished.clear();
    this.#denied.clear();
    return out;
  }
}
