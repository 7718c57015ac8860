/**
 * A pure, stateful translator from rollout lines (one file, in order) to AgentEvent bodies, each
 * with its dedupe key. It never throws: lines it does not map come back with a `note` (for the
 * caller's diagnostics) and no events.
 *
 * State kept across lines: thread id and dialect (from `session_meta`), the current turn (from
 * `task_started`; legacy message lines carry none), the turn's usage, the calls that already have
 * a result (first result wins), and the legacy user-message counter per turn (for synthetic ids).
 *
 * Mapping (both dialects unless noted):
 * - `session_meta` → session_identified {resumeToken: thread id, transcriptPath}
 * - `event_msg task_started` → (no event) sets the current turn, resets its usage
 * - messages → message (see message-events.ts; legacy user ids are `<turnId>#user<n>`)
 * - `response_item function_call|custom_tool_call` → tool_call; results → tool_result (tool-events.ts)
 * - `event_msg token_count` → (no event) adds `last_token_usage` to the turn (../usage.ts)
 * - `event_msg task_complete` → [error (if `error`)] + turn_complete completed|failed
 * - `event_msg turn_aborted` → turn_complete cancelled (stopReason = reason)
 * - `event_msg error` → error (once per turn)
 */
import type { AgentEventBody } from '../../../events/agent-event.js';
import type { DedupeKey, DedupeKind } from './dedupe.js';
import { dialectOf, type RolloutDialect } from './dialect.js';
import { assistantMessageFromResponseItem, messageFromItem, reasoningFromResponseItem, userMessageFromEvent } from './message-events.js';
import { isObject, str, type Json, type RolloutLine } from './rollout-line.js';
import { toolCallFromResponseItem, toolResultFromItem, toolResultFromOutput, toolResultFromPatchApplyEnd } from './tool-events.js';
import { turnErrorOf } from './turn-error.js';
import { TurnUsageAccumulator } from '../usage.js';

export interface TranslatedEvent {
  event: AgentEventBody;
  key: DedupeKey;
}

export interface Translation {
  events: TranslatedEvent[];
  /** why a line produced nothing, when that is not expected (unknown type, missing ids, …) */
  note?: string;
}

/** Line kinds that never map to an event (context snapshots, projections, duplicates). */
const IGNORED_LINE_TYPES = new Set(['turn_context', 'world_state', 'token_usage_record', 'compacted']);

/** event_msg types that are duplicates of mapped lines, or carry nothing for AgentEvents. */
const IGNORED_EVENTS = new Set([
  'agent_message', // legacy: text without id; the following response_item message has the id
  'agent_reasoning',
  'agent_reasoning_raw_content',
  'agent_reasoning_section_break',
  'thread_settings_applied',
  'turn_diff',
  'item_started',
  'exec_command_begin',
  'exec_command_end', // not persisted in either dialect; the call output is the result
  'patch_apply_begin',
  'mcp_startup_update',
  'mcp_startup_complete',
  'context_compacted',
  'thread_name_updated',
  'plan_update',
  'entered_review_mode',
  'exited_review_mode',
  'warning',
  'stream_error', // a retry notice; the turn's outcome comes with task_complete
]);

const NO_TURN = '';

export class RolloutTranslator {
  threadId: string | undefined;
  dialect: RolloutDialect | undefined;
  /** the turn the last lines belong to ('' before the first task_started / after it ended) */
  turnId = NO_TURN;
  private readonly usage = new TurnUsageAccumulator();
  private readonly resulted = new Set<string>();
  private userMessagesInTurn = 0;
  private errorInTurn = false;

  constructor(private readonly transcriptPath?: string) {}

  translate(line: RolloutLine): Translation {
    if (line.type === 'session_meta') return this.sessionMeta(line.payload);
    if (this.threadId === undefined) return { events: [], note: `${line.type} before session_meta` };
    if (IGNORED_LINE_TYPES.has(line.type)) return { events: [] };
    if (line.type === 'event_msg') return this.eventMsg(line.payload);
    if (line.type === 'response_item') return this.responseItem(line.payload);
    return { events: [], note: `unknown line type ${line.type}` };
  }

  private emit(kind: DedupeKind, itemId: string, event: AgentEventBody, turnId = this.turnId): TranslatedEvent {
    return { event, key: { threadId: this.threadId ?? '', turnId, kind, itemId } };
  }

  private sessionMeta(payload: Json): Translation {
    const id = str(payload, 'id') ?? str(payload, 'session_id');
    if (id === undefined) return { events: [], note: 'session_meta without id' };
    if (this.threadId !== undefined) return this.threadId === id ? { events: [] } : { events: [], note: `second session_meta (${id})` };
    this.threadId = id;
    this.dialect = dialectOf(payload);
    const event: AgentEventBody = { type: 'session_identified', resumeToken: id, ...(this.transcriptPath ? { transcriptPath: this.transcriptPath } : {}) };
    return { events: [this.emit('session_identified', id, event, NO_TURN)] };
  }

