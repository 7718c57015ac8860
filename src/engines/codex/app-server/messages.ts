/**
 * Runtime schemas for the app-server messages the `codex` engine reads. They check only the fields
 * we use (the rest is stripped), so protocol additions pass and a missing field is caught at the
 * edge instead of deep in the translator.
 *
 * The `Accepts<…>` tuple at the bottom is a compile-time proof that every value the GENERATED
 * protocol type allows (types generated from the pinned binary) is accepted by the schema: if a
 * field we require becomes optional or changes type in a new pin, `tsc` fails here.
 */
import { z } from 'zod';
import type {
  AgentMessageDeltaNotification,
  CommandExecutionRequestApprovalParams,
  ErrorNotification,
  FileChangeRequestApprovalParams,
  ItemCompletedNotification,
  ItemStartedNotification,
  ReasoningSummaryTextDeltaNotification,
  ServerRequestResolvedNotification,
  ThreadItem,
  ThreadResumeResponse,
  ThreadStartResponse,
  ThreadTokenUsageUpdatedNotification,
  TurnCompletedNotification,
  TurnPlanUpdatedNotification,
  TurnStartResponse,
  TurnStartedNotification,
} from './protocol/index.js';

export const ThreadSchema = z.object({ id: z.string().min(1), path: z.string().nullish() });
export const ThreadStartResponseSchema = z.object({ thread: ThreadSchema, model: z.string() });

export const TurnErrorSchema = z.object({ message: z.string(), codexErrorInfo: z.unknown().optional() });
export const TurnSchema = z.object({ id: z.string().min(1), status: z.string(), error: TurnErrorSchema.nullish() });
export const TurnStartResponseSchema = z.object({ turn: TurnSchema });
export const TurnNotificationSchema = z.object({ threadId: z.string(), turn: TurnSchema });

/** Every item has a type and an id; the variants we read are parsed further below. */
export const ItemSchema = z.object({ type: z.string(), id: z.string() });

export const UserMessageItemSchema = z.object({
  type: z.literal('userMessage'),
  id: z.string(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()),
});
/** A sub-agent's lifecycle on the thread that spawned it (`multi_agent_v2`): kind `started` names the new thread. */
export const SubAgentActivityItemSchema = z.object({ type: z.literal('subAgentActivity'), id: z.string(), kind: z.string(), agentThreadId: z.string(), agentPath: z.string().nullish(), model: z.string().nullish() });
export const AgentMessageItemSchema = z.object({ type: z.literal('agentMessage'), id: z.string(), text: z.string() });
export const ReasoningItemSchema = z.object({ type: z.literal('reasoning'), id: z.string(), summary: z.array(z.string()), content: z.array(z.string()) });
export const CommandExecutionItemSchema = z.object({
  type: z.literal('commandExecution'),
  id: z.string(),
  command: z.string(),
  cwd: z.string(),
  status: z.string(),
  commandActions: z.array(z.unknown()),
  aggregatedOutput: z.string().nullable(),
  exitCode: z.number().nullable(),
  durationMs: z.number().nullable(),
});
export const FileChangeItemSchema = z.object({
  type: z.literal('fileChange'),
  id: z.string(),
  changes: z.array(z.object({ path: z.string(), kind: z.unknown(), diff: z.string() })),
  status: z.string(),
});
export const McpToolCallItemSchema = z.object({
  type: z.literal('mcpToolCall'),
  id: z.string(),
  server: z.string(),
  tool: z.string(),
  status: z.string(),
  arguments: z.unknown(),
  result: z.unknown(),
  error: z.unknown(),
});

/** A host tool's call through `thread/start.dynamicTools` (experimental API). */
export const DynamicToolCallItemSchema = z.object({
  type: z.literal('dynamicToolCall'),
  id: z.string(),
  namespace: z.string().nullish(),
  tool: z.string(),
  arguments: z.unknown(),
  status: z.string(),
  contentItems: z.array(z.unknown()).nullish(),
  success: z.boolean().nullish(),
});

// ------------------------------------------------------------------------------------------------
// The per-token notifications, read by hand (issue 24): they are most of a turn's traffic, and a
// zod parse (which also copies the object) cost more than the rest of their translation. Same
// contract as the schemas: the fields we use are checked, the rest is left alone.

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `item/agentMessage/delta`, `item/reasoning/textDelta`, `item/reasoning/summaryTextDelta`. */
export interface Delta {
  threadId: string;
  turnId: string;
  itemId: string;
  delta: string;
}

/** A delta notification's params, or `undefined` when a field we use is missing or not a string. */
export function readDelta(params: unknown): Delta | undefined {
  if (!isObject(params)) return undefined;
  const { threadId, turnId, itemId, delta } = params;
  if (typeof threadId !== 'string' || typeof turnId !== 'string' || typeof itemId !== 'string' || typeof delta !== 'string') return undefined;
  return { threadId, turnId, itemId, delta };
}

