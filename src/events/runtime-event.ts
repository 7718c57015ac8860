/**
 * What the effect runtime reports back to the SessionActor about the effects it carried out:
 * a timer came due, a persist succeeded, or the store held a newer version (compare-and-set lost).
 */
import { z } from 'zod';
import { PersistedSessionSchema } from './session-state.js';

export const TimerFiredEventSchema = z.object({ type: z.literal('timer_fired'), id: z.string() });
export const PersistOkEventSchema = z.object({ type: z.literal('persist_ok'), version: z.number().int().nonnegative() });
export const PersistConflictEventSchema = z.object({
  type: z.literal('persist_conflict'),
  /** The version the store holds now. */
  version: z.number().int().nonnegative(),
  /** What the store holds now (another writer's state), if it could be read. */
  stored: PersistedSessionSchema.optional(),
});
export const PersistFailedEventSchema = z.object({ type: z.literal('persist_failed'), message: z.string() });
/**
 * The answer to `engine.check_delivery`: whether the agent session the engine resumed already holds
 * the message (`null`: the engine cannot tell). Stamped with the generation that was asked.
 */
export const DeliveryCheckedEventSchema = z.object({
  type: z.literal('delivery_checked'),
  gen: z.number().int().positive(),
  localId: z.string(),
  received: z.boolean().nullable(),
});

export const RuntimeEventSchema = z.discriminatedUnion('type', [
  TimerFiredEventSchema,
  PersistOkEventSchema,
  PersistConflictEventSchema,
  PersistFailedEventSchema,
  DeliveryCheckedEventSchema,
]);
export type RuntimeEvent = z.infer<typeof RuntimeEventSchema>;
