/**
 * Runtime schemas for what `codex mcp-server` (0.153.4) sends: the `codex/event` notification
 * envelope and the `msg` payloads the `codex-mcp` engine consumes, the `elicitation/create`
 * approval request, and the `tools/call` result. Shapes as observed on the pinned binary
 * (reference codex.md §4); only read fields are checked, the rest is stripped.
 *
 * mcp-server has no schema generator (unlike app-server); the recorded fixtures
 * (test/fixtures/codex/mcp-*.jsonl) are validated against these schemas in a unit test.
 */
import { z } from 'zod';

export const CodexEventParamsSchema = z.object({
  _meta: z.object({ requestId: z.union([z.number(), z.string()]), threadId: z.string().optional() }).loose(),
  /** The turn id, or "" for session-level events. */
  id: z.string().optional(),
  msg: z.object({ type: z.string() }).loose(),
});
export type CodexEventParams = z.infer<typeof CodexEventParamsSchema>;

export const SessionConfiguredSchema = z.object({
  session_id: z.string().min(1),
  thread_id: z.string().min(1).optional(),
  model: z.string().optional(),
  rollout_path: z.string().nullish(),
});
export const TaskStartedSchema = z.object({ turn_id: z.string() });

const TextContentSchema = z.array(z.object({ type: z.string(), text: z.string().optional() }).loose());
export const ItemEventSchema = z.object({ turn_id: z.string(), item: z.object({ type: z.string(), id: z.string() }).loose() });
export const UserMessageItemSchema = z.object({ type: z.literal('UserMessage'), id: z.string(), content: TextContentSchema });
export const AgentMessageItemSchema = z.object({ type: z.literal('AgentMessage'), id: z.string(), content: TextContentSchema });
export const ReasoningItemSchema = z.object({
  type: z.literal('Reasoning'),
  id: z.string(),
  summary_text: z.array(z.string()),
  raw_content: z.array(z.string()).optional(),
});

export const DeltaSchema = z.object({ item_id: z.string(), delta: z.string() });

export const ExecApprovalRequestSchema = z.object({
  call_id: z.string(),
  command: z.array(z.string()),
  cwd: z.string(),
  reason: z.string().nullish(),
  available_decisions: z.array(z.unknown()).nullish(),
});
export const ExecCommandBeginSchema = z.object({ call_id: z.string(), command: z.array(z.string()), cwd: z.string() });
export const ExecCommandEndSchema = z.object({
  call_id: z.string(),
  command: z.array(z.string()),
  cwd: z.string(),
  exit_code: z.number(),
  aggregated_output: z.string().optional(),
  status: z.string().optional(),
  duration: z.object({ secs: z.number(), nanos: z.number() }).optional(),
});
export const PatchBeginSchema = z.object({ call_id: z.string(), changes: z.record(z.string(), z.unknown()) });
export const PatchApprovalRequestSchema = z.object({ call_id: z.string(), changes: z.record(z.string(), z.unknown()), reason: z.string().nullish() });
export const PatchEndSchema = z.object({
  call_id: z.string(),
  success: z.boolean(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  status: z.string().optional(),
  changes: z.record(z.string(), z.unknown()).optional(),
});

const TokenUsageSchema = z.object({
  input_tokens: z.number(),
  cached_input_tokens: z.number(),
  cache_write_input_tokens: z.number().optional(),
  output_tokens: z.number(),
});
export const TokenCountSchema = z.object({ info: z.object({ last_token_usage: TokenUsageSchema, total_token_usage: TokenUsageSchema }).nullable() });

export const TaskCompleteSchema = z.object({ turn_id: z.string().optional(), last_agent_message: z.string().nullish() });
export const TurnAbortedSchema = z.object({ turn_id: z.string().optional(), reason: z.string() });
export const ErrorMsgSchema = z.object({ message: z.string(), codex_error_info: z.unknown().optional() });

export const ElicitationParamsSchema = z.object({
  message: z.string().optional(),
  threadId: z.string().optional(),
  codex_elicitation: z.string(),
  codex_mcp_tool_call_id: z.string().optional(),
  codex_call_id: z.string(),
  codex_command: z.array(z.string()).optional(),
  codex_cwd: z.string().optional(),
  codex_changes: z.record(z.string(), z.unknown()).optional(),
});

export const ToolCallResultSchema = z.object({
  isError: z.boolean().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()).optional(),
  structuredContent: z.object({ threadId: z.string().optional(), content: z.string().optional() }).loose().optional(),
});
export type ToolCallResult = z.infer<typeof ToolCallResultSchema>;

export const ToolsListResultSchema = z.object({ tools: z.array(z.object({ name: z.string() }).loose()) });

/** The text of a tool result (structuredContent.content, else the text parts). */
export function resultText(result: ToolCallResult): string {
  if (typeof result.structuredContent?.content === 'string') return result.structuredContent.content;
  return (result.content ?? [])
    .map((c) => c.text ?? '')
    .filter((t) => t !== '')
    .join('\n');
}

