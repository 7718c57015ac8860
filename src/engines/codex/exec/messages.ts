/**
 * The `codex exec --json` event stream (the one `@openai/codex-sdk` reads): one JSON object per
 * stdout line, `ThreadEvent = thread.started | turn.started | turn.completed | turn.failed |
 * item.started | item.updated | item.completed | error` (reference codex.md §7.1). Parsed leniently:
 * unknown fields are kept, unknown types are skipped by the translator.
 */
import { z } from 'zod';

export const ExecUsageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  cached_input_tokens: z.number().optional(),
  cache_write_input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  reasoning_output_tokens: z.number().optional(),
});

/** `item_<n>` ids are local to one exec process: the translator prefixes them per turn. */
export const ExecItemSchema = z.looseObject({ id: z.string(), type: z.string() });
export type ExecItem = z.infer<typeof ExecItemSchema>;

export const ExecEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('thread.started'), thread_id: z.string() }),
  z.looseObject({ type: z.literal('turn.started') }),
  z.looseObject({ type: z.literal('turn.completed'), usage: ExecUsageSchema.optional() }),
  z.looseObject({ type: z.literal('turn.failed'), error: z.looseObject({ message: z.string() }).optional() }),
  z.looseObject({ type: z.literal('item.started'), item: ExecItemSchema }),
  z.looseObject({ type: z.literal('item.updated'), item: ExecItemSchema }),
  z.looseObject({ type: z.literal('item.completed'), item: ExecItemSchema }),
  z.looseObject({ type: z.literal('error'), message: z.string() }),
]);
export type ExecEvent = z.infer<typeof ExecEventSchema>;

export const CommandExecutionSchema = z.looseObject({
  type: z.literal('command_execution'),
  command: z.string(),
  aggregated_output: z.string().nullish(),
  exit_code: z.number().nullish(),
  status: z.string(),
});
export const FileChangeSchema = z.looseObject({ type: z.literal('file_change'), changes: z.array(z.unknown()), status: z.string() });
export const McpToolCallSchema = z.looseObject({
  type: z.literal('mcp_tool_call'),
  server: z.string(),
  tool: z.string(),
  arguments: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  status: z.string(),
});
export const TextItemSchema = z.looseObject({ text: z.string() });
