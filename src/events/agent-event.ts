/**
 * The AgentEvent vocabulary: what every engine (Claude, Codex, ACP, fake) reports to the session.
 * Each protocol is translated into this one small set; each event carries the runner generation
 * (`gen`) of the engine that produced it and the time it was observed (`at`, epoch ms), so the
 * SessionActor can drop events from a stale generation.
 */
import { z } from 'zod';
import { ErrorCodeSchema } from './error-codes.js';

const stamp = {
  /** Runner generation of the engine instance that produced the event. */
  gen: z.number().int().nonnegative(),
  /** When the engine observed it, epoch milliseconds. */
  at: z.number().nonnegative(),
};

// ---- sub-agent scope (issue 15) ----
/**
 * Set on the events of a sub-agent the agent runs inside its own process (Claude's Task tool,
 * tagged `parent_tool_use_id`; a Codex collaborating thread): the `callId` of the tool call that
 * started it, so a client can nest the sub-agent's messages, tool calls and permission prompts
 * under that call. Absent on the main agent's own events. Sub-agents nest: a grand-child's events
 * name the child's call.
 */
export const subAgentScope = { parentCallId: z.string().min(1).optional() };
// ---- end sub-agent scope ----

export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ThinkingBlockSchema = z.object({ type: z.literal('thinking'), text: z.string() });
export const ToolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  callId: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const ToolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  callId: z.string(),
  output: z.unknown().optional(),
  isError: z.boolean(),
});
export const ContentBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** Token usage and cost of exactly one turn (never cumulative: engines convert). */
export const TurnUsageSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  cacheReadTokens: z.number().nonnegative(),
  cacheWriteTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative().optional(),
});
export type TurnUsage = z.infer<typeof TurnUsageSchema>;

export const ERROR_KINDS = [
  'fatal',
  'transient',
  'rate_limited',
  'budget_exceeded',
  'cancelled',
  'protocol',
  'auth',
] as const;
export const ErrorKindSchema = z.enum(ERROR_KINDS);
export type ErrorKind = z.infer<typeof ErrorKindSchema>;

export const ReadyEventSchema = z.object({ type: z.literal('ready'), ...stamp });
export const ExitedEventSchema = z.object({
  type: z.literal('exited'),
  ...stamp,
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  reason: z.string().optional(),
});
export const SessionIdentifiedEventSchema = z.object({
  type: z.literal('session_identified'),
  ...stamp,
  resumeToken: z.string().min(1),
  transcriptPath: z.string().optional(),
});
/**
 * The engine saw upstream traffic that produced no other event (a keep-alive, control traffic, a
 * status line). It carries nothing; it only tells the stall watchdog the agent is alive. Engines
 * throttle it (see `ACTIVITY_INTERVAL_MS`).
 */
export const ActivityEventSchema = z.object({ type: z.literal('activity'), ...stamp });
export const ThinkingEventSchema = z.object({ type: z.literal('thinking'), ...stamp,
  ...subAgentScope, active: z.boolean() });
export const TextDeltaEventSchema = z.object({
  type: z.literal('text_delta'),
  ...stamp,
  ...subAgentScope,
  messageId: z.string(),
  text: z.string(),
});
export const MessageEventSchema = z.object({
  type: z.literal('message'),
  ...stamp,
  ...subAgentScope,
  role: z.enum(['user', 'assistant', 'system']),
  id: z.string(),
  parentId: z.string().optional(),
  blocks: z.array(ContentBlockSchema),
});
export const ToolCallEventSchema = z.object({
  type: z.literal('tool_call'),
  ...stamp,
  ...subAgentScope,
  callId: z.string(),
  toolName: z.string(),
  input: z.unknown(),
  title: z.string().optional(),
});
export const ToolResultEventSchema = z.object({
  type: z.literal('tool_result'),
  ...stamp,
  ...subAgentScope,
  callId: z.string(),
  status: z.enum(['completed', 'failed', 'denied', 'cancelled']),
  output: z.unknown().optional(),
  isError: z.boolean(),
});
export const PermissionRequestEventSchema = z.object({
  type: z.literal('permission_request'),
  ...stamp,
  ...subAgentScope,
  requestId: z.string().min(1),
  toolName: z.string(),
  input: z.unknown(),
  callId: z.string().optional(),
  suggestions: z.array(z.unknown()).optional(),
});
/**
 * The agent withdrew a `permission_request` it had made (Claude's `control_cancel_request`, Codex's
 * `serverRequest/resolved` for a request nobody answered): no answer is expected any more.
 */
