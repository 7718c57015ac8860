/**
 * A pure, stateful translator from Claude Code stream-json messages (CLI→host) to AgentEvent
 * bodies. One instance per CLI process: it keeps the per-process state the protocol needs
 * (first `system/init`, cumulative `total_cost_usd`, assistant messages being reassembled,
 * thinking blocks already reported). It never throws; unknown or malformed input is recorded in
 * `skipped` and produces no events.
 *
 * Control messages (`control_request`, `control_response`, `control_cancel_request`) are not
 * translated here: the engine routes them to the ControlClient.
 */
import { join } from 'node:path';
import type { AgentEventBody, ContentBlock, ErrorKind, TurnUsage } from '../../events/agent-event.js';
import { parseLine } from '../transport/ndjson.js';
import { classifyClaudeMessage, type AssistantMessage, type ClaudeUserMessage, type ResultMessage, type StreamEvent, type SystemInit } from './messages.js';
import { noteSkipped, type SkippedInput } from '../core/skipped-inputs.js';

export type { SkippedInput } from '../core/skipped-inputs.js';

export interface ClaudeTranslatorOptions {
  /** `$CLAUDE_CONFIG_DIR` (or `~/.claude`), for `session_identified.transcriptPath`. */
  configDir?: string;
  /** Fallback cwd when `system/init` carries none. */
  cwd?: string;
  /** The name a tool is reported under (host tools: `mcp__host__add` → `add`); default: as the CLI names it. */
  toolName?: (name: string) => string;
}


/** `<cwd>` with every non-[A-Za-z0-9] character replaced by '-' (the CLI's project dir name). */
export function projectSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

/** The CLI's transcript file, or undefined when the slug would be truncated+hashed (> 200 chars). */
export function transcriptPathFor(configDir: string, cwd: string, sessionId: string): string | undefined {
  const slug = projectSlug(cwd);
  if (slug.length > 200) return undefined;
  return join(configDir, 'projects', slug, `${sessionId}.jsonl`);
}

/**
 * Maps an error `result` to an AgentEvent error kind. `assistantError` is the `error` of the turn's
 * synthetic API-error assistant line: without credentials no request is made, so the result has no
 * status and only that line says `authentication_failed` (observed: "Not logged in").
 */
export function classifyResultError(result: ResultMessage, assistantError?: string): { kind: ErrorKind; retryable: boolean } {
  const status = result.api_error_status ?? undefined;
  if (status === 401 || status === 403) return { kind: 'auth', retryable: false };
  if (status === undefined && assistantError === 'authentication_failed') return { kind: 'auth', retryable: false };
  if (status === 429) return { kind: 'rate_limited', retryable: true };
  if (status !== undefined && (status === 529 || status >= 500)) return { kind: 'transient', retryable: true };
  const terminal = result.terminal_reason ?? '';
  const subtype = result.subtype ?? '';
  if (subtype === 'error_max_turns' || subtype === 'error_max_budget_usd' || terminal === 'max_turns' || terminal === 'budget_exhausted') {
    return { kind: 'budget_exceeded', retryable: false };
  }
  if (status === undefined && result.api_error === 'connection_failed') return { kind: 'transient', retryable: true };
  return { kind: 'fatal', retryable: false };
}

/**
 * This turn's cost from `model_usage_since_last_result` (per model, `costUSD`), or undefined when
 * the CLI did not send it. Preferred over the delta of `total_cost_usd`: a `--resume`d CLI restores
 * the session's cost total from its transcript, so its first `total_cost_usd` already contains the
 * earlier processes' turns (recorded in resume.jsonl) and a delta from 0 would bill them again.
 */
export function costSinceLastResult(result: ResultMessage): number | undefined {
  const since = (result as { model_usage_since_last_result?: unknown }).model_usage_since_last_result;
  if (typeof since !== 'object' || since === null || Array.isArray(since)) return undefined;
  let sum = 0;
  for (const perModel of Object.values(since)) {
    const cost = (perModel as { costUSD?: unknown } | null)?.costUSD;
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) return undefined;
    sum += cost;
  }
  return sum;
}

/** `{parentCallId}` for a sub-agent's line (`parent_tool_use_id` set), else nothing. */
function scopeOf(parentToolUseId: string | null | undefined): { parentCallId?: string } {
  return typeof parentToolUseId === 'string' && parentToolUseId !== '' ? { parentCallId: parentToolUseId } : {};
}

function resultMessageText(result: ResultMessage): string {
  if (typeof result.result === 'string' && result.result !== '') return result.result;
  const errors = (result.errors ?? []).map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  if (errors.length > 0) return errors.join('; ');
  return `Claude Code turn ended with ${result.subtype ?? 'an error'} (${result.terminal_reason ?? 'no terminal reason'})`;
}

/**
 * Bounds of the per-message state (issue 11: an agent repeating one message id must not make each
 * line cost more than the last). A message's blocks are reassembled from `message_start` on; past
 * MAX_ASSEMBLED_BLOCKS without one, reassembly starts over (no real message has that many blocks).
 * At most MAX_ASSEMBLED_MESSAGES messages are reassembled at once (the oldest is dropped).
 */
