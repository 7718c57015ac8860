/**
 * A pure, stateful translator of one `codex exec --json` turn (one process) into AgentEvent
 * bodies. The stream has no deltas and no approvals (exec never asks: its approval policy is
 * applied by Codex itself), so a turn is: `thread.started` (the session id), items (commands, file
 * changes, MCP calls, messages, reasoning), then `turn.completed {usage}` or `turn.failed`.
 * Usage is the turn's own (one process = one turn). Never throws: malformed or unknown lines are
 * recorded in `skipped`.
 */
import type { AgentEventBody, ErrorKind, TurnUsage } from '../../../events/agent-event.js';
import type { TurnStreamTranslator } from '../../core/driven-engine.js';
import { noteSkipped, type SkippedInput } from '../../core/skipped-inputs.js';
import { ToolCallLedger } from '../tool-ledger.js';
import { displayToolName } from '../../core/host-tools.js';
import { turnUsageFromCodex } from '../usage.js';
import { usageCounts, usageSince, type UsageCounts } from './thread-usage.js';
import { CommandExecutionSchema, ExecEventSchema, FileChangeSchema, McpToolCallSchema, TextItemSchema, type ExecItem } from './messages.js';

/** exec's errors are text only: the status and wording Codex puts in them decide the kind. */
export function classifyExecError(message: string): { kind: ErrorKind; retryable: boolean } {
  if (/\b(401|403)\b|unauthori[sz]ed|invalid api key|not logged in/i.test(message)) return { kind: 'auth', retryable: false };
  if (/\b429\b|rate limit/i.test(message)) return { kind: 'rate_limited', retryable: true };
  if (/usage limit|quota|budget/i.test(message)) return { kind: 'budget_exceeded', retryable: false };
  if (/\b5\d\d\b|high demand|overloaded|stream disconnected|timed out|connection/i.test(message)) return { kind: 'transient', retryable: true };
  return { kind: 'fatal', retryable: false };
}

const resultStatus = (status: string): 'completed' | 'failed' | 'denied' | 'cancelled' =>
  status === 'completed' ? 'completed' : status === 'declined' ? 'denied' : status === 'in_progress' ? 'cancelled' : 'failed';

export class CodexExecTranslator implements TurnStreamTranslator {
  readonly skipped: SkippedInput[] = [];
  sessionId: string | undefined;
  turnEnded = false;
  readonly #ledger = new ToolCallLedger();
  #errorReported = false;
  #thinking = false;

  /** The thread's token totals `turn.completed` reported (resume reports totals, not the turn's). */
  threadTotal: UsageCounts | undefined;

  /**
   * `item_<n>` restarts in every exec process: `prefix` (the turn) keeps call and message ids
   * unique in the session. `baseline`: the thread's totals before this turn (thread-usage.ts).
   */
  constructor(
    private readonly prefix: string,
    private readonly baseline?: UsageCounts,
    /** The session's host tools: their calls are named after the tool, not `mcp__host__<tool>`. */
    private readonly hostTools?: { has(name: string): boolean },
  ) {}

