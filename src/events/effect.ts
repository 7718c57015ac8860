/**
 * Effects: the only way the SessionActor acts on the world. The machine emits them as data
 * (`emit(effect)`); the effect runtime carries them out. Keeping them declarative is what lets
 * the machine be tested with the pure `transition()` API and walked by the model-based harness.
 */
import { z } from 'zod';
import { ClientErrorCodeSchema } from './error-codes.js';
import { EphemeralSchema } from './ephemeral.js';
import { EngineSettingsSchema, PermissionDecisionSchema, UserMessageSchema } from './engine-input.js';
import { ControlModeSchema } from './session-input.js';
import { PersistedSessionSchema } from './session-state.js';
import { TranscriptEntrySchema } from './transcript-entry.js';

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
    /** The session's runtime choices (`setModel` / `setPermissionMode`); they win over `options`. */
    model: z.string().optional(),
    permissionMode: z.string().optional(),
  }),
  z.object({ type: z.literal('engine.stop'), gen }),
  z.object({ type: z.literal('engine.send'), gen, message: UserMessageSchema }),
  z.object({ type: z.literal('engine.abort'), gen }),
  /** A new model or permission mode for the live engine (performed once the choice is stored). */
  z.object({ type: z.literal('engine.configure'), gen, settings: EngineSettingsSchema }),
  /** Ask the engine whether its resumed agent session already holds a message a crash left unconfirmed. */
  z.object({ type: z.literal('engine.check_delivery'), gen, message: UserMessageSchema }),
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