  private eventMsg(payload: Json): Translation {
    const type = str(payload, 'type') ?? '';
    switch (type) {
      case 'task_started':
      case 'turn_started':
        this.turnId = str(payload, 'turn_id') ?? NO_TURN;
        this.usage.reset();
        this.userMessagesInTurn = 0;
        this.errorInTurn = false;
        return { events: [] };
      case 'token_count':
        this.usage.add(payload);
        return { events: [] };
      case 'item_completed':
        return this.itemCompleted(payload);
      case 'user_message':
        return this.dialect === 'legacy' ? this.legacyUserMessage(payload) : { events: [] }; // paginated: item_completed UserMessage
      case 'patch_apply_end':
        return this.result(toolResultFromPatchApplyEnd(payload), str(payload, 'turn_id'));
      case 'error':
        return { events: this.turnError(payload) };
      case 'task_complete':
      case 'turn_complete':
        return this.turnEnd(payload, isObject(payload.error) ? 'failed' : 'completed');
      case 'turn_aborted':
        return this.turnEnd(payload, 'cancelled');
      default:
        return IGNORED_EVENTS.has(type) ? { events: [] } : { events: [], note: `unhandled event_msg ${type}` };
    }
  }

  private legacyUserMessage(payload: Json): Translation {
    const id = `${this.turnId}#user${this.userMessagesInTurn++}`;
    const event = userMessageFromEvent(payload, id);
    return event ? { events: [this.emit('message', id, event)] } : { events: [], note: 'user_message without text' };
  }

  private itemCompleted(payload: Json): Translation {
    const item = payload.item;
    if (!isObject(item) || typeof item.id !== 'string') return { events: [], note: 'item_completed without item id' };
    const turnId = str(payload, 'turn_id') ?? this.turnId;
    const message = messageFromItem(item);
    if (message) return { events: [this.emit('message', message.id, message, turnId)] };
    if (item.type === 'CommandExecution' || item.type === 'FileChange') return this.result(toolResultFromItem(item), turnId);
    if (item.type === 'Reasoning' || item.type === 'ContextCompaction') return { events: [] }; // empty reasoning; compaction marker
    return { events: [], note: `unhandled item_completed ${String(item.type)}` };
  }

  private responseItem(payload: Json): Translation {
    const passthrough = payload.internal_chat_message_metadata_passthrough;
    const turnId = (isObject(passthrough) ? str(passthrough, 'turn_id') : undefined) ?? this.turnId;
    switch (payload.type) {
      case 'function_call':
      case 'custom_tool_call': {
        const call = toolCallFromResponseItem(payload);
        return call ? { events: [this.emit('tool_call', call.callId, call, turnId)] } : { events: [], note: `${String(payload.type)} without call_id/name` };
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
        return this.result(toolResultFromOutput(payload), turnId);
      case 'message': {
        if (this.dialect !== 'legacy') return { events: [] }; // paginated: item_completed carries it
        const message = assistantMessageFromResponseItem(payload);
        return message ? { events: [this.emit('message', message.id, message, turnId)] } : { events: [] }; // user/developer: injected context
      }
      case 'reasoning': {
        if (this.dialect !== 'legacy') return { events: [] };
        const message = reasoningFromResponseItem(payload);
        return message ? { events: [this.emit('message', message.id, message, turnId)] } : { events: [] };
      }
      default:
        return { events: [], note: `unhandled response_item ${String(payload.type)}` };
    }
  }

  /** First result per call wins (item_completed / patch_apply_end precede the call output). */
  private result(result: ReturnType<typeof toolResultFromOutput>, turnId = this.turnId): Translation {
    if (!result) return { events: [], note: 'tool result without call id' };
    if (this.resulted.has(result.callId)) return { events: [] };
    this.resulted.add(result.callId);
    return { events: [this.emit('tool_result', result.callId, result, turnId)] };
  }

  private turnError(payload: Json): TranslatedEvent[] {
    if (this.errorInTurn) return [];
    this.errorInTurn = true;
    return [this.emit('error', this.turnId, turnErrorOf(payload))];
  }

  private turnEnd(payload: Json, status: 'completed' | 'failed' | 'cancelled'): Translation {
    const turnId = str(payload, 'turn_id') ?? this.turnId;
    this.turnId = turnId; // the end line's own turn id is authoritative (keys of error and turn_complete)
    const events = status === 'failed' && isObject(payload.error) ? this.turnError(payload.error) : [];
    const reason = status === 'cancelled' ? str(payload, 'reason') : undefined;
    const event: AgentEventBody = { type: 'turn_complete', status, ...(reason ? { stopReason: reason } : {}), usage: this.usage.current() };
    events.push(this.emit('turn_complete', turnId, event, turnId));
    this.turnId = NO_TURN;
    this.usage.reset();
    this.userMessagesInTurn = 0;
    this.errorInTurn = false;
    return { events };
  }
}
