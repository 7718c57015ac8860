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
export const ClientOnlineInputSchema = z.object({ type: z.literal('client_online') });
export const ClientOfflineInputSchema = z.object({ type: z.literal('client_offline') });
export const StopInputSchema = z.object({ type: z.literal('stop') });

export const SessionInputSchema = z.discriminatedUnion('type', [
  SendInputSchema,
  AbortInputSchema,
  SwitchModeInputSchema,
  DecideInputSchema,
  ClientOnlineInputSchema,
  ClientOfflineInputSchema,
  StopInputSchema,
]);
export type SessionInput = z.infer<typeof SessionInputSchema>;
export type SessionInputType = SessionInput['type'];