export const PermissionCancelledEventSchema = z.object({
  type: z.literal('permission_cancelled'),
  ...stamp,
  requestId: z.string().min(1),
  reason: z.string().optional(),
});
export const TurnCompleteEventSchema = z.object({
  type: z.literal('turn_complete'),
  ...stamp,
  status: z.enum(['completed', 'failed', 'cancelled']),
  stopReason: z.string().optional(),
  usage: TurnUsageSchema,
});
export const ErrorEventSchema = z.object({
  type: z.literal('error'),
  ...stamp,
  kind: ErrorKindSchema,
  message: z.string(),
  retryable: z.boolean(),
  /** The library's error code when the failure is one of ours (a start that found no agent: `AGENT_NOT_FOUND`). */
  code: ErrorCodeSchema.optional(),
});
/**
 * Something the user should know that is not a failure and changes nothing: the agent CLI is not
 * the version this library is tested against (`code: 'untested_version'`). The session records it
 * in the transcript; clients show it. Unlike `error` it never decides a restart or a failure.
 */
export const WarningEventSchema = z.object({
  type: z.literal('warning'),
  ...stamp,
  /** Stable, for code: `untested_version`. */
  code: z.string().min(1),
  message: z.string(),
});

// ---------------------------------------------------------------- the agent's session state
// What an agent says about its session besides the conversation: its plan, its mode, the commands
// it offers, how full its context is. ACP sends all four (`plan`, `current_mode_update`,
// `available_commands_update`, `usage_update`); Codex app-server sends plans (`turn/plan/updated`).
// `plan` and `agent_mode` go into the transcript (a reader of the session wants to know what the
// agent set out to do and in which mode it acted); `available_commands` and `context_usage` are
// gauges that only say "now": clients see them as they come, the transcript does not keep them.

export const PlanEntrySchema = z.object({
  /** What the step is, in the agent's words. */
  content: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed']),
  priority: z.enum(['high', 'medium', 'low']).optional(),
});
export type PlanEntry = z.infer<typeof PlanEntrySchema>;

/** The agent's whole current plan (each update replaces the one before). */
export const PlanEventSchema = z.object({ type: z.literal('plan'), ...stamp, entries: z.array(PlanEntrySchema), explanation: z.string().optional() });
/** The agent is now in this mode (it switched itself, or confirms a switch): its own mode id. */
export const AgentModeEventSchema = z.object({ type: z.literal('agent_mode'), ...stamp, modeId: z.string().min(1) });
export const AgentCommandSchema = z.object({ name: z.string(), description: z.string().optional(), inputHint: z.string().optional() });
export type AgentCommand = z.infer<typeof AgentCommandSchema>;
/** The commands (slash commands) the agent offers now, the whole list. */
export const AvailableCommandsEventSchema = z.object({ type: z.literal('available_commands'), ...stamp, commands: z.array(AgentCommandSchema) });
/** How full the agent's context window is, and what the session cost so far when the agent says. */
export const ContextUsageEventSchema = z.object({
  type: z.literal('context_usage'),
  ...stamp,
  /** Tokens in the context now. */
  usedTokens: z.number().nonnegative(),
  /** The context window's size in tokens. */
  windowTokens: z.number().nonnegative(),
  /** The session's cost so far, in the agent's currency (not necessarily USD). */
  cost: z.object({ amount: z.number(), currency: z.string() }).optional(),
});

/** The agent-state events above, in the AgentEvent union. */
const AGENT_STATE_EVENT_SCHEMAS = [PlanEventSchema, AgentModeEventSchema, AvailableCommandsEventSchema, ContextUsageEventSchema] as const;

export const AgentEventSchema = z.discriminatedUnion('type', [
  ReadyEventSchema,
  ExitedEventSchema,
  SessionIdentifiedEventSchema,
  ActivityEventSchema,
  ThinkingEventSchema,
  TextDeltaEventSchema,
  MessageEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  PermissionRequestEventSchema,
  PermissionCancelledEventSchema,
  TurnCompleteEventSchema,
  ErrorEventSchema,
  WarningEventSchema,
  ...AGENT_STATE_EVENT_SCHEMAS,
]);

export type AgentEvent = z.infer<typeof AgentEventSchema>;
export type AgentEventType = AgentEvent['type'];
export type AgentEventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;
/** An AgentEvent before the engine glue stamps it with `gen` and `at`. */
export type AgentEventBody = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, 'gen' | 'at'> : never) : never;

export const AGENT_EVENT_TYPES = AgentEventSchema.options.map((o) => o.shape.type.value) as readonly AgentEventType[];

export function isAgentEventType(type: string): type is AgentEventType {
  return (AGENT_EVENT_TYPES as readonly string[]).includes(type);
}

/** Engines report `activity` at most once per this many ms (the stall timeout is minutes). */
export const ACTIVITY_INTERVAL_MS = 1_000;

export const ZERO_USAGE: TurnUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});
