/**
 * agent-session-engine: supervise coding-agent CLIs as actors.
 *
 * This file is the package root (`agent-session-engine`). Any export added here becomes public
 * API: list every name explicitly (named exports only, never a star re-export), and document it in
 * docs/api.md (test/unit/docs.test.ts checks). Engine-specific extras live in the subpath entries
 * beside this file: src/claude.ts, src/codex.ts, src/acp.ts.
 *
 * What is here: `createSession` and the session types; the error family; the vocabulary (AgentEvent,
 * inputs, persisted state, effects) as zod schemas and types; the SessionActor for inspection and
 * testing; the runtime's pluggable parts (clocks, stores, journals); the engine contract for custom
 * engines, and the built-in engine factories with their options.
 */

// Sessions
export { createSession } from './session/create-session.js';
export type { Session, SendOptions, SendReceipt, DecideOptions } from './session/session.js';
export type { SessionNotice, SessionNoticeType, NoticeOf } from './session/notices.js';
export type { SessionSnapshot } from './session/snapshot.js';
export { SessionOptionsSchema, defaultDataDir, type BuiltInSessionOptions, type EngineOptionsFor, type SessionOptions } from './session/options.js';
export type { EngineOptionsByAgent } from './engines/default-registry.js';
export type { ErrorDetails, ErrorDetailsMap } from './events/error-details.js';
export type { EventsOptions, LaggedNotice, StreamNotice } from './session/notice-stream.js';
export type { RunOptions, TurnResult, TurnMessage } from './session/turn-runner.js';
export type { WaitForOptions } from './session/wait-for.js';
export type { StreamedTurn } from './session/turn-stream.js';
export type { CanUseTool, CanUseToolContext, PermissionResult } from './session/permission-policy.js';

// Many sessions in one host
export {
  createSupervisor,
  type Supervisor,
  type SupervisorOptions,
  type SupervisedSessionOptions,
  type OpenSessionOptions,
  type SupervisedSessionInfo,
  type SupervisedNotice,
  type SessionSnapshotNotice,
  type SupervisorListOptions,
} from './session/supervisor.js';
// Sub-agent sessions entered without forking (issue 15)
export { openSessionTree, type ResultDelivery, type SessionTree, type SessionTreeOptions, type SpawnSessionOptions, type TreeNode, type TreeNodeState, type TreeRecord } from './session/session-tree.js';
export { findSessionTree, sessionTreeFile } from './session/session-tree-file.js';
export { subAgentTools, type SubAgentToolsOptions } from './session/sub-agent-tools.js';
export { typedResultDelivery, pasteSafe } from './session/typed-result.js';
export { changeTreeOf } from './session/tree-spawn.js';
export { watchSessionTrees, type SessionTreeWatch, type SessionTreeWatchOptions } from './session/session-tree-watch.js';

// Errors
export { AseError, AgentError, isAseError, type AseErrorOptions, type AgentErrorInit } from './errors.js';
export { ERROR_CODES, CLIENT_ERROR_CODES, type ErrorCode, type ClientErrorCode } from './events/error-codes.js';

// Vocabulary: what engines report
export {
  AgentEventSchema,
  ReadyEventSchema,
  ExitedEventSchema,
  SessionIdentifiedEventSchema,
  ActivityEventSchema,
  ThinkingEventSchema,
  TextDeltaEventSchema,
  MessageEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  PermissionRequestEventSchema,
  PermissionCancelledEventSchema,
  TurnCompleteEventSchema,
  ErrorEventSchema,
  WarningEventSchema,
  AGENT_EVENT_TYPES,
  isAgentEventType,
  ACTIVITY_INTERVAL_MS,
  ContentBlockSchema,
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
  TurnUsageSchema,
  ZERO_USAGE,
  ErrorKindSchema,
  ERROR_KINDS,
  type AgentEvent,
  type AgentEventType,
  type AgentEventOf,
  type AgentEventBody,
  type ContentBlock,
  type TurnUsage,
  type ErrorKind,
} from './events/agent-event.js';

