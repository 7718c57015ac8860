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

/**
 * State files written before the tool's one name (`toolName`) kept it as `tool`: read them as if
 * written today, so an upgrade never strands an open permission request.
 */
function legacyToolField(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('tool' in value) || 'toolName' in value) return value;
  const { tool, ...rest } = value as { tool: unknown };
  return { ...rest, toolName: tool };
}

export const OpenPermissionSchema = z.preprocess(legacyToolField, z.object({
  toolName: z.string(),
  input: z.unknown(),
  gen: z.number().int().nonnegative(),
  createdAt: z.number(),
  callId: z.string().optional(),
  /** A sub-agent's request: the call that started the sub-agent (AgentEvent `parentCallId`). */
  parentCallId: z.string().optional(),
  suggestions: z.array(z.unknown()).optional(),
  deadline: z.number().optional(),
}));
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

/**
 * The turn in flight when the state was written: its message was handed to the engine (or is about
 * to be: the runtime sends it only once this record is stored). A restore that finds one knows the
 * host stopped mid-turn and ends it `interrupted`.
 */
export const InFlightTurnSchema = z.object({
  localId: z.string(),
  text: z.string(),
  gen: z.number().int().nonnegative(),
  startedAt: z.number(),
  /** The transcript id of its `user_message` entry, so a restore can tell whether the journal has it. */
  eventId: z.string(),
});
export type InFlightTurn = z.infer<typeof InFlightTurnSchema>;

/**
 * A message whose turn a host crash interrupted and which may or may not have reached the agent:
 * the next remote engine is asked (`wasReceived`) before anything else is sent.
 */
export const UnconfirmedSendSchema = z.object({
  localId: z.string(),
  text: z.string(),
  /** The generation that was given it. */
  gen: z.number().int().nonnegative(),
});
export type UnconfirmedSend = z.infer<typeof UnconfirmedSendSchema>;

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
  /** Idle past `hibernateAfterMs`: the agent is stopped (or stopping); the next send resumes it. */
  'hibernated',
  'stopping',
  'stopped',
]);
export type SessionPhase = z.infer<typeof SessionPhaseSchema>;

/**
 * What locates the session's agent CLI: the session's `bin` and the engine options that pick the
 * executable (`bin`, `preset`, `command`, `args`). Stored so a later open runs the same agent.
 */
export const AgentLocatorSchema = z.object({
  bin: z.string().min(1).optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});
export type AgentLocator = z.infer<typeof AgentLocatorSchema>;

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
  /** The turn in flight (absent when none). */
  turn: InFlightTurnSchema.optional(),
  /** A message whose delivery a crash left uncertain (absent when none). */
  unconfirmed: UnconfirmedSendSchema.optional(),
  /**
   * The model chosen with `setModel` (absent: none, the engine options' one applies). Every engine
   * start carries it, so it outlives restarts, crashes and mode switches. Optional, so state files
   * written before it existed load as "no choice".
   */
  model: z.string().optional(),
  /** The permission mode chosen with `setPermissionMode`, in the engine's own words (absent: none). */
  permissionMode: z.string().optional(),
  /**
   * The session that started this one (a sub-agent session), fixed when it is created. Optional,
   * so state files written before it existed load as "no parent".
   */
  parentId: z.string().min(1).optional(),
  /** The parent's tool call that started it, when there is one (AgentEvent `parentCallId`). */
  parentCallId: z.string().min(1).optional(),
  /** Where its agent CLI is (absent: found in the usual places at each start). Optional for older files. */
  agentLocator: AgentLocatorSchema.optional(),
  updatedAt: z.number(),
});
export type PersistedSession = z.infer<typeof PersistedSessionSchema>;

/** A stored session and its compare-and-set version. */
export interface VersionedSession {
  version: number;
  state: PersistedSession;
}
