/**
 * What the session hands an engine: a user message for a turn, and the answer to a permission
 * request. Engines receive these through `send` / `answerPermission`; effects carry them as data.
 */
import { z } from 'zod';

export const PermissionDecisionSchema = z.discriminatedUnion('behavior', [
  z.object({
    behavior: z.literal('allow'),
    updatedInput: z.unknown().optional(),
    /** Permission rule changes to apply with this approval (e.g. "always allow this command"); engine-specific shape. */
    updatedPermissions: z.array(z.unknown()).optional(),
  }),
  z.object({
    behavior: z.literal('deny'),
    message: z.string().optional(),
    /** Stop the turn as well (a timed-out or cancelled request), not only this tool call. */
    interrupt: z.boolean(),
  }),
]);
export type PermissionDecision = z.infer<typeof PermissionDecisionSchema>;

export const UserMessageSchema = z.object({ localId: z.string(), text: z.string() });
export type UserMessage = z.infer<typeof UserMessageSchema>;
