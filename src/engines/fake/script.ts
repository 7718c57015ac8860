/**
 * The fake engine's script vocabulary: what a scripted agent does, as plain data (so a script can
 * also come from JSON, e.g. a fixture file or `engineOptions`). `FakeScriptSchema` validates it.
 */
import { z } from 'zod';
import { AgentEventSchema, TurnUsageSchema, type AgentEventBody, type TurnUsage } from '../../events/agent-event.js';

/** Every step may wait first; `afterMs` is relative to the previous step (or to the send). */
interface Timed {
  afterMs?: number;
}

export interface FakeAsk {
  /** Default: a generated `fake-perm-<gen>-<n>` (unique across generations, as the contract asks). */
  requestId?: string;
  toolName: string;
  input: unknown;
  /** Default: a generated `fake-call-<n>`. */
  callId?: string;
}

export type FakeStep =
  /** Emits one raw event (stamped by the engine). */
  | (Timed & { emit: AgentEventBody })
  /** Sugar: a few `text_delta`s, then an assistant `message` with one text block. */
  | (Timed & { text: string })
  /**
   * Emits `permission_request` and waits for the answer, then runs the matching branch before the
   * rest of the turn. Defaults: allow → `tool_result completed`, deny → `tool_result denied`.
   */
  | (Timed & { ask: FakeAsk; onAllow?: FakeStep[]; onDeny?: FakeStep[] })
  /**
   * Calls a host tool of the session (`createSession({tools})`) as an agent would: `tool_call`, the
   * handler run through `EngineContext.hostTools`, then `tool_result` with its content.
   */
  | (Timed & { callTool: { name: string; input: unknown; callId?: string } })
  /** Emits `exited`; the engine is dead. */
  | (Timed & { crash: { code?: number; signal?: string; reason?: string } })
  /** Nothing more for this turn: only abort/stop move it on (tests stall detection). */
  | (Timed & { stall: true })
  /** Ends the turn with `turn_complete`. */
  | (Timed & {
      complete: { status?: 'completed' | 'failed' | 'cancelled'; usage?: Partial<TurnUsage>; stopReason?: string };
    });

/** The steps run for one `send`. Steps ending without complete/crash/stall get a `turn_complete` appended. */
export type FakeTurn = FakeStep[];

export interface FakeScript {
  /** Delay before `session_identified` + `ready` (or the start failure). Default 0. */
  startDelayMs?: number;
  /** Reported in `session_identified`. Default: `spec.resumeToken` when resuming, else a new uuid. */
  resumeToken?: string;
  /** Fail to start: `error {kind: fatal}` then `exited {code}` instead of `ready`. */
  failStart?: { code?: number; message?: string };
  /** Delay between `stop()` and `exited`. Default 0. */
  stopDelayMs?: number;
  /** The agent ignores interrupts: `abort()` is recorded but the turn carries on. */
  ignoreAbort?: boolean;
  /** The agent ignores the stop request and must be killed: `exited {signal: SIGKILL}` after `killAfterMs`. */
  ignoreStop?: boolean;
  /** How long `stop()` waits before killing an agent that ignores it. Default 50. */
  killAfterMs?: number;
  /** No script at all: the test drives the engine with `inject()`. */
  manual?: boolean;
  /** The Nth send runs `turns[N]`; the last turn repeats; none → the echo turn. */
  turns?: FakeTurn[];
}

/** An event without `gen`/`at`: checked against the real AgentEvent schema with a dummy stamp. */
const AgentEventBodySchema = z.custom<AgentEventBody>(
  (value) =>
    typeof value === 'object' && value !== null && AgentEventSchema.safeParse({ ...value, gen: 0, at: 0 }).success,
  { message: 'not a valid AgentEvent body (without gen/at)' },
);

const afterMs = z.number().nonnegative().optional();

// Strict objects so a step mixing two kinds (`{ text, crash }`) is rejected rather than half-read.
export const FakeStepSchema: z.ZodType<FakeStep> = z.lazy(() =>
  z.union([
    z.strictObject({ afterMs, emit: AgentEventBodySchema }),
    z.strictObject({ afterMs, text: z.string() }),
    z.strictObject({
      afterMs,
      ask: z.strictObject({
        requestId: z.string().min(1).optional(),
        toolName: z.string(),
        input: z.unknown(),
        callId: z.string().optional(),
      }),
      onAllow: z.array(FakeStepSchema).optional(),
      onDeny: z.array(FakeStepSchema).optional(),
    }),
    z.strictObject({ afterMs, callTool: z.strictObject({ name: z.string().min(1), input: z.unknown(), callId: z.string().min(1).optional() }) }),
    z.strictObject({
      afterMs,
      crash: z.strictObject({ code: z.number().int().optional(), signal: z.string().optional(), reason: z.string().optional() }),
    }),
    z.strictObject({ afterMs, stall: z.literal(true) }),
    z.strictObject({
      afterMs,
      complete: z.strictObject({
        status: z.enum(['completed', 'failed', 'cancelled']).optional(),
        usage: TurnUsageSchema.partial().optional(),
        stopReason: z.string().optional(),
      }),
    }),
  ]),
);

export const FakeScriptSchema = z.strictObject({
  startDelayMs: z.number().nonnegative().optional(),
  resumeToken: z.string().min(1).optional(),
  failStart: z.strictObject({ code: z.number().int().optional(), message: z.string().optional() }).optional(),
  stopDelayMs: z.number().nonnegative().optional(),
  ignoreAbort: z.boolean().optional(),
  ignoreStop: z.boolean().optional(),
  killAfterMs: z.number().nonnegative().optional(),
  manual: z.boolean().optional(),
  turns: z.array(z.array(FakeStepSchema)).optional(),
});

// Compile-time check that the schema and the hand-written type agree.
const _schemaMatchesType: z.ZodType<FakeScript> = FakeScriptSchema;
void _schemaMatchesType;

/** Usage reported by a turn that does not specify its own. */
export const SMALL_USAGE: TurnUsage = Object.freeze({
  inputTokens: 10,
  outputTokens: 20,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0.0001,
});

/** What a send runs when the script has no turns: thinking, "echo: <text>", complete. */
export function echoTurn(text: string): FakeTurn {
  return [{ emit: { type: 'thinking', active: true } }, { text: `echo: ${text}` }, { complete: {} }];
}
