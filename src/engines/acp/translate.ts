/**
 * A pure, stateful translator from ACP `session/update`s (and a permission request's `toolCall`)
 * to AgentEvent bodies, tolerant of every ordering seen in the wild (reference "acp.md" §5):
 *
 * - Tool calls are upserted by `toolCallId` and created on first sight from ANY source
 *   (`tool_call`, `tool_call_update`, or a permission request): codex asks before its `tool_call`,
 *   gemini never sends one, claude-code-acp sends `tool_call` twice. A later update that changes
 *   a call's name, title or input re-emits `tool_call` with the same `callId` (an upsert for
 *   consumers); `tool_result` is emitted exactly once per id.
 * - Empty text chunks are skipped (Claude starts every message with `""`).
 * - Streamed text is also assembled into `message` events (one per text run between tool calls),
 *   because text deltas are ephemeral and the transcript keeps only messages.
 * - Token usage an agent puts in a chunk's `_meta.usage` (Qwen Code: one per model request) is
 *   summed per turn for the turn's end to take once (usage.ts says which source wins).
 *
 * - A call of the session's host tools is named after the tool (`add`), not as the agent names it
 *   (`mcp__host__add`, `add (host MCP Server)`, `Tool: host/add`): host-tool-names.ts.
 *
 * Never throws; input it cannot use is recorded in `skipped`.
 */
import type { AgentCommand, AgentEventBody, ContentBlock, PlanEntry, TurnUsage } from '../../events/agent-event.js';
import { TextAccumulator } from '../core/text-accumulator.js';
import { ThinkingIndicator } from '../core/thinking-indicator.js';
import { contentText, isRecord, readToolCallFields, type AcpSessionUpdate, type AcpToolCallFields } from './messages.js';
import { noteSkipped, type SkippedInput } from '../core/skipped-inputs.js';
import { acpHostToolName } from './host-tool-names.js';
import { addTurnUsage } from '../../events/add-turn-usage.js';
import { chunkUsage } from './usage.js';

export type { SkippedInput } from '../core/skipped-inputs.js';


/** Session state the agent reports that has no AgentEvent (kept for callers and diagnostics). */
export interface AcpSessionInfo {
  plan?: unknown[];
  availableCommands?: unknown[];
  currentModeId?: string;
  configOptions?: unknown[];
  title?: string;
  /** Tokens in context and the window size, from `usage_update`. */
  context?: { used: number; size: number };
  /** Cumulative session cost from `usage_update` (any currency). */
  cost?: { amount: number; currency: string };
}

export interface AcpTranslatorOptions {
  /** Prefix of synthetic message ids (agents rarely send `messageId`), e.g. `acp-3`. */
  idPrefix: string;
  /**
   * Report `user_message_chunk`s as user messages. Only for history replay: live ones echo the
   * prompt we sent.
   */
  includeUserMessages?: boolean;
  /** The session's host tools: their calls are named after the tool. */
  hostTools?: { has(name: string): boolean };
}

interface ToolState {
  callId: string;
  /** The host tool this call runs, once a message named it. */
  hostTool?: string;
  /** A `tools/call` without an id of its own was matched to this call (claimHostCall). */
  claimed?: boolean;
  name?: string;
  title?: string;
  kind?: string;
  status?: string;
  input?: unknown;
  content?: unknown[];
  rawOutput?: unknown;
  /** What the last emitted `tool_call` said (name, title, input), to emit upserts only on change. */
  emitted?: string;
  resultEmitted: boolean;
  denied: boolean;
}

interface OpenMessage {
  id: string;
  role: 'assistant' | 'user';
  /** Text and thinking runs, each gathered from its chunks (text-accumulator.ts says why not `+=`). */
  blocks: { type: 'text' | 'thinking'; text: TextAccumulator }[];
}

const FINISHED = new Set(['completed', 'failed']);

export class AcpTranslator {
  readonly skipped: SkippedInput[] = [];
  readonly info: AcpSessionInfo = {};
  readonly #options: AcpTranslatorOptions;
  readonly #tools = new Map<string, ToolState>();
  #turn = 0;
  #segment = 0;
  #message: OpenMessage | undefined;
  readonly #thinking = new ThinkingIndicator();
  /** `_meta.usage` of this turn's chunks not taken yet (undefined: none reported). */
  #chunkUsage: TurnUsage | undefined;

