/**
 * Translates `codex app-server` notifications (one thread) into AgentEvent bodies, and keeps the
 * per-turn state the translation needs: the running turn and its id, the usage summed over the
 * turn's model requests, the tool-call ledger, the thinking indicator, and whether the turn's
 * error was already reported. It never throws; unknown or malformed input lands in `skipped`.
 *
 * Mapping (docs/engines/codex.md has the table):
 * - item/started: commandExecution / fileChange / mcpToolCall / dynamicToolCall → tool_call;
 *   reasoning → thinking on (a host tool's call, dynamic or through the loopback MCP server, is
 *   named after the tool itself, not `mcp__host__<tool>`)
 * - item/agentMessage/delta → text_delta; reasoning deltas → thinking on
 * - item/completed: userMessage / agentMessage → message; reasoning → message with a thinking
 *   block; tool items → tool_result (declined → denied)
 * - thread/tokenUsage/updated → `last` added to the turn's usage (never `total`)
 * - error (willRetry false) → error; turn/completed → turn_complete (interrupted → cancelled)
 */
import type { AgentEventBody, ContentBlock, TurnUsage } from '../../../events/agent-event.js';
import { ZERO_USAGE } from '../../../events/agent-event.js';
import { ThinkingIndicator } from '../../core/thinking-indicator.js';
import { classifyCodexError } from '../errors.js';
import { noteSkipped, type SkippedInput } from '../../core/skipped-inputs.js';
import { ToolCallLedger } from '../tool-ledger.js';
import { displayToolName } from '../../core/host-tools.js';
import { addTurnUsage } from '../../../events/add-turn-usage.js';
import { turnUsageOf, UsageSnapshots } from '../usage.js';
import {
  AgentMessageItemSchema,
  CommandExecutionItemSchema,
  DynamicToolCallItemSchema,
  ErrorNotificationSchema,
  FileChangeItemSchema,
  McpToolCallItemSchema,
  ReasoningItemSchema,
  SubAgentActivityItemSchema,
  TokenUsageUpdatedSchema,
  TurnPlanUpdatedSchema,
  TurnNotificationSchema,
  UserMessageItemSchema,
  readDelta,
  readItemNotification,
} from './messages.js';

export type { SkippedInput } from '../../core/skipped-inputs.js';

/** Notifications we know and deliberately do not translate. */
const IGNORED = new Set([
  'thread/started',
  'thread/status/changed',
  'thread/goal/cleared',
  'turn/diff/updated',
  'item/reasoning/summaryPartAdded',
  'account/rateLimits/updated',
  'configWarning',
  'deprecationNotice',
  'remoteControl/status/changed',
  'mcpServer/startupStatus/updated',
  'serverRequest/resolved', // handled by the engine (permission bookkeeping)
  'thread/name/updated',
  'thread/goal/updated',
  'skills/changed',
  'model/rerouted',
  // Streamed output of a running command / patch: the item/completed result carries all of it.
  'item/commandExecution/outputDelta',
  'item/fileChange/outputDelta',
]);

/** The tool name we report for each Codex tool item. */
export function toolNameOf(item: { type: string; server?: string; tool?: string }): string {
  switch (item.type) {
    case 'commandExecution':
      return 'shell';
    case 'fileChange':
      return 'apply_patch';
    case 'mcpToolCall':
      return `mcp__${item.server ?? 'unknown'}__${item.tool ?? 'unknown'}`;
    default:
      return item.type;
  }
}

/** A dynamic tool's name: the tool's own, under its namespace when it has one (`ns/tool`). */
function dynamicToolName(item: { tool: string; namespace?: string | null }): string {
  return item.namespace ? `${item.namespace}/${item.tool}` : item.tool;
}

const TOOL_ITEMS = new Set(['commandExecution', 'fileChange', 'mcpToolCall', 'dynamicToolCall', 'webSearch', 'imageView', 'imageGeneration', 'collabAgentToolCall']);

/** Codex item status → tool_result status. */
function resultStatus(status: string): 'completed' | 'failed' | 'denied' | 'cancelled' {
  if (status === 'completed') return 'completed';
  if (status === 'declined') return 'denied';
  if (status === 'inProgress') return 'cancelled';
  return 'failed';
}