// Vocabulary: what clients ask
export {
  SessionInputSchema,
  SendInputSchema,
  AbortInputSchema,
  SwitchModeInputSchema,
  DecideInputSchema,
  SetModelInputSchema,
  SetPermissionModeInputSchema,
  SettingNameSchema,
  ClientOnlineInputSchema,
  ClientOfflineInputSchema,
  StopInputSchema,
  ControlModeSchema,
  type SessionInput,
  type SessionInputType,
  type ControlMode,
} from './events/session-input.js';

// Vocabulary: persisted state
export {
  PersistedSessionSchema,
  SessionPhaseSchema,
  PermissionStatusSchema,
  OpenPermissionSchema,
  CompletedPermissionSchema,
  QueuedSendSchema,
  SessionUsageSchema,
  type PersistedSession,
  type VersionedSession,
  type SessionPhase,
  type PermissionStatus,
  type OpenPermission,
  type CompletedPermission,
  type QueuedSend,
  type SessionUsage,
} from './events/session-state.js';

// Vocabulary: what the runtime reports to the actor, and what the actor emits
export { RuntimeEventSchema, type RuntimeEvent } from './events/runtime-event.js';
export { EffectSchema, type Effect, type EffectType, type EffectOf } from './events/effect.js';
export { EphemeralSchema, type Ephemeral } from './events/ephemeral.js';
export { EngineSettingsSchema, PermissionDecisionSchema, UserMessageSchema, type EngineSettings, type PermissionDecision, type UserMessage } from './events/engine-input.js';
export { TranscriptEntrySchema, type TranscriptEntry } from './events/transcript-entry.js';
export { messageText, answerText, type MessageWithText } from './events/message-text.js';

// The SessionActor
export { sessionMachine, type SessionEvent, type SessionMachine, type Stamped } from './actors/session.js';
/** xstate's pure transition functions, so `sessionMachine` can be stepped without installing xstate yourself. */
export { initialTransition, transition } from 'xstate';
export {
  DEFAULT_SESSION_CONFIG,
  type SessionConfig,
  type SessionContext,
  type SessionMachineInput,
  type TurnState,
  type EngineErrorInfo,
} from './actors/session-context.js';
export { toMermaid } from './actors/diagram.js';
export { listTransitions, type TransitionInfo } from './actors/transitions.js';

// The runtime and its pluggable parts
export { SessionRuntime, type RuntimeOptions, type RuntimeObserver } from './effects/session-runtime.js';
export { RealClock, SimulatedClock, type Clock, type TimerHandle } from './effects/clock.js';
export type { SessionStore, SaveResult, Lease, LeaseOwner, AcquireOptions, SessionOwnerInfo } from './effects/store/session-store.js';
export { MemoryStore, type MemoryStoreOptions } from './effects/store/memory-store.js';
export { FileStore, type FileStoreOptions } from './effects/store/file-store.js';
export type { TranscriptJournal } from './effects/journal/transcript-journal.js';
export { FileJournal, type FileJournalOptions } from './effects/journal/file-journal.js';
export { MemoryJournal } from './effects/journal/memory-journal.js';
export { DEFAULT_MAX_MESSAGE_BYTES } from './effects/input-limits.js';
export { ProcessRegistry, type ProcessRegistryOptions, type ProcessRecord } from './effects/process-registry.js';
export { reapOrphanedProcesses, type ReapReport, type ReapOptions } from './effects/process-reaper.js';

// The engine contract (for custom engines) and the registry
export type { AgentEngine, EngineCapabilities, EngineContext, EngineFactory, EngineStartSpec, AgentEventListener } from './engines/core/engine.js';
export type { ResumeCheck, ResumeTarget } from './engines/core/resume-check.js';
export { EngineRegistry } from './engines/core/registry.js';
export {
  defineTool,
  displayToolName,
  hostToolName,
  HostToolbox,
  HostToolCalls,
  HOST_TOOL_NAME,
  HOST_TOOL_SERVER,
  textResult,
  type HostTool,
  type HostToolCallOptions,
  type HostToolContent,
  type HostToolContext,
  type HostToolProblem,
  type HostToolResult,
  type HostToolReturn,
  type HostToolSpec,
  type JsonSchema,
} from './engines/core/host-tools.js';
export { answerMcpMessage, mcpCallId, HOST_MCP_PROTOCOL_VERSION, type HostMcpOptions, type JsonRpcResponse } from './engines/core/host-tools-mcp.js';
// The completion backstop (createSession `verifyTurn`)
export type { VerifyTurn, TurnToVerify, TurnVerdict } from './session/turn-verifier.js';
export {
  RUNTIME_TIERS,
  SIGNAL_AUTHORITIES,
  TIER_SIGNALS,
  UNDECLARED_TIER,
  engineTier,
  tierOf,
  isAuthoritative,
  type RuntimeTier,
  type SignalAuthority,
  type TierSignal,
  type EngineTier,
} from './engines/core/runtime-tier.js';
export { defaultRegistry } from './engines/default-registry.js';
export type { TrafficRecord, TrafficTap } from './engines/transport/traffic.js';

