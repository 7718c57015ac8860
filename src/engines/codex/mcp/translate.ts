/**
 * Translates the `msg` payloads of `codex mcp-server` `codex/event` notifications (one tool call =
 * one turn) into AgentEvent bodies.
 *
 * The stream reports every logical item several times (reference codex.md §4.5): the new
 * `item_started` / `item_completed` family (with ids), a legacy event (`user_message`,
 * `agent_message`, `agent_reasoning`, `exec_command_begin/end`, `patch_apply_begin/end`) and a
 * `raw_response_item`. Exactly ONE family is consumed so nothing is emitted twice:
 * - messages and reasoning: `item_completed` (UserMessage / AgentMessage / Reasoning) + deltas;
 * - tools: `exec_command_begin/end`, `patch_apply_begin/end` and the approval requests
 *   (`item_*` CommandExecution / FileChange are ignored), de-duplicated by call id;
 * - turn end: `task_complete` / `turn_aborted` (and the tool result for failures);
 * - usage: `token_count.info.last_token_usage`, summed over the turn.
 * Everything legacy or raw is dropped.
 */
import type { AgentEventBody, ContentBlock, TurnUsage } from '../../../events/agent-event.js';
import { ZERO_USAGE } from '../../../events/agent-event.js';
import { ThinkingIndicator } from '../../core/thinking-indicator.js';
import { classifyCodexError } from '../errors.js';
import { noteSkipped, type SkippedInput } from '../../core/skipped-inputs.js';
import { ToolCallLedger } from '../tool-ledger.js';
import { addTurnUsage } from '../../../events/add-turn-usage.js';
import { turnUsageFromCodex, UsageSnapshots } from '../usage.js';
import {
  AgentMessageItemSchema,
  DeltaSchema,
  ErrorMsgSchema,
  ExecApprovalRequestSchema,
  ExecCommandBeginSchema,
  ExecCommandEndSchema,
  ItemEventSchema,
  PatchApprovalRequestSchema,
  PatchBeginSchema,
  PatchEndSchema,
  ReasoningItemSchema,
  SessionConfiguredSchema,
  TaskStartedSchema,
  TokenCountSchema,
  TurnAbortedSchema,
  UserMessageItemSchema,
} from './messages.js';
import { shellJoin } from '../../transport/shell-quote.js';

export type { SkippedInput } from '../../core/skipped-inputs.js';

/** Event types we know and deliberately drop (the duplicate families, status noise). */
const IGNORED = new Set([
  'user_message',
  'agent_message',
  'agent_reasoning',
  'agent_reasoning_section_break',
  'agent_reasoning_raw_content',
  'raw_response_item',
  'raw_response_completed',
  'mcp_startup_update',
  'mcp_startup_complete',
  'turn_diff',
  'exec_command_output_delta',
  'terminal_interaction',
  'thread_settings_applied',
  'plan_update',
  'plan_delta',
  'deprecation_notice',
  'warning',
  'stream_error', // a retry in progress; the final failure comes as `error`
  'patch_apply_updated',
]);

const textBlocks = (content: readonly { type: string; text?: string | undefined }[]): ContentBlock[] =>
  content.flatMap((c) => (typeof c.text === 'string' && c.text !== '' ? [{ type: 'text' as const, text: c.text }] : []));

/** Codex tool status → tool_result status. */
function resultStatus(status: string | undefined, ok: boolean): 'completed' | 'failed' | 'denied' {
  if (status === 'declined') return 'denied';
  return ok ? 'completed' : 'failed';
}

export interface SessionInfo {
  threadId: string;
  transcriptPath?: string;
}

export class McpTranslator {
  readonly skipped: SkippedInput[] = [];
  readonly #ledger = new ToolCallLedger();
  #running = false;
  #usage: TurnUsage = ZERO_USAGE;
  readonly #snapshots = new UsageSnapshots();
  readonly #thinking = new ThinkingIndicator();
  #errorReported = false;
  #session: SessionInfo | undefined;
  /** Messages of this turn already reported: a late delta for one (see the engine's listener quirk) is dropped. */
  readonly #completedMessages = new Set<string>();

  /**
   * Whether `text_delta`s are reported. The engine turns this off while two server-side listeners
   * split the thread's events (after an abort): deltas can then be lost or reordered, while the
   * completed `message` is still exact.
   */
  streamDeltas = true;

  /** Thread id and rollout path from `session_configured` (new threads only). */
  get session(): SessionInfo | undefined {
    return this.#session;
  }

  get turnRunning(): boolean {
    return this.#running;
  }