export class AppServerTranslator {
  readonly skipped: SkippedInput[] = [];
  readonly #ledger = new ToolCallLedger();
  #threadId: string | undefined;
  #running = false;
  #turnId: string | undefined;
  #usage: TurnUsage = ZERO_USAGE;
  readonly #snapshots = new UsageSnapshots();
  readonly #thinking = new ThinkingIndicator();
  #errorReported = false;
  /** `turn/started` arrived for the running turn: only from then on can it be interrupted. */
  #started = false;
  /** Usage reported before our turn id was known, by turn id (a resumed thread replays the last turn's). */
  #earlyUsage: { turnId: string; usage: TurnUsage }[] = [];
  /** fileChange items by id: the approval request carries only the item id. */
  readonly #changes = new Map<string, unknown>();
  /**
   * Sub-agent threads (`multi_agent_v2`) → the `spawn_agent` call that started each (the id of its
   * `subAgentActivity` item). Their items are translated in that scope (`parentCallId`); their own
   * turns never end ours. Kept for the engine's life: a sub-agent can be sent follow-ups later.
   */
  readonly #subAgents = new Map<string, string>();
  /** The scope of the notification being translated: `{}` for our own thread. */
  #scope: { parentCallId?: string } = {};
  /** The session's host tools: their calls are named after the tool. */
  #hostTools: { has(name: string): boolean } | undefined;

  setHostTools(toolbox: { has(name: string): boolean }): void {
    this.#hostTools = toolbox;
  }

  /** The reported name of an `mcpToolCall`: a host tool's own name, else `mcp__<server>__<tool>`. */
  #mcpToolName(item: { type: string; server?: string; tool?: string }): string {
    return displayToolName(toolNameOf(item), this.#hostTools);
  }

  get threadId(): string | undefined {
    return this.#threadId;
  }

  setThread(threadId: string): void {
    this.#threadId = threadId;
  }

  /** True between {@link beginTurn} and the turn's end. */
  get turnRunning(): boolean {
    return this.#running;
  }

  get turnId(): string | undefined {
    return this.#turnId;
  }

  /**
   * The running turn is active on the server (`turn/started` seen). app-server answers
   * `turn/start` before that, and a `turn/interrupt` in between fails with "no active turn".
   */
  get turnStarted(): boolean {
    return this.#running && this.#started;
  }

  /** A `turn/start` is being sent. */
  beginTurn(): void {
    this.#running = true;
    this.#turnId = undefined;
    this.#started = false;
    this.#usage = ZERO_USAGE;
    this.#errorReported = false;
    this.#changes.clear();
    this.#earlyUsage = [];
  }

