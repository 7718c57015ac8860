/**
 * The Codex app-server protocol types the `codex` engine compiles against. Everything under
 * `generated/` comes from the pinned binary (`codex app-server generate-ts`, see
 * scripts/codex-app-server-protocol.ts); test/unit/codex-protocol.test.ts fails when
 * they drift from it.
 */
export type { InitializeParams } from './generated/InitializeParams.js';
export type { InitializeResponse } from './generated/InitializeResponse.js';
export type { RequestId } from './generated/RequestId.js';
export type { ServerRequest } from './generated/ServerRequest.js';
export type { ThreadStartParams } from './generated/v2/ThreadStartParams.js';
export type { ThreadStartResponse } from './generated/v2/ThreadStartResponse.js';
export type { ThreadResumeParams } from './generated/v2/ThreadResumeParams.js';
export type { ThreadResumeResponse } from './generated/v2/ThreadResumeResponse.js';
export type { ThreadStartedNotification } from './generated/v2/ThreadStartedNotification.js';
export type { TurnStartParams } from './generated/v2/TurnStartParams.js';
export type { TurnStartResponse } from './generated/v2/TurnStartResponse.js';
export type { TurnInterruptParams } from './generated/v2/TurnInterruptParams.js';
export type { TurnInterruptResponse } from './generated/v2/TurnInterruptResponse.js';
export type { TurnStartedNotification } from './generated/v2/TurnStartedNotification.js';
export type { TurnCompletedNotification } from './generated/v2/TurnCompletedNotification.js';
export type { ItemStartedNotification } from './generated/v2/ItemStartedNotification.js';
export type { ItemCompletedNotification } from './generated/v2/ItemCompletedNotification.js';
export type { AgentMessageDeltaNotification } from './generated/v2/AgentMessageDeltaNotification.js';
export type { ReasoningSummaryTextDeltaNotification } from './generated/v2/ReasoningSummaryTextDeltaNotification.js';
export type { ReasoningTextDeltaNotification } from './generated/v2/ReasoningTextDeltaNotification.js';
export type { ThreadTokenUsageUpdatedNotification } from './generated/v2/ThreadTokenUsageUpdatedNotification.js';
export type { TurnPlanUpdatedNotification } from './generated/v2/TurnPlanUpdatedNotification.js';
export type { ErrorNotification } from './generated/v2/ErrorNotification.js';
export type { ServerRequestResolvedNotification } from './generated/v2/ServerRequestResolvedNotification.js';
export type { CommandExecutionRequestApprovalParams } from './generated/v2/CommandExecutionRequestApprovalParams.js';
export type { CommandExecutionRequestApprovalResponse } from './generated/v2/CommandExecutionRequestApprovalResponse.js';
export type { FileChangeRequestApprovalParams } from './generated/v2/FileChangeRequestApprovalParams.js';
export type { FileChangeRequestApprovalResponse } from './generated/v2/FileChangeRequestApprovalResponse.js';
export type { CommandExecutionApprovalDecision } from './generated/v2/CommandExecutionApprovalDecision.js';
export type { FileChangeApprovalDecision } from './generated/v2/FileChangeApprovalDecision.js';
export type { ThreadItem } from './generated/v2/ThreadItem.js';
export type { Turn } from './generated/v2/Turn.js';
export type { TokenUsageBreakdown } from './generated/v2/TokenUsageBreakdown.js';
export type { AskForApproval } from './generated/v2/AskForApproval.js';
export type { SandboxMode } from './generated/v2/SandboxMode.js';
export { CODEX_APP_SERVER_PROTOCOL_VERSION } from './generated/version.js';