/** `item/started` / `item/completed`: the item itself is read further by its type's schema. */
export interface ItemNotification {
  threadId: string;
  turnId: string;
  item: { type: string; id: string } & Record<string, unknown>;
}

/** An item notification's params, or `undefined` when the thread, turn, item type or id is missing. */
export function readItemNotification(params: unknown): ItemNotification | undefined {
  if (!isObject(params)) return undefined;
  const { threadId, turnId, item } = params;
  if (typeof threadId !== 'string' || typeof turnId !== 'string' || !isObject(item) || typeof item['type'] !== 'string' || typeof item['id'] !== 'string') return undefined;
  return { threadId, turnId, item: item as ItemNotification['item'] };
}

export const TokenBreakdownSchema = z.object({
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  cacheWriteInputTokens: z.number(),
  outputTokens: z.number(),
});
export const TokenUsageUpdatedSchema = z.object({
  threadId: z.string(),
  turnId: z.string(),
  tokenUsage: z.object({ last: TokenBreakdownSchema, total: TokenBreakdownSchema }),
});

/** `turn/plan/updated`: the whole plan (the `update_plan` tool), each step `pending`, `inProgress` or `completed`. */
export const TurnPlanUpdatedSchema = z.object({
  threadId: z.string(),
  turnId: z.string(),
  explanation: z.string().nullish(),
  plan: z.array(z.object({ step: z.string(), status: z.enum(['pending', 'inProgress', 'completed']) })),
});

export const ErrorNotificationSchema = z.object({ error: TurnErrorSchema, willRetry: z.boolean(), threadId: z.string(), turnId: z.string() });
export const ServerRequestResolvedSchema = z.object({ threadId: z.string(), requestId: z.union([z.string(), z.number()]) });

export const CommandApprovalParamsSchema = z.object({
  threadId: z.string(),
  turnId: z.string(),
  itemId: z.string(),
  reason: z.string().nullish(),
  command: z.string().nullish(),
  cwd: z.string().nullish(),
  commandActions: z.array(z.unknown()).nullish(),
  proposedExecpolicyAmendment: z.array(z.string()).nullish(),
  /** Sent by 0.169.0 although its generated type does not declare it (experimental field). */
  availableDecisions: z.array(z.unknown()).nullish(),
});
export const FileChangeApprovalParamsSchema = z.object({
  threadId: z.string(),
  turnId: z.string(),
  itemId: z.string(),
  reason: z.string().nullish(),
  grantRoot: z.string().nullish(),
});

// ------------------------------------------------------------------------------------------------
// Compile-time agreement with the generated protocol types.

type Accepts<Schema extends z.ZodType, Wire> = [Wire] extends [z.input<Schema>] ? true : false;
/** The same for a hand-written reader: every wire value has the fields it reads, of its types. */
type Reads<Read, Wire> = [Wire] extends [Read] ? true : false;
type ItemOf<T extends string> = Extract<ThreadItem, { type: T }>;

export const PROTOCOL_AGREEMENT: [
  Accepts<typeof ThreadStartResponseSchema, ThreadStartResponse>,
  Accepts<typeof ThreadStartResponseSchema, ThreadResumeResponse>,
  Accepts<typeof TurnStartResponseSchema, TurnStartResponse>,
  Accepts<typeof TurnNotificationSchema, TurnStartedNotification>,
  Accepts<typeof TurnNotificationSchema, TurnCompletedNotification>,
  Reads<Omit<ItemNotification, 'item'> & { item: { type: string; id: string } }, ItemStartedNotification>,
  Reads<Omit<ItemNotification, 'item'> & { item: { type: string; id: string } }, ItemCompletedNotification>,
  Accepts<typeof UserMessageItemSchema, ItemOf<'userMessage'>>,
  Accepts<typeof AgentMessageItemSchema, ItemOf<'agentMessage'>>,
  Accepts<typeof ReasoningItemSchema, ItemOf<'reasoning'>>,
  Accepts<typeof CommandExecutionItemSchema, ItemOf<'commandExecution'>>,
  Accepts<typeof FileChangeItemSchema, ItemOf<'fileChange'>>,
  Accepts<typeof McpToolCallItemSchema, ItemOf<'mcpToolCall'>>,
  Accepts<typeof DynamicToolCallItemSchema, ItemOf<'dynamicToolCall'>>,
  Reads<Delta, AgentMessageDeltaNotification>,
  Reads<Delta, ReasoningSummaryTextDeltaNotification>,
  Accepts<typeof TokenUsageUpdatedSchema, ThreadTokenUsageUpdatedNotification>,
  Accepts<typeof TurnPlanUpdatedSchema, TurnPlanUpdatedNotification>,
  Accepts<typeof ErrorNotificationSchema, ErrorNotification>,
  Accepts<typeof ServerRequestResolvedSchema, ServerRequestResolvedNotification>,
  Accepts<typeof CommandApprovalParamsSchema, CommandExecutionRequestApprovalParams>,
  Accepts<typeof FileChangeApprovalParamsSchema, FileChangeRequestApprovalParams>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
