/**
 * `createSession` options, validated with zod so a mistake reads as one clear sentence
 * (`AseError('INVALID_OPTIONS')`) instead of a failure deep inside an engine.
 */
import os from 'node:os';
import path from 'node:path';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';
import { DEFAULT_SESSION_CONFIG, type SessionConfig } from '../actors/session-context.js';
import type { Clock } from '../effects/clock.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import type { SessionStore } from '../effects/store/session-store.js';
import { SESSION_ID_PATTERN } from '../effects/store/file-store.js';
import type { EngineFactory } from '../engines/core/engine.js';
import { HostToolbox, type HostTool } from '../engines/core/host-tools.js';
import type { RecordTarget } from '../engines/core/recorder.js';
import type { EngineRegistry } from '../engines/core/registry.js';
import { ControlModeSchema } from '../events/session-input.js';
import { AseError } from '../errors.js';
import type { SessionNotice } from './notices.js';
import type { CanUseTool } from './permission-policy.js';
import type { EngineOptionsByAgent } from '../engines/default-registry.js';
import type { VerifyTurn } from './turn-verifier.js';

const configKeys = Object.keys(DEFAULT_SESSION_CONFIG) as (keyof SessionConfig)[];
const ConfigSchema = z
  .object(Object.fromEntries(configKeys.map((k) => [k, z.number().int().nonnegative().optional()])) as Record<keyof SessionConfig, z.ZodOptional<z.ZodNumber>>)
  .strict();

const isObjectWith = (...methods: string[]) => (v: unknown) =>
  typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function');

/** What a session id may be: it names files (`<id>.json`), so never a path. */
export const SessionIdSchema = z
  .string()
  // Ids name files (`<id>.json`): one starting with "." would be a directory ("." / "..") or a hidden file; the stores refuse them too.
  .regex(SESSION_ID_PATTERN, 'use letters, digits, ".", "_" or "-" (max 128), not starting with "."');

