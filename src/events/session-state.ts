/**
 * The durable part of a session: what `state.persist` writes and a restart reads back.
 * Engines and timers are not in it (they are resources of the runtime): a restore starts a new
 * generation, and open permission requests of the old generation end `cancelled`.
 */
import { z } from 'zod';
import { TurnUsageSchema } from './agent-event.js';
import { ControlModeSchema } from './session-input.js';

export const PermissionStatusSchema = z.enum(['approved', 'denied', 'cancelled', 'timed_out', 'local']);
export type PermissionStatus = z.infer<typeof PermissionStatusSchema>;

export const OpenPermissionSchema = z.object({
  tool: z.string(),
  input: z.unknown(),
  gen: z.number().int().nonnegative(),
  createdAt: z.number(),
  callId: z.string().optional(),
  suggestions: z.array(z.unknown()).optional(),
  deadline: z.number().optional(),
});
export type OpenPermission = z.infer<typeof OpenPermissionSchema>;

export const CompletedPermissionSchema = z.object({
  status: PermissionStatusSchema,
  decidedAt: z.number(),
  gen: z.number().int().nonnegative(),
  reason: z.string().optional(),
});
export type CompletedPermission = z.infer<typeof CompletedPermissionSchema>;

export const QueuedSendSchema = z.object({
  localId: z.string(),
  text: z.string(),
  queuedAt: z.number(),
});
export type QueuedSend = z.infer<typeof QueuedSendSchema>;

export const SessionUsageSchema = TurnUsageSchema.extend({
  costUsd: z.number().nonnegative(),
  turns: z.number().int().nonnegative(),
});
export type SessionUsage = z.infer<typeof SessionUsageSchema>;

export const SessionPhaseSchema = z.enum([
  'starting',
  'local',
  'idle',
  'running',
  'interrupting',
  'switching',
  'recovering',
  'failed',
  'stopping',
  'stopped',
]);
export type SessionPhase = z.infer<typeof SessionPhaseSchema>;

export const PersistedSessionSchema = z.object({
  schemaVersion: z.literal(1),
  sessionId: z.string().min(1),
  agent: z.string().min(1),
  workDir: z.string().min(1),
  mode: ControlModeSchema,
  phase: SessionPhaseSchema,
  gen: z.number().int().nonnegative(),
  resumeToken: z.string().optional(),
  transcriptPath: z.string().optional(),
  queue: z.array(QueuedSendSchema),
  requests: z.record(z.string(), OpenPermissionSchema),
  completed: z.record(z.string(), CompletedPermissionSchema),
  usage: SessionUsageSchema,
  /** Local ids already delivered to an engine, newest last (bounded), so a retried send is not repeated. */
  deliveredIds: z.array(z.string()),
  updatedAt: z.number(),
});
export type PersistedSession = z.infer<typeof PersistedSessionSchema>;

/** A stored session and its compare-and-set version. */
export interface VersionedSession {
  version: number;
  state: PersistedSession;
}