export const MAX_ASSEMBLED_BLOCKS = 64;
export const MAX_ASSEMBLED_MESSAGES = 32;
/** Thinking blocks remembered per turn (a `thinking` event per block, not per delta). */
const MAX_THINKING_BLOCKS = 256;

export class ClaudeTranslator {
  readonly skipped: SkippedInput[] = [];
  /** Session id of the last `system/init`. */
  sessionId: string | undefined;
  /** `total_cost_usd` of the last `result` in this process. */
  #lastTotalCost = 0;
  readonly #assembled = new Map<string, ContentBlock[]>();
  readonly #thinkingBlocks = new Set<string>();
  #thinkingActive = false;
  readonly #denied = new Set<string>();
  /** `error` of this turn's last synthetic API-error assistant line (e.g. `authentication_failed`). */
  #assistantError: string | undefined;
  /**
   * Sub-agent scope: each tool call a Task sub-agent made → the Task call that started it (from
   * the `parent_tool_use_id` of the assistant line), so its `can_use_tool`, which names only the
   * call, is scoped too. Cleared at each `result`.
   */
  readonly #scopeOfCall = new Map<string, string>();
  /** Tool calls reported (`tool_call`) whose `tool_result` has not arrived yet in this turn. */
  readonly #toolsRunning = new Set<string>();
  readonly #options: ClaudeTranslatorOptions;

  constructor(options: ClaudeTranslatorOptions = {}) {
    this.#options = options;
  }

  /** Cumulative cost reported by the last `result` (per process). */
  get totalCostUsd(): number {
    return this.#lastTotalCost;
  }

  /** Content blocks held for messages being reassembled (at most MAX_ASSEMBLED_BLOCKS × MAX_ASSEMBLED_MESSAGES). */
  get heldBlocks(): number {
    let held = 0;
    for (const blocks of this.#assembled.values()) held += blocks.length;
    return held;
  }

  /** Number of tool calls started and not finished in the current turn. */
  get toolsRunning(): number {
    return this.#toolsRunning.size;
  }

  /** The Task call whose sub-agent made tool call `callId`, if a sub-agent made it. */
  parentCallIdOf(callId: string): string | undefined {
    return this.#scopeOfCall.get(callId);
  }

  /** The engine denied this tool call (so an is_error tool_result for it is `denied`). */
  noteDenied(callId: string): void {
    this.#denied.add(callId);
  }

  /** Translates one raw stdout line. Blank lines → []; non-JSON lines are skipped (recorded). */
  translateLine(line: string): AgentEventBody[] {
    const parsed = parseLine(line);
    if (!parsed) return [];
    if (!parsed.ok) return this.skipLine(`not JSON: ${parsed.error.message}`, line);
    return this.translate(parsed.value);
  }

  /** A stdout line that is not a message (not JSON): kept for diagnostics, nothing to report. */
  skipLine(reason: string, line: string): AgentEventBody[] {
    noteSkipped(this.skipped, { reason, raw: line });
    return [];
  }

  /** Translates one decoded message. Never throws. */
  translate(value: unknown): AgentEventBody[] {
    try {
      const message = classifyClaudeMessage(value);
      switch (message.kind) {
        case 'system_init':
          return this.#init(message.msg);
        case 'stream_event':
          return this.#streamEvent(message.msg);
        case 'assistant':
          return this.#assistant(message.msg);
        case 'user':
          return this.#user(message.msg);
        case 'result':
          return this.#result(message.msg);
        case 'unknown':
          noteSkipped(this.skipped, { reason: message.reason, raw: message.raw });
          return [];
        default:
          // other system subtypes, keep_alive, control traffic: nothing to report here
          return [];
      }
    } catch (error) {
      noteSkipped(this.skipped, { reason: `translator failure: ${String(error)}`, raw: value });
      return [];
    }
  }

  #init(init: SystemInit): AgentEventBody[] {
    if (this.sessionId === init.session_id) return [];
    this.sessionId = init.session_id;
    const cwd = init.cwd ?? this.#options.cwd;
    const transcriptPath = this.#options.configDir && cwd ? transcriptPathFor(this.#options.configDir, cwd, init.session_id) : undefined;
    return [{ type: 'session_identified', resumeToken: init.session_id, ...(transcriptPath !== undefined && { transcriptPath }) }];
  }