  translate(value: unknown): AgentEventBody[] {
    try {
      const parsed = ExecEventSchema.safeParse(value);
      if (!parsed.success) return this.#skip(`unknown or malformed exec event: ${parsed.error.issues[0]?.message}`, value);
      const event = parsed.data;
      switch (event.type) {
        case 'thread.started':
          this.sessionId = event.thread_id;
          return [{ type: 'session_identified', resumeToken: event.thread_id }];
        case 'turn.started':
        case 'item.updated':
          return [];
        case 'item.started':
          return this.#started(event.item);
        case 'item.completed':
          return this.#completed(event.item);
        case 'error':
          return [this.#error(event.message)];
        case 'turn.completed': {
          if (!event.usage) return this.#finish('completed', 'completed');
          this.threadTotal = usageCounts(event.usage);
          return this.#finish('completed', 'completed', turnUsageFromCodex(usageSince(this.threadTotal, this.baseline)));
        }
        case 'turn.failed': {
          const out = this.#errorReported ? [] : [this.#error(event.error?.message ?? 'codex exec: the turn failed')];
          return [...out, ...this.#finish('failed', 'failed')];
        }
      }
    } catch (error) {
      return this.#skip(`translation failed: ${String(error)}`, value);
    }
  }

  endWithoutResult(status: 'failed' | 'cancelled', reason: string): AgentEventBody[] {
    if (this.turnEnded) return [];
    const out: AgentEventBody[] = status === 'failed' && !this.#errorReported ? [{ type: 'error', kind: 'fatal', message: reason, retryable: false }] : [];
    return [...out, ...this.#finish(status, status === 'cancelled' ? 'interrupted' : 'exited')];
  }

  #id(item: ExecItem): string {
    return `${this.prefix}-${item.id}`;
  }

  #started(item: ExecItem): AgentEventBody[] {
    const callId = this.#id(item);
    switch (item.type) {
      case 'reasoning':
        return this.#think(true);
      case 'command_execution': {
        const c = CommandExecutionSchema.safeParse(item);
        if (!c.success) return this.#skip('malformed command_execution', item);
        return this.#ledger.call({ callId, toolName: 'shell', input: { command: c.data.command }, title: c.data.command });
      }
      case 'file_change': {
        const f = FileChangeSchema.safeParse(item);
        if (!f.success) return this.#skip('malformed file_change', item);
        return this.#ledger.call({ callId, toolName: 'apply_patch', input: { changes: f.data.changes } });
      }
      case 'mcp_tool_call': {
        const m = McpToolCallSchema.safeParse(item);
        if (!m.success) return this.#skip('malformed mcp_tool_call', item);
        return this.#ledger.call({ callId, toolName: displayToolName(`mcp__${m.data.server}__${m.data.tool}`, this.hostTools), input: m.data.arguments ?? {} });
      }
      case 'web_search':
      case 'collab_tool_call':
        return this.#ledger.call({ callId, toolName: item.type, input: item });
      default:
        return [];
    }
  }

  #completed(item: ExecItem): AgentEventBody[] {
    const callId = this.#id(item);
    switch (item.type) {
      case 'agent_message': {
        const t = TextItemSchema.safeParse(item);
        if (!t.success) return this.#skip('malformed agent_message', item);
        return [...this.#think(false), { type: 'message', role: 'assistant', id: callId, blocks: [{ type: 'text', text: t.data.text }] }];
      }
      case 'reasoning': {
        const t = TextItemSchema.safeParse(item);
        const off = this.#think(false);
        return t.success && t.data.text !== '' ? [...off, { type: 'message', role: 'assistant', id: callId, blocks: [{ type: 'thinking', text: t.data.text }] }] : off;
      }
      case 'command_execution': {
        const c = CommandExecutionSchema.safeParse(item);
        if (!c.success) return this.#skip('malformed command_execution', item);
        const status = resultStatus(c.data.status);
        const output = { output: c.data.aggregated_output ?? '', exitCode: c.data.exit_code ?? null };
        return this.#ledger.result({ callId, status, output, isError: status !== 'completed' }, { toolName: 'shell', input: { command: c.data.command }, title: c.data.command });
      }
      case 'file_change': {
        const f = FileChangeSchema.safeParse(item);
        if (!f.success) return this.#skip('malformed file_change', item);
        const status = resultStatus(f.data.status);
        return this.#ledger.result({ callId, status, output: { changes: f.data.changes }, isError: status !== 'completed' }, { toolName: 'apply_patch', input: { changes: f.data.changes } });
      }
      case 'mcp_tool_call': {
        const m = McpToolCallSchema.safeParse(item);
        if (!m.success) return this.#skip('malformed mcp_tool_call', item);
        const status = resultStatus(m.data.status);
        return this.#ledger.result(
          { callId, status, output: m.data.error ?? m.data.result, isError: status !== 'completed' },
          { toolName: displayToolName(`mcp__${m.data.server}__${m.data.tool}`, this.hostTools), input: m.data.arguments ?? {} },
        );
      }
      case 'web_search':
      case 'collab_tool_call': {
        const raw = (item as { status?: unknown }).status;
        const status = typeof raw === 'string' ? resultStatus(raw) : 'completed';
        return this.#ledger.result({ callId, status, output: item, isError: status !== 'completed' }, { toolName: item.type, input: item });
      }
      case 'error':
        // Codex reports warnings (e.g. unknown model metadata) as error items; the turn goes on.
        return this.#skip('agent warning (error item)', item);
      default:
        return [];
    }
  }

  #think(active: boolean): AgentEventBody[] {
    if (this.#thinking === active) return [];
    this.#thinking = active;
    return [{ type: 'thinking', active }];
  }

  #error(message: string): AgentEventBody {
    this.#errorReported = true;
    return { type: 'error', ...classifyExecError(message), message };
  }

  #finish(status: 'completed' | 'failed' | 'cancelled', stopReason: string, usage?: TurnUsage): AgentEventBody[] {
    if (this.turnEnded) return [];
    this.turnEnded = true;
    const zero = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    return [...this.#think(false), ...this.#ledger.closeTurn(), { type: 'turn_complete', status, stopReason, usage: usage ?? zero }];
  }

  #skip(reason: string, raw: unknown): AgentEventBody[] {
    noteSkipped(this.skipped, { reason, raw });
    return [];
  }
}
