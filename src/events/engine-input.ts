/**
 * What the session hands an engine: a user message for a turn, the answer to a permission
 * request, and a change of model or permission mode. Engines receive these through `send` /
 * `answerPermission` / `configure`; effects carry them as data.
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

/**
 * A change of the session's runtime settings (`setModel` / `setPermissionMode`). Only the keys that
 * change are present; `null` means back to what the engine started with (its `engineOptions`, or
 * the agent's own default). The permission mode is in the engine's own words (see docs/engines.md).
 */
export const EngineSettingsSchema = z.object({
  model: z.string().nullable().optional(),
  permissionMode: z.string().nullable().optional(),
});
export type EngineSettings = z.infer<typeof EngineSettingsSchema>;