  #streamEvent(msg: StreamEvent): AgentEventBody[] {
    const event = msg.event;
    const messageId = msg.api_message_id ?? event.message?.id ?? 'unknown';
    if (event.type === 'message_start') {
      // A new message: whatever was reassembled under this id before belongs to an earlier one.
      this.#assembled.delete(messageId);
      return [];
    }
    const scope = scopeOf(msg.parent_tool_use_id);
    if (event.type === 'content_block_delta') {
      const delta = event.delta;
      if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
        return [{ type: 'text_delta', messageId, text: delta.text, ...scope }];
      }
    }
    const blockKey = `${messageId}#${event.index ?? 0}`;
    if (event.type === 'content_block_delta') {
      const delta = event.delta;
      if (delta?.type === 'thinking_delta' && !this.#thinkingBlocks.has(blockKey)) {
        if (this.#thinkingBlocks.size >= MAX_THINKING_BLOCKS) this.#thinkingBlocks.clear();
        this.#thinkingBlocks.add(blockKey);
        this.#thinkingActive = true;
        return [{ type: 'thinking', active: true }];
      }
      return [];
    }
    if (event.type === 'content_block_stop' && this.#thinkingBlocks.has(blockKey) && this.#thinkingActive) {
      this.#thinkingActive = false;
      return [{ type: 'thinking', active: false }];
    }
    return [];
  }

  #assistant(msg: AssistantMessage): AgentEventBody[] {
    const id = msg.message.id;
    const scope = scopeOf(msg.parent_tool_use_id);
    if (typeof msg.error === 'string') this.#assistantError = msg.error;
    let blocks = this.#assembled.get(id);
    if (!blocks || blocks.length >= MAX_ASSEMBLED_BLOCKS) {
      blocks = [];
      this.#assembled.delete(id);
      if (this.#assembled.size >= MAX_ASSEMBLED_MESSAGES) this.#assembled.delete(this.#assembled.keys().next().value!);
      this.#assembled.set(id, blocks);
    }
    const calls: AgentEventBody[] = [];
    for (const block of msg.message.content) {
      if (block.type === 'text' && typeof block.text === 'string') blocks.push({ type: 'text', text: block.text });
      else if (block.type === 'thinking') blocks.push({ type: 'thinking', text: block.thinking ?? block.text ?? '' });
      else if (block.type === 'tool_use' && typeof block.id === 'string') {
        const name = this.#options.toolName?.(block.name ?? 'unknown') ?? block.name ?? 'unknown';
        const input = block.input ?? {};
        blocks.push({ type: 'tool_use', callId: block.id, name, input });
        calls.push({ type: 'tool_call', callId: block.id, toolName: name, input, ...scope });
        if (scope.parentCallId !== undefined) this.#scopeOfCall.set(block.id, scope.parentCallId);
        this.#toolsRunning.add(block.id);
      }
      // other block types (redacted_thinking, server tool blocks, …) are not part of our vocabulary
    }
    return [{ type: 'message', role: 'assistant', id, blocks: [...blocks], ...scope }, ...calls];
  }

  #user(msg: ClaudeUserMessage): AgentEventBody[] {
    const content = msg.message.content;
    if (typeof content === 'string') return [];
    const out: AgentEventBody[] = [];
    const scope = scopeOf(msg.parent_tool_use_id);
    for (const raw of content) {
      if (raw.type !== 'tool_result') continue;
      const block = raw as { tool_use_id?: unknown; content?: unknown; is_error?: unknown };
      if (typeof block.tool_use_id !== 'string') continue;
      const callId = block.tool_use_id;
      const isError = block.is_error === true;
      const meta = (msg.tool_result_meta ?? []).find((m) => m.id === callId);
      const status = meta?.non_execution_kind ? 'denied' : isError ? (this.#denied.has(callId) ? 'denied' : 'failed') : 'completed';
      out.push({ type: 'tool_result', callId, status, output: block.content, isError, ...scope });
      this.#toolsRunning.delete(callId);
    }
    return out;
  }

  #result(result: ResultMessage): AgentEventBody[] {
    const out: AgentEventBody[] = [];
    if (this.#thinkingActive) {
      this.#thinkingActive = false;
      out.push({ type: 'thinking', active: false });
    }
    const usage: TurnUsage = {
      inputTokens: result.usage?.input_tokens ?? 0,
      outputTokens: result.usage?.output_tokens ?? 0,
      cacheReadTokens: result.usage?.cache_read_input_tokens ?? 0,
      cacheWriteTokens: result.usage?.cache_creation_input_tokens ?? 0,
    };
    const total = result.total_cost_usd;
    const sinceLast = costSinceLastResult(result);
    if (sinceLast !== undefined) usage.costUsd = sinceLast;
    else if (typeof total === 'number' && Number.isFinite(total)) usage.costUsd = Math.max(0, total - this.#lastTotalCost);
    if (typeof total === 'number' && Number.isFinite(total)) this.#lastTotalCost = Math.max(this.#lastTotalCost, total);
    const terminal = result.terminal_reason ?? '';
    const status = result.is_error === false ? 'completed' : terminal.startsWith('aborted') ? 'cancelled' : 'failed';
    if (status === 'failed') {
      const { kind, retryable } = classifyResultError(result, this.#assistantError);
      out.push({ type: 'error', kind, message: resultMessageText(result), retryable });
    }
    out.push({ type: 'turn_complete', status, ...(result.stop_reason ? { stopReason: result.stop_reason } : {}), usage });
    this.#assembled.clear();
    this.#toolsRunning.clear();
    this.#scopeOfCall.clear();
    this.#assistantError = undefined;
    this.#thinkingBlocks.clear();
    return out;
  }
}
