/**
 * Notices a session sends its clients that are not part of the durable transcript: thinking,
 * presence, open permission prompts (re-sent on reconnect), their resolution, and status.
 */
import { z } from 'zod';
import { ControlModeSchema } from './session-input.js';
import { PermissionStatusSchema, SessionPhaseSchema, type OpenPermission } from './session-state.js';

export const EphemeralSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('thinking'), active: z.boolean() }),
  z.object({ kind: z.literal('presence'), online: z.boolean() }),
  z.object({
    kind: z.literal('permission_prompt'),
    requestId: z.string(),
    toolName: z.string(),
    input: z.unknown(),
    callId: z.string().optional(),
    /** The sub-agent scope of the request (AgentEvent `parentCallId`): nest the prompt under that call. */
    parentCallId: z.string().optional(),
    suggestions: z.array(z.unknown()).optional(),
    deadline: z.number().optional(),
  }),
  z.object({ kind: z.literal('permission_resolved'), requestId: z.string(), status: PermissionStatusSchema }),
  z.object({
    kind: z.literal('status'),
    phase: SessionPhaseSchema,
    mode: ControlModeSchema,
    gen: z.number().int().nonnegative(),
    detail: z.string().optional(),
  }),
]);
export type Ephemeral = z.infer<typeof EphemeralSchema>;

/** The prompt for an open request, as the session first sends it and as it is re-sent to a client that joins later. */
export function permissionPromptOf(requestId: string, open: OpenPermission): Omit<Extract<Ephemeral, { kind: 'permission_prompt' }>, 'kind'> {
  return {
    requestId,
    toolName: open.toolName,
    input: open.input,
    ...(open.callId !== undefined && { callId: open.callId }),
    ...(open.parentCallId !== undefined && { parentCallId: open.parentCallId }),
    ...(open.suggestions !== undefined && { suggestions: open.suggestions }),
    ...(open.deadline !== undefined && { deadline: open.deadline }),
  };
}