  beginTurn(): void {
    this.#running = true;
    this.#usage = ZERO_USAGE;
    this.#errorReported = false;
    this.#completedMessages.clear();
  }

  /** An error was already reported for this turn (so the failed tool result adds none). */
  get errorReported(): boolean {
    return this.#errorReported;
  }

  callForApproval(callId: string, name: string, input: unknown): AgentEventBody[] {
    return this.#ledger.call({ callId, toolName: name, input });
  }

  noteDenied(callId: string): void {
    this.#ledger.noteDenied(callId);
  }

  /** A denied exec call: mcp-server sends no begin/end for it, so its result is reported here. */
  deniedResult(callId: string, message: string): AgentEventBody[] {
    return this.#ledger.result({ callId, status: 'denied', output: message, isError: true });
  }

  /** Ends the running turn (no-op when none is running). */
  endTurn(status: 'completed' | 'failed' | 'cancelled', stopReason: string, error?: { message: string; info?: unknown }): AgentEventBody[] {
    if (!this.#running) return [];
    const out: AgentEventBody[] = [];
    if (error && !this.#errorReported) out.push(this.#error(error.message, error.info));
    out.push(...this.#thinking.off(), ...this.#ledger.closeTurn());
    out.push({ type: 'turn_complete', status, stopReason, usage: this.#usage });
    this.#running = false;
    this.#usage = ZERO_USAGE;
    return out;
  }

  /** Translates one `msg`. Never throws. */
  translate(msg: { type: string }): AgentEventBody[] {
    try {
      return this.#translate(msg);
    } catch (error) {
      noteSkipped(this.skipped, { reason: `translation failed: ${error instanceof Error ? error.message : String(error)}`, raw: msg });
      return [];
    }
  }

  #skip(reason: string, raw: unknown): AgentEventBody[] {
    noteSkipped(this.skipped, { reason, raw });
    return [];
  }

  #translate(msg: { type: string }): AgentEventBody[] {
    switch (msg.type) {
      case 'session_configured': {
        const parsed = SessionConfiguredSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed session_configured', msg);
        const threadId = parsed.data.thread_id ?? parsed.data.session_id;
        this.#session = { threadId, ...(parsed.data.rollout_path && { transcriptPath: parsed.data.rollout_path }) };
        return [{ type: 'session_identified', resumeToken: threadId, ...(parsed.data.rollout_path && { transcriptPath: parsed.data.rollout_path }) }];
      }
      case 'task_started':
      case 'turn_started':
        return TaskStartedSchema.safeParse(msg).success ? [] : this.#skip('malformed task_started', msg);
      case 'item_started': {
        const parsed = ItemEventSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed item_started', msg);
        return parsed.data.item.type === 'Reasoning' ? this.#thinking.on() : [];
      }
      case 'item_completed':
        return this.#itemCompleted(msg);
      case 'agent_message_content_delta':
      case 'agent_message_delta': {
        const parsed = DeltaSchema.safeParse(msg);
        if (!parsed.success) return this.#skip(`malformed ${msg.type}`, msg);
        if (this.#completedMessages.has(parsed.data.item_id)) return this.#skip('delta after its message completed', msg);
        if (!this.streamDeltas) return this.#thinking.off();
        return [...this.#thinking.off(), { type: 'text_delta', messageId: parsed.data.item_id, text: parsed.data.delta }];
      }
      case 'reasoning_content_delta':
      case 'reasoning_raw_content_delta':
      case 'agent_reasoning_delta':
        return this.#thinking.on();
      case 'exec_approval_request': {
        const parsed = ExecApprovalRequestSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed exec_approval_request', msg);
        const { call_id, command, cwd } = parsed.data;
        return this.#ledger.call({ callId: call_id, toolName: 'shell', input: { command: shellJoin(command), cwd }, title: shellJoin(command) });
      }
      case 'exec_command_begin': {
        const parsed = ExecCommandBeginSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed exec_command_begin', msg);
        const { call_id, command, cwd } = parsed.data;
        return this.#ledger.call({ callId: call_id, toolName: 'shell', input: { command: shellJoin(command), cwd: cwdPath(cwd) }, title: shellJoin(command) });
      }
      case 'exec_command_end': {
        const parsed = ExecCommandEndSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed exec_command_end', msg);
        const { call_id, command, cwd, exit_code, aggregated_output, status, duration } = parsed.data;
        const mapped = resultStatus(status, exit_code === 0 && (status === undefined || status === 'completed'));
        const durationMs = duration ? Math.round(duration.secs * 1000 + duration.nanos / 1e6) : null;
        return this.#ledger.result(
          { callId: call_id, status: mapped, output: { output: aggregated_output ?? '', exitCode: exit_code, durationMs }, isError: mapped !== 'completed' },
          { toolName: 'shell', input: { command: shellJoin(command), cwd: cwdPath(cwd) }, title: shellJoin(command) },
        );
      }
      case 'patch_apply_begin':
      case 'apply_patch_approval_request': {
        const parsed = (msg.type === 'patch_apply_begin' ? PatchBeginSchema : PatchApprovalRequestSchema).safeParse(msg);
        if (!parsed.success) return this.#skip(`malformed ${msg.type}`, msg);
        return this.#ledger.call({ callId: parsed.data.call_id, toolName: 'apply_patch', input: { changes: parsed.data.changes } });
      }
      case 'patch_apply_end': {
        const parsed = PatchEndSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed patch_apply_end', msg);
        const { call_id, success, stdout, stderr, status, changes } = parsed.data;
        const mapped = resultStatus(status, success);
        return this.#ledger.result(
          { callId: call_id, status: mapped, output: { stdout: stdout ?? '', stderr: stderr ?? '' }, isError: mapped !== 'completed' },
          { toolName: 'apply_patch', input: { changes: changes ?? {} } },
        );
      }
      case 'token_count': {
        const parsed = TokenCountSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed token_count', msg);
        const last = parsed.data.info?.last_token_usage;
        // Every snapshot is checked, in a turn or not, so a repeat is recognised whenever it comes.
        if (last && this.#snapshots.isNew(parsed.data.info?.total_token_usage) && this.#running) {
          this.#usage = addTurnUsage(this.#usage, turnUsageFromCodex(last));
        }
        return [];
      }
      case 'task_complete':
      case 'turn_complete':
        return this.endTurn('completed', 'task_complete');
      case 'turn_aborted': {
        const parsed = TurnAbortedSchema.safeParse(msg);
        return this.endTurn('cancelled', parsed.success ? parsed.data.reason : 'aborted');
      }
      case 'error': {
        const parsed = ErrorMsgSchema.safeParse(msg);
        if (!parsed.success) return this.#skip('malformed error', msg);
        return [this.#error(parsed.data.message, parsed.data.codex_error_info)];
      }
      default:
        if (IGNORED.has(msg.type) || msg.type === 'item_updated') return [];
        return this.#skip('unknown codex/event msg type', msg);
    }
  }

  #itemCompleted(msg: { type: string }): AgentEventBody[] {
    const parsed = ItemEventSchema.safeParse(msg);
    if (!parsed.success) return this.#skip('malformed item_completed', msg);
    const item = parsed.data.item;
    switch (item.type) {
      case 'UserMessage': {
        const p = UserMessageItemSchema.safeParse(item);
        if (!p.success) return this.#skip('malformed UserMessage item', msg);
        return [{ type: 'message', role: 'user', id: p.data.id, blocks: textBlocks(p.data.content) }];
      }
      case 'AgentMessage': {
        const p = AgentMessageItemSchema.safeParse(item);
        if (!p.success) return this.#skip('malformed AgentMessage item', msg);
        this.#completedMessages.add(p.data.id);
        return [...this.#thinking.off(), { type: 'message', role: 'assistant', id: p.data.id, blocks: textBlocks(p.data.content) }];
      }
      case 'Reasoning': {
        const p = ReasoningItemSchema.safeParse(item);
        if (!p.success) return this.#skip('malformed Reasoning item', msg);
        const text = (p.data.summary_text.length > 0 ? p.data.summary_text : (p.data.raw_content ?? [])).join('\n\n');
        const off = this.#thinking.off();
        return text === '' ? off : [...off, { type: 'message', role: 'assistant', id: p.data.id, blocks: [{ type: 'thinking', text }] }];
      }
      default:
        // CommandExecution / FileChange: reported from the exec/patch family instead.
        return [];
    }
  }

  #error(message: string, info: unknown): AgentEventBody {
    this.#errorReported = true;
    const { kind, retryable } = classifyCodexError(info);
    return { type: 'error', kind, message, retryable };
  }
}

/** mcp-server reports exec cwds as `file:///…` URLs; approvals use plain paths. */
function cwdPath(cwd: string): string {
  if (!cwd.startsWith('file://')) return cwd;
  try {
    return decodeURIComponent(new URL(cwd).pathname);
  } catch {
    return cwd;
  }
}
