/**
 * Effects: the only way the SessionActor acts on the world. The machine emits them as data
 * (`emit(effect)`); the effect runtime carries them out. Keeping them declarative is what lets
 * the machine be tested with the pure `transition()` API and walked by the model-based harness.
 */
import { z } from 'zod';
import { ControlModeSchema } from '../events/session-input.js';
import { PersistedSessionSchema, PermissionStatusSchema, SessionPhaseSchema } from '../events/session-state.js';

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

export const TranscriptEntrySchema = z.object({
  ts: z.number(),
  sessionId: z.string(),
  agent: z.string(),
  gen: z.number().int().nonnegative(),
  /** Unique within the session and stable across replays: `<instance>.<gen>-<seq>` (see SessionMachineInput.instance). */
  eventId: z.string(),
  type: z.string(),
  payload: z.unknown(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

export const EphemeralSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('thinking'), active: z.boolean() }),
  z.object({ kind: z.literal('presence'), online: z.boolean() }),
  z.object({
    kind: z.literal('permission_prompt'),
    requestId: z.string(),
    tool: z.string(),
    input: z.unknown(),
    callId: z.string().optional(),
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

export const CLIENT_ERROR_CODES = [
  'PERMISSION_NOT_FOUND',
  'PERMISSION_ALREADY_DECIDED',
  'DUPLICATE_SEND',
  'NOTHING_TO_ABORT',
  'SESSION_FAILED',
  'SESSION_STOPPED',
  'RESUME_FORKED',
  'ENGINE_ERROR',
  'PERSIST_FAILED',
] as const;
export const ClientErrorCodeSchema = z.enum(CLIENT_ERROR_CODES);
export type ClientErrorCode = z.infer<typeof ClientErrorCodeSchema>;

const gen = z.number().int().positive();

/** Ephemeral variants share `type: 'ephemeral.emit'` and differ by `kind`, hence a plain union. */
export const EffectSchema = z.union([
  z.object({
    type: z.literal('engine.start'),
    gen,
    mode: ControlModeSchema,
    agent: z.string(),
    workDir: z.string(),
    resumeToken: z.string().optional(),
    options: z.record(z.string(), z.unknown()),
  }),
  z.object({ type: z.literal('engine.stop'), gen }),
  z.object({ type: z.literal('engine.send'), gen, message: UserMessageSchema }),
  z.object({ type: z.literal('engine.abort'), gen }),
  z.object({
    type: z.literal('engine.answer_permission'),
    gen,
    requestId: z.string(),
    decision: PermissionDecisionSchema,
  }),
  z.object({ type: z.literal('state.persist'), state: PersistedSessionSchema, expectedVersion: z.number().int().nonnegative() }),
  z.object({ type: z.literal('transcript.emit'), entry: TranscriptEntrySchema }),
  ...EphemeralSchema.options.map((o) => o.extend({ type: z.literal('ephemeral.emit') })),
  z.object({ type: z.literal('timer.set'), id: z.string(), deadline: z.number() }),
  z.object({ type: z.literal('timer.cancel'), id: z.string() }),
  /** A client input was refused; nothing was applied. */
  z.object({
    type: z.literal('client.error'),
    code: ClientErrorCodeSchema,
    message: z.string(),
    requestId: z.string().optional(),
    localId: z.string().optional(),
  }),
]);
export type Effect = z.infer<typeof EffectSchema>;
export type EffectType = Effect['type'];
export type EffectOf<T extends EffectType> = Extract<Effect, { type: T }>;
export type EphemeralEffect = EffectOf<'ephemeral.emit'>;
