/**
 * Session inputs: what clients (a phone, a web page, an IDE panel, the CLI) ask of a session.
 * The runtime stamps each with `at` before the SessionActor sees it, so the machine stays pure.
 */
import { z } from 'zod';

export const ControlModeSchema = z.enum(['local', 'remote']);
export type ControlMode = z.infer<typeof ControlModeSchema>;

export const SendInputSchema = z.object({
  type: z.literal('send'),
  text: z.string().min(1, 'text must not be empty'),
  /** Client-chosen id; a second send with the same id is rejected, so retries never duplicate. */
  localId: z.string().min(1),
});
export const AbortInputSchema = z.object({ type: z.literal('abort') });
export const SwitchModeInputSchema = z.object({ type: z.literal('switch_mode'), to: ControlModeSchema });
export const DecideInputSchema = z.object({
  type: z.literal('decide'),
  requestId: z.string().min(1),
  decision: z.enum(['allow', 'deny']),
  updatedInput: z.unknown().optional(),
  /** With `allow`: rule changes the agent should apply (its own format, e.g. Claude's `addRules`). */
  updatedPermissions: z.array(z.unknown()).optional(),
  message: z.string().optional(),
});
/**
 * A model or permission-mode name: what the engine's own option takes (Claude `--model`, Codex
 * `model`, an ACP model id). It becomes a command-line value on restarts, so it may not start
 * with `-` (it would read as a flag) and holds no whitespace or control characters.
 */
export const SettingNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .regex(/^[^\s\p{Cc}-][^\s\p{Cc}]*$/u, 'must not start with "-" or hold whitespace or control characters');

/** Changes the model for the rest of the session (`null`: back to the engine options' model, or the agent's default). */
export const SetModelInputSchema = z.object({ type: z.literal('set_model'), model: SettingNameSchema.nullable() });
/**
 * Changes the permission mode for the rest of the session, in the engine's own words (Claude
 * `permissionMode`, Codex `approvalPolicy`, an ACP `modeId`); `null`: back to the engine options' one.
 */
export const SetPermissionModeInputSchema = z.object({ type: z.literal('set_permission_mode'), mode: SettingNameSchema.nullable() });
export const ClientOnlineInputSchema = z.object({ type: z.literal('client_online') });
export const ClientOfflineInputSchema = z.object({ type: z.literal('client_offline') });
export const StopInputSchema = z.object({ type: z.literal('stop') });
/**
 * The completion backstop's verdict on a turn the agent ended (createSession `verifyTurn`): recorded
 * as a durable `turn_verified` transcript entry. `verified` only when the host's own check passed
 * after an authoritative turn end; an agent's claim of completion never counts alone.
 */
export const RecordVerificationInputSchema = z.object({
  type: z.literal('record_verification'),
  localId: z.string().min(1),
  verdict: z.enum(['verified', 'unverified']),
  reason: z.string(),
});

export const SessionInputSchema = z.discriminatedUnion('type', [
  SendInputSchema,
  AbortInputSchema,
  SwitchModeInputSchema,
  DecideInputSchema,
  SetModelInputSchema,
  SetPermissionModeInputSchema,
  ClientOnlineInputSchema,
  ClientOfflineInputSchema,
  StopInputSchema,
  RecordVerificationInputSchema,
]);
export type SessionInput = z.infer<typeof SessionInputSchema>;
export type SessionInputType = SessionInput['type'];
