/**
 * agent-session-engine: supervise coding-agent CLIs as actors.
 *
 * The small public surface: `createSession` and its handle; the vocabulary (AgentEvent, inputs,
 * effects) as zod schemas and types; the SessionActor machine for inspection and testing; the
 * runtime's pluggable parts (stores, journal, clock, engines).
 */
export { createSession } from './session-handle.js';
export type { Session, SessionNotice, SessionNoticeType, NoticeOf, SessionSnapshot, SendOptions, DecideOptions } from './session-handle.js';
export { SessionOptionsSchema, type SessionOptions } from './session-options.js';
export { AseError, isAseError, ERROR_CODES, type ErrorCode } from './errors.js';

export * from './events/index.js';
export {
  EffectSchema,
  CLIENT_ERROR_CODES,
  type ClientErrorCode,
  PermissionDecisionSchema,
  TranscriptEntrySchema,
  UserMessageSchema,
  type Effect,
  type EffectType,
  type EffectOf,
  type Ephemeral,
  type PermissionDecision,
  type TranscriptEntry,
  type UserMessage,
} from './effects/effect.js';

export { sessionMachine, type SessionEvent, type SessionMachine, type Stamped } from './actors/session.js';
export { DEFAULT_SESSION_CONFIG, type SessionConfig, type SessionContext, type SessionMachineInput } from './actors/session-context.js';
export { toMermaid } from './actors/diagram.js';
export { listTransitions, type TransitionInfo } from './actors/transitions.js';

export { SessionRuntime, type RuntimeOptions, type RuntimeObserver } from './effects/runtime.js';
export { RealClock, SimulatedClock, type Clock, type TimerHandle } from './effects/clock.js';
export type { SessionStore, SaveResult } from './effects/store/session-store.js';
export { MemoryStore } from './effects/store/memory-store.js';
export { FileStore, type FileStoreOptions } from './effects/store/file-store.js';
export type { TranscriptJournal } from './effects/journal.js';
export { FileJournal, type FileJournalOptions } from './effects/journal-file.js';
export { MemoryJournal } from './effects/journal-memory.js';

export type { AgentEngine, EngineCapabilities, EngineContext, EngineFactory, EngineStartSpec, AgentEventListener } from './engines/engine.js';
export { EngineRegistry, defaultRegistry } from './engines/registry.js';
export { fakeEngine, FakeEngine, FakeScriptSchema, type FakeScript, type FakeStep, type FakeTurn, type FakeAsk } from './engines/fake/index.js';
export { claudeEngine, type ClaudeEngineOptions } from './engines/claude/index.js';
export {
  codexEngine,
  codexMcpEngine,
  CodexAppServerEngine,
  CodexMcpEngine,
  CodexSessionNotFoundError,
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
