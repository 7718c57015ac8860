/**
 * Lenient zod schemas for the Claude Code stream-json protocol (CLI 2.1.330, see the team
 * reference "claude-stream-json.md"). Every object is loose (unknown fields pass through, the CLI
 * adds fields constantly) and {@link classifyClaudeMessage} never throws: anything that does not
 * match a known shape comes back as `{ kind: 'unknown' }` so callers can log and skip it.
 */
import { z } from 'zod';

const str = z.string();
const optStr = z.string().nullish();

export const UsageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type ClaudeUsage = z.infer<typeof UsageSchema>;

export const SystemInitSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  session_id: str,
  cwd: optStr,
  model: optStr,
});
export type SystemInit = z.infer<typeof SystemInitSchema>;

export const SystemOtherSchema = z.looseObject({ type: z.literal('system'), subtype: z.string().optional() });

export const StreamEventSchema = z.looseObject({
  type: z.literal('stream_event'),
  event: z.looseObject({
    type: str,
    index: z.number().optional(),
    delta: z.looseObject({ type: z.string().optional(), text: z.string().optional(), thinking: z.string().optional() }).optional(),
    content_block: z.looseObject({ type: z.string().optional() }).optional(),
    message: z.looseObject({ id: z.string().optional() }).optional(),
  }),
  api_message_id: optStr,
  parent_tool_use_id: optStr,
});
export type StreamEvent = z.infer<typeof StreamEventSchema>;

export const AssistantContentBlockSchema = z.looseObject({
  type: str,
  text: z.string().optional(),
  thinking: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
});

export const AssistantMessageSchema = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({
    id: str,
    model: optStr,
    content: z.array(AssistantContentBlockSchema),
  }),
  parent_tool_use_id: optStr,
  error: z.unknown().optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const ToolResultContentSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: str,
  content: z.unknown().optional(),
  is_error: z.boolean().nullish(),
});

export const UserMessageSchema = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({
    role: z.string().optional(),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]),
  }),
  tool_use_result: z.unknown().optional(),
  parent_tool_use_id: optStr,
  tool_result_meta: z
    .array(z.looseObject({ id: z.string().optional(), non_execution_kind: z.string().nullish(), permission_decision: z.unknown().optional() }))
    .nullish(),
});
export type ClaudeUserMessage = z.infer<typeof UserMessageSchema>;

export const ResultMessageSchema = z.looseObject({
  type: z.literal('result'),
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().nullish(),
  errors: z.array(z.unknown()).nullish(),
  stop_reason: optStr,
  terminal_reason: optStr,
  total_cost_usd: z.number().nullish(),
  usage: UsageSchema.nullish(),
  api_error_status: z.number().nullish(),
  api_error_type: optStr,
  api_error: optStr,
  session_id: optStr,
});
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

export const ControlRequestSchema = z.looseObject({
  type: z.literal('control_request'),
  request_id: str,
  request: z.looseObject({ subtype: str }),
});
export type ControlRequest = z.infer<typeof ControlRequestSchema>;

export const ControlResponseSchema = z.looseObject({
  type: z.literal('control_response'),
  response: z.looseObject({
    subtype: str,
    request_id: str,
    response: z.unknown().optional(),
    error: z.unknown().optional(),
    error_code: z.unknown().optional(),
  }),
});
export type ControlResponse = z.infer<typeof ControlResponseSchema>;

export const ControlCancelRequestSchema = z.looseObject({ type: z.literal('control_cancel_request'), request_id: str });
export type ControlCancelRequest = z.infer<typeof ControlCancelRequestSchema>;

export const CanUseToolRequestSchema = z.looseObject({
  subtype: z.literal('can_use_tool'),
  tool_name: str,
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  permission_suggestions: z.array(z.unknown()).nullish(),
});
export type CanUseToolRequest = z.infer<typeof CanUseToolRequestSchema>;

export type ClaudeMessage =
  | { kind: 'system_init'; msg: SystemInit }
  | { kind: 'system'; msg: z.infer<typeof SystemOtherSchema> }
  | { kind: 'stream_event'; msg: StreamEvent }
  | { kind: 'assistant'; msg: AssistantMessage }
  | { kind: 'user'; msg: ClaudeUserMessage }
  | { kind: 'result'; msg: ResultMessage }
  | { kind: 'control_request'; msg: ControlRequest }
  | { kind: 'control_response'; msg: ControlResponse }
  | { kind: 'control_cancel_request'; msg: ControlCancelRequest }
  | { kind: 'keep_alive' }
  | { kind: 'unknown'; raw: unknown; reason: string };

function typeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const t = (value as Record<string, unknown>)['type'];
  return typeof t === 'string' ? t : undefined;
}