  /**
   * The running turn's id, from the `turn/start` response or `turn/started` (whichever comes
   * first). Only these two name our turn: other notifications may carry another turn's id (after
   * `thread/resume` the server re-reports the previous turn's token usage).
   */
  adoptTurnId(turnId: string): void {
    if (!this.#running || this.#turnId !== undefined) return;
    this.#turnId = turnId;
    for (const early of this.#earlyUsage) if (early.turnId === turnId) this.#usage = addTurnUsage(this.#usage, early.usage);
    this.#earlyUsage = [];
  }

  /** The file changes of a fileChange item seen in this turn. */
  changesOf(itemId: string): unknown {
    return this.#changes.get(itemId);
  }

  /** Ensures a tool_call for an item that is being approved (its item/started normally came first). */
  callForApproval(callId: string, name: string, input: unknown, threadId?: string): AgentEventBody[] {
    return this.#ledger.call({ callId, toolName: name, input, ...(threadId !== undefined && this.scopeOfThread(threadId)) });
  }

  /** `{parentCallId}` when `threadId` is a sub-agent's thread (its approvals are scoped too), else `{}`. */
  scopeOfThread(threadId: string): { parentCallId?: string } {
    const parentCallId = this.#subAgents.get(threadId);
    return parentCallId !== undefined ? { parentCallId } : {};
  }

  noteDenied(callId: string): void {
    this.#ledger.noteDenied(callId);
  }

  /** The turn could not start or was given up: closes it as `status`. */
  endTurn(status: 'failed' | 'cancelled', error?: { message: string; info?: unknown }): AgentEventBody[] {
    if (!this.#running) return [];
    const out: AgentEventBody[] = [];
    if (error && !this.#errorReported) out.push(this.#error(error.message, error.info));
    return [...out, ...this.#finish(status, status === 'failed' ? 'failed' : 'interrupted')];
  }

  translate(method: string, params: unknown): AgentEventBody[] {
    try {
      return this.#translate(method, params);
    } catch (error) {
      noteSkipped(this.skipped, { reason: `translation failed: ${error instanceof Error ? error.message : String(error)}`, raw: { method, params } });
      return [];
    }
  }

  #skip(reason: string, method: string, params: unknown): AgentEventBody[] {
    noteSkipped(this.skipped, { reason, raw: { method, params } });
    return [];
  }

  /**
   * Notifications for another thread (sub-agents) or another turn are not ours. Before our turn id
   * is known, item notifications are taken as ours (only one turn runs at a time).
   */
  #mine(threadId: string, turnId?: string): boolean {
    if (this.#threadId !== undefined && threadId !== this.#threadId) return false;
    if (!this.#running || turnId === undefined || this.#turnId === undefined) return true;
    return turnId === this.#turnId;
  }

  #translate(method: string, params: unknown): AgentEventBody[] {
    switch (method) {
      case 'item/started':
      case 'item/completed': {
        const parsed = readItemNotification(params);
        if (!parsed) return this.#skip(`malformed ${method}: no threadId, turnId or item with a type and an id`, method, params);
        const translateItem = () => (method === 'item/started' ? this.#itemStarted(parsed.item) : this.#itemCompleted(parsed.item));
        if (this.#subAgents.has(parsed.threadId)) return this.#inScope(parsed.threadId, translateItem);
        if (!this.#mine(parsed.threadId, parsed.turnId)) return this.#skip('other thread or turn', method, params);
        return translateItem();
      }
      case 'item/agentMessage/delta': {
        const delta = readDelta(params);
        if (!delta) return this.#skip(`malformed ${method}`, method, params);
        if (this.#subAgents.has(delta.threadId)) return [{ type: 'text_delta', messageId: delta.itemId, text: delta.delta, ...this.scopeOfThread(delta.threadId) }];
        if (!this.#mine(delta.threadId, delta.turnId)) return this.#skip('other thread or turn', method, params);
        const thinkingOff = this.#thinking.off();
        const text: AgentEventBody = { type: 'text_delta', messageId: delta.itemId, text: delta.delta };
        return thinkingOff.length === 0 ? [text] : [...thinkingOff, text];
      }
      case 'item/reasoning/summaryTextDelta':
      case 'item/reasoning/textDelta': {
        const delta = readDelta(params);
        if (!delta) return this.#skip(`malformed ${method}`, method, params);
        if (!this.#mine(delta.threadId, delta.turnId)) return this.#skip('other thread or turn', method, params);
        return this.#thinking.on();
      }
      case 'thread/tokenUsage/updated': {
        const parsed = TokenUsageUpdatedSchema.safeParse(params);
        if (!parsed.success) return this.#skip(`malformed ${method}`, method, params);
        // A repeat of the previous snapshot (sent when a turn fails) is no new request.
        if (!this.#snapshots.isNew(parsed.data.tokenUsage.total)) return this.#skip('repeated usage snapshot', method, params);
        if (!this.#running || !this.#mine(parsed.data.threadId, parsed.data.turnId)) return this.#skip('usage outside our turn', method, params);
        const usage = turnUsageOf(parsed.data.tokenUsage.last);
        if (this.#turnId === undefined) this.#earlyUsage.push({ turnId: parsed.data.turnId, usage });
        else this.#usage = addTurnUsage(this.#usage, usage);
        return [];
      }
      case 'turn/plan/updated': {
        const parsed = TurnPlanUpdatedSchema.safeParse(params);
        if (!parsed.success) return this.#skip(`malformed ${method}`, method, params);
        if (!this.#mine(parsed.data.threadId, parsed.data.turnId)) return this.#skip('other thread or turn', method, params);
        const { plan, explanation } = parsed.data;
        const entries = plan.map((p) => ({ content: p.step, status: p.status === 'inProgress' ? ('in_progress' as const) : p.status }));
        return [{ type: 'plan', entries, ...(explanation ? { explanation } : {}) }];
      }
      case 'turn/started': {
        const parsed = TurnNotificationSchema.safeParse(params);
        if (!parsed.success) return this.#skip(`malformed ${method}`, method, params);
        if (this.#running && this.#mine(parsed.data.threadId)) {
          this.adoptTurnId(parsed.data.turn.id);
          if (parsed.data.turn.id === this.#turnId) this.#started = true;
        }
        return [];
      }
      case 'error': {
        const parsed = ErrorNotificationSchema.safeParse(params);
        if (!parsed.success) return this.#skip(`malformed ${method}`, method, params);
        if (!this.#mine(parsed.data.threadId, parsed.data.turnId)) return this.#skip('other thread or turn', method, params);
        // A retried request is not a failure yet; the final attempt reports again with willRetry false.
        if (parsed.data.willRetry) return this.#skip('retrying', method, params);
        return [this.#error(parsed.data.error.message, parsed.data.error.codexErrorInfo)];
      }
      case 'turn/completed': {
        const parsed = TurnNotificationSchema.safeParse(params);
        if (!parsed.success) return this.#skip(`malformed ${method}`, method, params);
        if (!this.#running || !this.#mine(parsed.data.threadId, parsed.data.turn.id)) return this.#skip('completion of a turn that is not running', method, params);
        const { status, error } = parsed.data.turn;
        const out: AgentEventBody[] = [];
        if (status === 'failed' && !this.#errorReported) out.push(this.#error(error?.message ?? 'codex turn failed', error?.codexErrorInfo));
        const mapped = status === 'completed' ? 'completed' : status === 'interrupted' ? 'cancelled' : 'failed';
        return [...out, ...this.#finish(mapped, status)];
      }
      default:
        if (IGNORED.has(method)) return [];
        return this.#skip('unknown notification', method, params);
    }
  }

  /** Translates a sub-agent thread's item in that sub-agent's scope. */
  #inScope(threadId: string, translate: () => AgentEventBody[]): AgentEventBody[] {
    const outer = this.#scope;
    this.#scope = this.scopeOfThread(threadId);
    try {
      return translate();
    } finally {
      this.#scope = outer;
    }
  }

  /**
   * `subAgentActivity` of kind `started` is the `spawn_agent` call (its id is the call id): it
   * names the new thread, whose items are then this call's scope. Other kinds (the sub-agent
   * completed, …) are reported by the thread's own items and the `wait_agent` call.
   */
  #subAgentActivity(item: { type: string; id: string }, completed: boolean): AgentEventBody[] {
    const parsed = SubAgentActivityItemSchema.safeParse(item);
    if (!parsed.success) return this.#skip('malformed subAgentActivity', completed ? 'item/completed' : 'item/started', item);
    const { id, kind, agentThreadId, agentPath, model } = parsed.data;
    if (kind !== 'started') return [];
    this.#subAgents.set(agentThreadId, id);
    const input = { agentThreadId, ...(agentPath && { agentPath }), ...(model && { model }) };
    if (!completed) return this.#ledger.call({ callId: id, toolName: 'spawn_agent', input, ...this.#scope });
    return this.#ledger.result({ callId: id, status: 'completed', output: { agentThreadId }, isError: false }, { toolName: 'spawn_agent', input, ...this.#scope });
  }

  #itemStarted(item: { type: string; id: string }): AgentEventBody[] {
    switch (item.type) {
      case 'subAgentActivity':
        return this.#subAgentActivity(item, false);
      case 'reasoning':
        // The indicator is the main agent's: a sub-agent's reasoning shows as its own message.
        return this.#scope.parentCallId !== undefined ? [] : this.#thinking.on();
      case 'commandExecution': {
        const parsed = CommandExecutionItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed commandExecution', 'item/started', item);
        const { id, command, cwd, commandActions } = parsed.data;
        return this.#ledger.call({ callId: id, toolName: 'shell', input: { command, cwd, commandActions }, title: command, ...this.#scope });
      }
      case 'fileChange': {
        const parsed = FileChangeItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed fileChange', 'item/started', item);
        this.#changes.set(parsed.data.id, parsed.data.changes);
        return this.#ledger.call({ callId: parsed.data.id, toolName: 'apply_patch', input: { changes: parsed.data.changes }, ...this.#scope });
      }
      case 'mcpToolCall': {
        const parsed = McpToolCallItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed mcpToolCall', 'item/started', item);
        return this.#ledger.call({ callId: parsed.data.id, toolName: this.#mcpToolName(parsed.data), input: parsed.data.arguments, ...this.#scope });
      }
      case 'dynamicToolCall': {
        const parsed = DynamicToolCallItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed dynamicToolCall', 'item/started', item);
        return this.#ledger.call({ callId: parsed.data.id, toolName: dynamicToolName(parsed.data), input: parsed.data.arguments ?? {}, ...this.#scope });
      }
      default:
        if (TOOL_ITEMS.has(item.type)) return this.#ledger.call({ callId: item.id, toolName: toolNameOf(item), input: item, ...this.#scope });
        return [];
    }
  }

  #itemCompleted(item: { type: string; id: string }): AgentEventBody[] {
    switch (item.type) {
      case 'subAgentActivity':
        return this.#subAgentActivity(item, true);
      case 'userMessage': {
        const parsed = UserMessageItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed userMessage', 'item/completed', item);
        const blocks: ContentBlock[] = parsed.data.content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [{ type: 'text' as const, text: c.text }] : []));
        return [{ type: 'message', role: 'user', id: parsed.data.id, blocks, ...this.#scope }];
      }
      case 'agentMessage': {
        const parsed = AgentMessageItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed agentMessage', 'item/completed', item);
        const message: AgentEventBody = { type: 'message', role: 'assistant', id: parsed.data.id, blocks: [{ type: 'text', text: parsed.data.text }], ...this.#scope };
        return this.#scope.parentCallId !== undefined ? [message] : [...this.#thinking.off(), message];
      }
      case 'reasoning': {
        const parsed = ReasoningItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed reasoning', 'item/completed', item);
        const text = (parsed.data.summary.length > 0 ? parsed.data.summary : parsed.data.content).join('\n\n');
        const off = this.#scope.parentCallId !== undefined ? [] : this.#thinking.off();
        return text === '' ? off : [...off, { type: 'message', role: 'assistant', id: parsed.data.id, blocks: [{ type: 'thinking', text }], ...this.#scope }];
      }
      case 'commandExecution': {
        const parsed = CommandExecutionItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed commandExecution', 'item/completed', item);
        const { id, command, cwd, commandActions, status, aggregatedOutput, exitCode, durationMs } = parsed.data;
        const mapped = resultStatus(status);
        return this.#ledger.result(
          { callId: id, status: mapped, output: { output: aggregatedOutput ?? '', exitCode, durationMs }, isError: mapped !== 'completed' },
          { toolName: 'shell', input: { command, cwd, commandActions }, title: command, ...this.#scope },
        );
      }
      case 'fileChange': {
        const parsed = FileChangeItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed fileChange', 'item/completed', item);
        const mapped = resultStatus(parsed.data.status);
        return this.#ledger.result(
          { callId: parsed.data.id, status: mapped, output: { changes: parsed.data.changes }, isError: mapped !== 'completed' },
          { toolName: 'apply_patch', input: { changes: parsed.data.changes }, ...this.#scope },
        );
      }
      case 'mcpToolCall': {
        const parsed = McpToolCallItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed mcpToolCall', 'item/completed', item);
        const mapped = resultStatus(parsed.data.status);
        return this.#ledger.result(
          { callId: parsed.data.id, status: mapped, output: parsed.data.error ?? parsed.data.result, isError: mapped !== 'completed' },
          { toolName: this.#mcpToolName(parsed.data), input: parsed.data.arguments, ...this.#scope },
        );
      }
      case 'dynamicToolCall': {
        const parsed = DynamicToolCallItemSchema.safeParse(item);
        if (!parsed.success) return this.#skip('malformed dynamicToolCall', 'item/completed', item);
        const mapped = resultStatus(parsed.data.status);
        return this.#ledger.result(
          { callId: parsed.data.id, status: mapped, output: { content: parsed.data.contentItems ?? [], success: parsed.data.success ?? null }, isError: mapped !== 'completed' },
          { toolName: dynamicToolName(parsed.data), input: parsed.data.arguments ?? {}, ...this.#scope },
        );
      }
      default: {
        if (!TOOL_ITEMS.has(item.type)) return [];
        const rawStatus: unknown = (item as { status?: unknown }).status;
        const status = typeof rawStatus === 'string' ? resultStatus(rawStatus) : 'completed';
        return this.#ledger.result({ callId: item.id, status, output: item, isError: status !== 'completed' }, { toolName: toolNameOf(item), input: item, ...this.#scope });
      }
    }
  }

  #error(message: string, info: unknown): AgentEventBody {
    this.#errorReported = true;
    const { kind, retryable } = classifyCodexError(info);
    return { type: 'error', kind, message, retryable };
  }

  #finish(status: 'completed' | 'failed' | 'cancelled', stopReason: string): AgentEventBody[] {
    const out: AgentEventBody[] = [...this.#thinking.off(), ...this.#ledger.closeTurn()];
    out.push({ type: 'turn_complete', status, stopReason, usage: this.#usage });
    this.#running = false;
    this.#turnId = undefined;
    this.#started = false;
    this.#usage = ZERO_USAGE;
    this.#changes.clear();
    return out;
  }
}