export const SessionOptionsSchema = z
  .object({
    /** Engine name in the registry: 'fake' (built in), later 'claude', 'codex', 'codex-mcp', 'acp'. */
    agent: z.string().min(1),
    /** The agent's working directory. */
    workDir: z.string().min(1),
    mode: ControlModeSchema.default('remote'),
    /** Stable id; reusing one continues that stored session. Default: a new UUID. */
    sessionId: SessionIdSchema.optional(),
    /**
     * The session that started this one (a sub-agent session; `openSessionTree().spawn()` sets it).
     * Stored with the session and fixed at creation: continuing a stored session may repeat it or
     * leave it out, not change it. It need not be open or stored (a parent removed later leaves an orphan).
     */
    parentId: SessionIdSchema.optional(),
    /** The parent's tool call that started this session (AgentEvent `parentCallId`); needs `parentId`. */
    parentCallId: z.string().min(1).max(256).optional(),
    /** Where the default file store and journal live. Default: $ASE_DATA_DIR or ~/.agent-session-engine. */
    dataDir: z.string().min(1).optional(),
    store: z
      .custom<SessionStore>(isObjectWith('load', 'save', 'acquire', 'renew', 'release'), 'store must implement SessionStore (load, save, acquire, renew, release)')
      .optional(),
    /**
     * How long this host's ownership lease holds without a renewal (renewed every third of it while
     * the session runs). Another host may take the session once it expired; a process of this host
     * that died is taken over at once. Default 30000.
     */
    leaseTtlMs: z.number().int().min(100).optional(),
    /**
     * Take the session even from a live owner (the other host's writes are then refused and it
     * stops). For an operator who knows the owner is gone; default false.
     */
    takeOver: z.boolean().optional(),
    journal: z.custom<TranscriptJournal>(isObjectWith('append', 'read', 'flush'), 'journal must implement TranscriptJournal').optional(),
    clock: z.custom<Clock>(isObjectWith('now', 'setTimeout', 'clearTimeout'), 'clock must implement Clock').optional(),
    registry: z.custom<EngineRegistry>(isObjectWith('get'), 'registry must be an EngineRegistry').optional(),
    /** Extra engines to register (on top of the registry's). */
    engines: z.array(z.custom<EngineFactory>(isObjectWith('create'), 'engines[] must be EngineFactory objects')).optional(),
    /** Passed to the engine on every start. */
    engineOptions: z.record(z.string(), z.unknown()).optional(),
    /** Overrides the agent executable. */
    bin: z.string().min(1).optional(),
    /** Largest `send()` text in UTF-8 bytes (default 1 MiB); a larger one is refused with `INVALID_INPUT`. */
    maxMessageBytes: z.number().int('maxMessageBytes must be a whole number of bytes').positive('maxMessageBytes must be at least 1').optional(),
    config: ConfigSchema.optional(),
    /** Aborting it stops the session (and its engine). */
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, 'signal must be an AbortSignal').optional(),
    /**
     * Records the agent traffic of every engine generation to a file path (created or truncated,
     * mode 0600) or a writable handle (anything with `write(text)`, left open), as in
     * docs/recording.md; `{to, argv}` also names the command line that recorded (`ase run`).
     * Replay it with `replayEngine(file)` or `ase replay FILE`.
     */
    record: z
      .union([
        z.string().min(1),
        z.custom<RecordTarget>(isObjectWith('write'), 'record must be a file path, an object with write(text), or {to, argv?}'),
        z.object({
          to: z.union([z.string().min(1), z.custom<RecordTarget>(isObjectWith('write'), 'record.to must be a file path or an object with write(text)')]),
          argv: z.array(z.string()).optional(),
        }),
      ])
      .optional(),
    /**
     * Receives every notice, including those emitted while the session is being created (the first
     * `status`; for a restored session, the cancellation of its old requests), which `on()` cannot see.
     */
    onNotice: z.custom<(notice: SessionNotice) => void>((v) => typeof v === 'function', 'onNotice must be a function').optional(),
    /**
     * The inline permission policy (the Agent SDK's `canUseTool`): called for each tool permission
     * request with `(toolName, input, {requestId, callId, signal})`, answers
     * `{behavior: 'allow', updatedInput?}` or `{behavior: 'deny', message?}` through the durable
     * ledger like `decide()` (the first answer wins: a remote client may answer first, the call's
     * `signal` then aborts). A throwing policy denies with its message. A `run()`'s own wins for its turn.
     */
    canUseTool: z.custom<CanUseTool>((v) => typeof v === 'function', 'canUseTool must be a function').optional(),
    /** The completion backstop (turn-verifier.ts): checks each turn the agent completed; the verdict is a `turn_verified` entry. */
    verifyTurn: z.custom<VerifyTurn>((v) => typeof v === 'function', 'verifyTurn must be a function').optional(),
    /**
     * Host tools the agent may call (docs/api.md "Host tools"): `{name, description, inputSchema,
     * handler, requiresPermission?}` each. Checked here (names, duplicates, schemas, handlers);
     * code, so never stored: a session continued later (or reopened by a supervisor) has the tools
     * it is given then.
     */
    tools: z
      .custom<HostTool<never>[]>()
      .superRefine((tools, ctx) => {
        for (const problem of HostToolbox.problems(tools)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
      })
      .optional(),
    /**
     * XState's inspection hook on the SessionActor (`@xstate.snapshot`, `@xstate.event`,
     * `@xstate.action`, ...): what `ase serve`'s inspector draws. Called synchronously; keep it cheap.
     */
    inspect: z.custom<(event: InspectionEvent) => void>((v) => typeof v === 'function', 'inspect must be a function').optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.parentId !== undefined && o.parentId === o.sessionId) ctx.addIssue({ code: 'custom', path: ['parentId'], message: 'a session is not its own parent' });
    if (o.parentCallId !== undefined && o.parentId === undefined) ctx.addIssue({ code: 'custom', path: ['parentCallId'], message: 'needs parentId (the session whose call it is)' });
  });

/** `engineOptions` for engine `A`: that engine's options, or any record for an engine this library does not ship. */
export type EngineOptionsFor<A extends string> = A extends keyof EngineOptionsByAgent ? EngineOptionsByAgent[A] : Record<string, unknown>;

/**
 * `createSession`'s options. Discriminated by `agent`: with a literal engine name (`'claude'`),
 * `engineOptions` is that engine's options type; `SessionOptions` alone (agent: string) takes any record.
 */
export type SessionOptions<A extends string = string> = Omit<z.input<typeof SessionOptionsSchema>, 'agent' | 'engineOptions'> & {
  /** Engine name in the registry: `fake` (built in), `claude`, `claude-print`, `codex`, `codex-mcp`, `codex-exec`, `acp`, or one of `engines`. */
  agent: A;
  /** Passed to the engine on every start; checked against the engine's options (`EngineOptionsByAgent`). */
  engineOptions?: EngineOptionsFor<A>;
};

/** The options of any built-in engine, as one union discriminated by `agent`. */
export type BuiltInSessionOptions = { [A in keyof EngineOptionsByAgent]: SessionOptions<A> }[keyof EngineOptionsByAgent];
export type ResolvedSessionOptions = z.output<typeof SessionOptionsSchema>;

export function parseSessionOptions(options: unknown): ResolvedSessionOptions {
  const parsed = SessionOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ');
    throw new AseError('INVALID_OPTIONS', `createSession: ${problems}`);
  }
  return parsed.data;
}

export function defaultDataDir(): string {
  return process.env['ASE_DATA_DIR'] ?? path.join(os.homedir(), '.agent-session-engine');
}
