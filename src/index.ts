/**
 * agent-session-engine: supervise coding-agent CLIs as actors.
 *
 * The small public surface: `createSession` and its handle; the vocabulary (AgentEvent, inputs,
 * effects) as zod schemas and types; the SessionActor machine for inspection and testing; the
 * runtime's pluggable parts (stores, journal, clock, engines).
 */
export { createSession } from './session/create-session.js';
export type { Session, SendOptions, DecideOptions } from './session/session.js';
export type { SessionNotice, SessionNoticeType, NoticeOf } from './session/notices.js';
export type { SessionSnapshot } from './session/snapshot.js';
export { SessionOptionsSchema, defaultDataDir, type SessionOptions } from './session/options.js';
export type { EventsOptions, LaggedNotice, StreamNotice } from './session/notice-stream.js';
export type { RunOptions, TurnResult, TurnMessage } from './session/turn-runner.js';
export type { WaitForOptions } from './session/wait-for.js';
export { AseError, isAseError } from './errors.js';
export { ERROR_CODES, type ErrorCode } from './events/error-codes.js';

export * from './events/index.js';
export { EffectSchema, type Effect, type EffectType, type EffectOf } from './events/effect.js';
export { CLIENT_ERROR_CODES, type ClientErrorCode } from './events/error-codes.js';
export { PermissionDecisionSchema, UserMessageSchema, type PermissionDecision, type UserMessage } from './events/engine-input.js';
export { TranscriptEntrySchema, type TranscriptEntry } from './events/transcript-entry.js';
export { type Ephemeral } from './events/ephemeral.js';

export { sessionMachine, type SessionEvent, type SessionMachine, type Stamped } from './actors/session.js';
/** xstate's pure transition functions, so `sessionMachine` can be stepped without installing xstate yourself. */
export { initialTransition, transition } from 'xstate';
export { DEFAULT_SESSION_CONFIG, type SessionConfig, type SessionContext, type SessionMachineInput } from './actors/session-context.js';
export { toMermaid } from './actors/diagram.js';
export { listTransitions, type TransitionInfo } from './actors/transitions.js';

export { SessionRuntime, type RuntimeOptions, type RuntimeObserver } from './runtime/session-runtime.js';
export { RealClock, SimulatedClock, type Clock, type TimerHandle } from './runtime/clock.js';
export type { SessionStore, SaveResult } from './runtime/store/session-store.js';
export { MemoryStore } from './runtime/store/memory-store.js';
export { FileStore, type FileStoreOptions } from './runtime/store/file-store.js';
export type { TranscriptJournal } from './runtime/journal/transcript-journal.js';
export { FileJournal, type FileJournalOptions } from './runtime/journal/file-journal.js';
export { MemoryJournal } from './runtime/journal/memory-journal.js';

export type { AgentEngine, EngineCapabilities, EngineContext, EngineFactory, EngineStartSpec, AgentEventListener } from './engines/core/engine.js';
export { EngineRegistry } from './engines/core/registry.js';
export { defaultRegistry } from './engines/default-registry.js';
export { fakeEngine, FakeEngine, FakeScriptSchema, type FakeScript, type FakeStep, type FakeTurn, type FakeAsk } from './engines/fake/index.js';
export { claudeEngine, type ClaudeEngineOptions } from './engines/claude/index.js';
export {
  codexEngine,
  codexMcpEngine,
  CodexAppServerEngine,
  CodexMcpEngine,
  CODEX_CAPABILITIES,
  CODEX_MCP_CAPABILITIES,
  type CodexAppServerEngineOptions,
  type CodexMcpEngineOptions,
  type CodexEngineOptions,
  type CodexApprovalPolicy,
  type CodexSandboxMode,
} from './engines/codex/index.js';
export {
  tailRollout,
  readRollout,
  RolloutTailer,
  EventDeduper,
  type RolloutTailerOptions,
  type RolloutCursor,
  type TailedEvent,
  type RolloutSnapshot,
  type DedupeKey,
} from './engines/codex/rollout/index.js';
export {
  acpEngine,
  AcpEngine,
  ACP_CAPABILITIES,
  ACP_PRESET_NAMES,
  ConfinedFs,
  TerminalManager,
  type AcpEngineOptions,
  type AcpFsOptions,
  type AcpTerminalOptions,
  type AcpPresetName,
  type AcpSessionInfo,
  type ConfinedFsOptions,
  type TerminalManagerOptions,
} from './engines/acp/index.js';
export type { TrafficRecord, TrafficTap } from './engines/transport/traffic.js';