/** Classifies one decoded CLI→host line. Never throws. */
export function classifyClaudeMessage(value: unknown): ClaudeMessage {
  const type = typeOf(value);
  const unknown = (reason: string): ClaudeMessage => ({ kind: 'unknown', raw: value, reason });
  const attempt = <S extends z.ZodType, K extends ClaudeMessage['kind']>(schema: S, kind: K): ClaudeMessage => {
    const parsed = schema.safeParse(value);
    return parsed.success ? ({ kind, msg: parsed.data } as ClaudeMessage) : unknown(`malformed ${type}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  };
  switch (type) {
    case undefined:
      return unknown('not an object with a string "type"');
    case 'system':
      return (value as Record<string, unknown>)['subtype'] === 'init' ? attempt(SystemInitSchema, 'system_init') : attempt(SystemOtherSchema, 'system');
    case 'stream_event':
      return isStreamEvent(value) ? { kind: 'stream_event', msg: value } : attempt(StreamEventSchema, 'stream_event');
    case 'assistant':
      return isAssistantMessage(value) ? { kind: 'assistant', msg: value } : attempt(AssistantMessageSchema, 'assistant');
    case 'user':
      return isUserMessage(value) ? { kind: 'user', msg: value } : attempt(UserMessageSchema, 'user');
    case 'result':
      return attempt(ResultMessageSchema, 'result');
    case 'control_request':
      return attempt(ControlRequestSchema, 'control_request');
    case 'control_response':
      return attempt(ControlResponseSchema, 'control_response');
    case 'control_cancel_request':
      return attempt(ControlCancelRequestSchema, 'control_cancel_request');
    case 'keep_alive':
      return { kind: 'keep_alive' };
    default:
      return unknown(`unknown message type "${type}"`);
  }
}

// ---------------------------------------------------------------- the hot path

// The messages of every model call (`stream_event`, `assistant`, `user`) are checked by hand against
// the same rules as their schemas: a zod parse (which copies the whole object) of each cost more
// than the rest of its translation. A message that passes is used as it is (nothing downstream
// mutates it); one that fails goes through its schema, which says what is wrong. The schema tests
// (test/unit/claude-messages.test.ts) hold both ways to the same verdicts.

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Absent or a string (`z.string().optional()`). */
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';
/** Absent, null or a string (`z.string().nullish()`). */
const isNullishString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
/** Absent, or an object whose fields `a`, `b`, `c` are each absent or a string. */
const hasOptionalStrings = (v: unknown, a: string, b?: string, c?: string): boolean =>
  v === undefined ||
  (isPlainObject(v) && isOptionalString(v[a]) && (b === undefined || isOptionalString(v[b])) && (c === undefined || isOptionalString(v[c])));

/** {@link StreamEventSchema}'s rules. */
function isStreamEvent(value: unknown): value is StreamEvent {
  if (!isPlainObject(value)) return false;
  const event = value['event'];
  return (
    isPlainObject(event) &&
    typeof event['type'] === 'string' &&
    (event['index'] === undefined || typeof event['index'] === 'number') &&
    hasOptionalStrings(event['delta'], 'type', 'text', 'thinking') &&
    hasOptionalStrings(event['content_block'], 'type') &&
    hasOptionalStrings(event['message'], 'id') &&
    isNullishString(value['api_message_id']) &&
    isNullishString(value['parent_tool_use_id'])
  );
}

/** {@link AssistantMessageSchema}'s rules. */
function isAssistantMessage(value: unknown): value is AssistantMessage {
  if (!isPlainObject(value)) return false;
  const message = value['message'];
  if (!isPlainObject(message) || typeof message['id'] !== 'string' || !isNullishString(message['model']) || !isNullishString(value['parent_tool_use_id'])) return false;
  const content = message['content'];
  if (!Array.isArray(content)) return false;
  for (const block of content) {
    if (!isPlainObject(block) || typeof block['type'] !== 'string') return false;
    if (!isOptionalString(block['text']) || !isOptionalString(block['thinking']) || !isOptionalString(block['id']) || !isOptionalString(block['name'])) return false;
  }
  return true;
}

/** {@link UserMessageSchema}'s rules. */
function isUserMessage(value: unknown): value is ClaudeUserMessage {
  if (!isPlainObject(value)) return false;
  const message = value['message'];
  if (!isPlainObject(message) || !isOptionalString(message['role']) || !isNullishString(value['parent_tool_use_id'])) return false;
  const content = message['content'];
  if (typeof content !== 'string') {
    if (!Array.isArray(content)) return false;
    for (const block of content) if (!hasOptionalStrings(block, 'type') || block === undefined) return false;
  }
  const meta = value['tool_result_meta'];
  if (meta === undefined || meta === null) return true;
  if (!Array.isArray(meta)) return false;
  for (const item of meta) if (!isPlainObject(item) || !isOptionalString(item['id']) || !isNullishString(item['non_execution_kind'])) return false;
  return true;
}