// Finding agent CLIs (the same four places for every engine) and `ase doctor`'s report
export { findAgent, searchAgent, type AgentCliSpec, type AgentLocation, type AgentSearch, type AgentSearchOptions, type AgentSource } from './engines/core/agent-discovery.js';
export { diagnoseAgent, type AgentDiagnosis } from './engines/core/agent-diagnosis.js';
export type { ShutdownOptions } from './engines/transport/process-supervisor.js';
export type { ProcessObserver, ProcessWatch, SpawnedProcessInfo, DescendantInfo } from './engines/transport/process-observer.js';
export { setHostSignalHandling } from './engines/transport/host-signals.js';

// The built-in engines: factories and their options (engine classes and extras: the subpath entries)
export { fakeEngine, FakeEngine, FakeScriptSchema, type FakeScript, type FakeStep, type FakeTurn, type FakeAsk } from './engines/fake/index.js';
export { claudeEngine, type ClaudeEngineOptions } from './engines/claude/index.js';
// Driven tier (one-shot JSON modes, one process per turn)
export { claudePrintEngine } from './engines/claude/index.js';
export { codexExecEngine, type CodexExecEngineOptions } from './engines/codex/index.js';
export {
  codexEngine,
  codexMcpEngine,
  type CodexEngineOptions,
  type CodexAppServerEngineOptions,
  type CodexMcpEngineOptions,
  type CodexApprovalPolicy,
  type CodexSandboxMode,
} from './engines/codex/index.js';
export {
  acpEngine,
  ACP_PRESET_NAMES,
  type AcpEngineOptions,
  type AcpFsOptions,
  type AcpTerminalOptions,
  type AcpPresetName,
} from './engines/acp/index.js';

// The agent's session state as AgentEvents (plan, mode, commands, context usage: architecture.md §10)
export {
  PlanEventSchema,
  PlanEntrySchema,
  AgentModeEventSchema,
  AvailableCommandsEventSchema,
  AgentCommandSchema,
  ContextUsageEventSchema,
  type PlanEntry,
  type AgentCommand,
} from './events/agent-event.js';

// Record and replay agent traffic (docs/recording.md)
export { replayEngine, type ReplayEngineFactory, type ReplayEngineOptions } from './engines/replay-engine.js';
export {
  readRecording,
  parseRecording,
  recordedGenerations,
  RecordingHeaderSchema,
  RecordingRecordSchema,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  REDACTED,
  type Recording,
  type RecordingHeader,
  type RecordingRecord,
  type RecordedGeneration,
} from './engines/core/recording.js';
export type { RecordTarget, RecordingSink } from './engines/core/recorder.js';
// Journal cursors (seq), the server (`ase serve`) and the inspector: issue 13
export type { JournalRange, JournalBounds, JournalListener, JournaledJson } from './effects/journal/transcript-journal.js';
export type { MemoryJournalOptions } from './effects/journal/memory-journal.js';
export type { JournaledEntry } from './events/transcript-entry.js';
export { toDot, toGraph, type StateGraph, type StateGraphNode, type StateGraphEdge } from './actors/diagram.js';
export { chartAt, type ChartAt } from './actors/chart-replay.js';

// Local mode: the agent's own terminal UI (session.terminal) and the PTY runner under it
export { SessionTerminal, type TerminalChange } from './session/session-terminal.js';
export type { TerminalHost, TerminalPort } from './engines/core/engine.js';
export { spawnPty, type PtyProcess, type SpawnPtyOptions } from './engines/transport/pty-process.js';