  constructor(options: AcpTranslatorOptions) {
    this.#options = options;
  }

  /**
   * Starts a new turn: message ids restart their segment count under the new turn number. Returns
   * what late output (text or thinking after the previous turn ended) left open: it belongs to
   * that turn and must not run on into this one.
   */
  beginTurn(): AgentEventBody[] {
    const late = this.flush();
    this.#turn++;
    this.#segment = 0;
    // Usage reported after the previous turn was taken (or replayed history's) is no turn's to count.
    this.#chunkUsage = undefined;
    return late;
  }

  /**
   * The usage this turn's chunks reported so far (undefined: none), and forgets it: the turn's end
   * takes it once, so a second end or a later turn cannot count it again.
   */
  takeChunkUsage(): TurnUsage | undefined {
    const usage = this.#chunkUsage;
    this.#chunkUsage = undefined;
    return usage;
  }

  /** Closes an open message and thinking; for late output when no turn will end it (agent exit). */
  flush(): AgentEventBody[] {
    return [...this.#thinking.off(), ...this.#flushMessage()];
  }

  /**
   * The host rejected this call's permission: the call ends `denied` now. Agents differ in what
   * follows (claude sends `failed`, gemini nothing at all, codex ends the turn), so the result is
   * reported at the decision; a later `failed` for it is absorbed.
   */
  deny(callId: string): AgentEventBody[] {
    let tool = this.#tools.get(callId);
    if (!tool) {
      tool = { callId, resultEmitted: false, denied: true };
      this.#tools.set(callId, tool);
    }
    tool.denied = true;
    if (tool.resultEmitted) return [];
    const out: AgentEventBody[] = [];
    if (tool.emitted === undefined) {
      const call = this.#callEvent(tool);
      tool.emitted = JSON.stringify([call.toolName, call.title ?? null, call.input]);
      out.push(call);
    }
    out.push(this.#result(tool, 'denied'));
    return out;
  }

  /** The best name known for a call (agents name tools in some messages only). */
  toolName(callId: string): string | undefined {
    const tool = this.#tools.get(callId);
    return tool?.name ?? tool?.kind;
  }

  /** The host tool a call runs, when it is a host tool call (known from any of its messages so far). */
  hostToolOf(callId: string): string | undefined {
    return this.#tools.get(callId)?.hostTool;
  }

  /**
   * The oldest open call of host tool `name` not claimed yet, now claimed: for a `tools/call`
   * that does not say which of the agent's calls it is (gemini).
   */
  claimHostCall(name: string): string | undefined {
    for (const tool of this.#tools.values()) {
      if (tool.hostTool !== name || tool.resultEmitted || tool.claimed) continue;
      tool.claimed = true;
      return tool.callId;
    }
    return undefined;
  }

  /** Tool calls seen but not finished yet. */
  openToolCalls(): string[] {
    return [...this.#tools.values()].filter((t) => t.emitted !== undefined && !t.resultEmitted).map((t) => t.callId);
  }

  update(u: AcpSessionUpdate): AgentEventBody[] {
    try {
      return this.#update(u);
    } catch (error) {
      noteSkipped(this.skipped, { reason: `translator failure: ${String(error)}`, raw: u.update });
      return [];
    }
  }

  /** The `toolCall` of a permission request: creates or updates the call (never a result). */
  permissionToolCall(fields: AcpToolCallFields): AgentEventBody[] {
    const { status: _ignored, ...withoutStatus } = fields;
    return [...this.#thinking.off(), ...this.#flushMessage(), ...this.#upsert(withoutStatus)];
  }

  /**
   * Ends the turn: closes the open message and thinking. A call the host denied ends `denied`;
   * when the turn was cancelled, every other open call ends `cancelled` (nothing will finish it).
   */
  endTurn({ cancelled }: { cancelled: boolean }): AgentEventBody[] {
    const out = this.flush();
    for (const tool of this.#tools.values()) {
      if (tool.emitted === undefined || tool.resultEmitted) continue;
      if (tool.denied) out.push(this.#result(tool, 'denied'));
      else if (cancelled) out.push(this.#result(tool, 'cancelled'));
    }
    return out;
  }

  #update(u: AcpSessionUpdate): AgentEventBody[] {
    const update = u.update;
    switch (u.kind) {
      case 'agent_message_chunk':
        this.#noteUsage(update);
        return this.#chunk('assistant', 'text', update);
      case 'agent_thought_chunk':
        this.#noteUsage(update);
        return this.#chunk('assistant', 'thinking', update);
      case 'user_message_chunk':
        return this.#options.includeUserMessages ? this.#chunk('user', 'text', update) : [];
      case 'tool_call':
      case 'tool_call_update': {
        const fields = readToolCallFields(update);
        if (!fields) {
          noteSkipped(this.skipped, { reason: `${u.kind} without a toolCallId`, raw: update });
          return [];
        }
        return [...this.#thinking.off(), ...this.#flushMessage(), ...this.#upsert(fields)];
      }
      case 'plan': {
        if (!Array.isArray(update['entries'])) return this.#skipUpdate('plan without entries', update);
        this.info.plan = update['entries'];
        return [{ type: 'plan', entries: update['entries'].flatMap(planEntry) }];
      }
      case 'available_commands_update': {
        if (!Array.isArray(update['availableCommands'])) return this.#skipUpdate('available_commands_update without availableCommands', update);
        this.info.availableCommands = update['availableCommands'];
        return [{ type: 'available_commands', commands: update['availableCommands'].flatMap(agentCommand) }];
      }
      case 'current_mode_update': {
        const modeId = update['currentModeId'];
        if (typeof modeId !== 'string' || modeId === '') return this.#skipUpdate('current_mode_update without currentModeId', update);
        this.info.currentModeId = modeId;
        return [{ type: 'agent_mode', modeId }];
      }
      case 'config_option_update':
        if (Array.isArray(update['configOptions'])) this.info.configOptions = update['configOptions'];
        return [];
      case 'session_info_update':
        if (typeof update['title'] === 'string') this.info.title = update['title'];
        return [];
      case 'usage_update': {
        const { used, size, cost } = update;
        if (typeof used !== 'number' || typeof size !== 'number') return this.#skipUpdate('usage_update without used/size', update);
        this.info.context = { used, size };
        const spent = isRecord(cost) && typeof cost['amount'] === 'number' && typeof cost['currency'] === 'string' ? { amount: cost['amount'], currency: cost['currency'] } : undefined;
        if (spent) this.info.cost = spent;
        return [{ type: 'context_usage', usedTokens: used, windowTokens: size, ...(spent && { cost: spent }) }];
      }
      default:
        noteSkipped(this.skipped, { reason: `unknown session/update "${u.kind}"`, raw: update });
        return [];
    }
  }

  #noteUsage(update: Record<string, unknown>): void {
    const usage = chunkUsage(update['_meta']);
    if (usage) this.#chunkUsage = this.#chunkUsage ? addTurnUsage(this.#chunkUsage, usage) : usage;
  }

  #skipUpdate(reason: string, update: unknown): AgentEventBody[] {
    noteSkipped(this.skipped, { reason, raw: update });
    return [];
  }

  #chunk(role: 'assistant' | 'user', block: 'text' | 'thinking', update: Record<string, unknown>): AgentEventBody[] {
    const text = contentText(update['content']);
    if (text === undefined) {
      noteSkipped(this.skipped, { reason: 'chunk without usable content', raw: update });
      return [];
    }
    if (text === '') return [];
    const out: AgentEventBody[] = block === 'thinking' ? this.#thinking.on() : this.#thinking.off();
    const messageId = typeof update['messageId'] === 'string' ? update['messageId'] : undefined;
    if (this.#message && (this.#message.role !== role || (messageId !== undefined && messageId !== this.#message.id))) {
      out.push(...this.#flushMessage());
    }
    this.#message ??= { id: messageId ?? `${this.#options.idPrefix}-t${this.#turn}-m${this.#segment}`, role, blocks: [] };
    const last = this.#message.blocks.at(-1);
    if (last && last.type === block) last.text.append(text);
    else this.#message.blocks.push({ type: block, text: new TextAccumulator(text) });
    if (block === 'text' && role === 'assistant') out.push({ type: 'text_delta', messageId: this.#message.id, text });
    return out;
  }

  #flushMessage(): AgentEventBody[] {
    const message = this.#message;
    if (!message) return [];
    this.#message = undefined;
    this.#segment++;
    if (message.blocks.length === 0) return [];
    const blocks: ContentBlock[] = message.blocks.map(({ type, text }) => ({ type, text: text.toString() }));
    return [{ type: 'message', role: message.role, id: message.id, blocks }];
  }

  #upsert(fields: AcpToolCallFields): AgentEventBody[] {
    let tool = this.#tools.get(fields.toolCallId);
    if (!tool) {
      tool = { callId: fields.toolCallId, resultEmitted: false, denied: false };
      this.#tools.set(tool.callId, tool);
    }
    if (tool.resultEmitted) return []; // finished: later updates are absorbed (and not stored)
    tool.hostTool ??= acpHostToolName(fields, this.#options.hostTools);
    if (fields.name !== undefined) tool.name = fields.name;
    if (fields.title !== undefined) tool.title = fields.title;
    if (fields.kind !== undefined) tool.kind = fields.kind;
    if (fields.status !== undefined) tool.status = fields.status;
    if (fields.content !== undefined) tool.content = fields.content;
    if (fields.rawOutput !== undefined) tool.rawOutput = fields.rawOutput;
    // An empty `{}` (claude's first `tool_call`) never replaces a real input.
    if (fields.rawInput !== undefined && !(isEmptyObject(fields.rawInput) && tool.input !== undefined)) tool.input = fields.rawInput;
    const out: AgentEventBody[] = [];
    const call = this.#callEvent(tool);
    const key = JSON.stringify([call.toolName, call.title ?? null, call.input]);
    if (tool.emitted !== key) {
      tool.emitted = key;
      out.push(call);
    }
    if (tool.status !== undefined && FINISHED.has(tool.status)) {
      out.push(this.#result(tool, tool.status === 'completed' ? 'completed' : tool.denied ? 'denied' : 'failed'));
    }
    return out;
  }

  #callEvent(tool: ToolState): Extract<AgentEventBody, { type: 'tool_call' }> {
    return {
      type: 'tool_call',
      callId: tool.callId,
      toolName: tool.hostTool ?? tool.name ?? tool.kind ?? 'tool',
      input: tool.input ?? {},
      ...(tool.title !== undefined && { title: tool.title }),
    };
  }

  #result(tool: ToolState, status: 'completed' | 'failed' | 'denied' | 'cancelled'): AgentEventBody {
    tool.resultEmitted = true;
    const output: Record<string, unknown> = {};
    if (tool.content !== undefined) output['content'] = tool.content;
    if (tool.rawOutput !== undefined) output['rawOutput'] = tool.rawOutput;
    // A finished call is remembered only to absorb later updates: what it carried goes, or a long
    // session would hold every tool input and output (file contents, command output) until it ends.
    delete tool.input;
    delete tool.content;
    delete tool.rawOutput;
    delete tool.emitted;
    return {
      type: 'tool_result',
      callId: tool.callId,
      status,
      ...(Object.keys(output).length > 0 && { output }),
      isError: status !== 'completed',
    };
  }
}

function isEmptyObject(value: unknown): boolean {
  return isRecord(value) && Object.keys(value).length === 0;
}

const PLAN_STATUSES = new Set(['pending', 'in_progress', 'completed']);
const PLAN_PRIORITIES = new Set(['high', 'medium', 'low']);

/** An ACP plan entry as a PlanEntry (an entry without text is dropped; an unknown status reads `pending`). */
function planEntry(entry: unknown): PlanEntry[] {
  if (!isRecord(entry) || typeof entry['content'] !== 'string') return [];
  const status = PLAN_STATUSES.has(entry['status'] as string) ? (entry['status'] as PlanEntry['status']) : 'pending';
  const priority = PLAN_PRIORITIES.has(entry['priority'] as string) ? (entry['priority'] as PlanEntry['priority']) : undefined;
  return [{ content: entry['content'], status, ...(priority && { priority }) }];
}

/** An ACP available command as an AgentCommand (`input.hint` becomes `inputHint`). */
function agentCommand(command: unknown): AgentCommand[] {
  if (!isRecord(command) || typeof command['name'] !== 'string') return [];
  const description = typeof command['description'] === 'string' ? command['description'] : undefined;
  const input = command['input'];
  const hint = isRecord(input) && typeof input['hint'] === 'string' ? input['hint'] : undefined;
  return [{ name: command['name'], ...(description !== undefined && { description }), ...(hint !== undefined && { inputHint: hint }) }];
}
