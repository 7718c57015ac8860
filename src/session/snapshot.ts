/** The read-only view of a session's state that `snapshot()`, `stop()` and `done` return. */
import type { SessionContext } from '../actors/session-context.js';
import type { ControlMode } from '../events/session-input.js';
import type { CompletedPermission, OpenPermission, QueuedSend, SessionPhase, SessionUsage } from '../events/session-state.js';

/** A read-only view of the session's state. */
export interface SessionSnapshot {
  sessionId: string;
  agent: string;
  /** The session that started this one (sub-agent sessions; absent: none). */
  parentId?: string;
  /** The parent's tool call that started it. */
  parentCallId?: string;
  phase: SessionPhase;
  /** The statechart state, e.g. `{ remote: 'running' }`. */
  state: unknown;
  mode: ControlMode;
  gen: number;
  liveGen: number | null;
  resumeToken?: string;
  transcriptPath?: string;
  /** The model chosen with `setModel` (absent: none; the `engineOptions` one applies). */
  model?: string;
  /** The permission mode chosen with `setPermissionMode` (absent: none). */
  permissionMode?: string;
  queue: readonly QueuedSend[];
  requests: Readonly<Record<string, OpenPermission>>;
  completed: Readonly<Record<string, CompletedPermission>>;
  usage: SessionUsage;
  online: boolean;
  thinking: boolean;
  lastError: SessionContext['lastError'];
  done: boolean;
}

/** The SessionActor's snapshot as the public view. */
export function toSessionSnapshot(snap: { context: SessionContext; value: unknown; status: string }): SessionSnapshot {
  const c = snap.context;
  return {
    sessionId: c.sessionId,
    agent: c.agent,
    ...(c.parentId !== undefined && { parentId: c.parentId }),
    ...(c.parentCallId !== undefined && { parentCallId: c.parentCallId }),
    phase: c.phase,
    state: snap.value,
    mode: c.mode,
    gen: c.gen,
    liveGen: c.liveGen,
    ...(c.resumeToken !== undefined && { resumeToken: c.resumeToken }),
    ...(c.transcriptPath !== undefined && { transcriptPath: c.transcriptPath }),
    ...(c.model !== null && { model: c.model }),
    ...(c.permissionMode !== null && { permissionMode: c.permissionMode }),
    queue: c.queue,
    requests: c.requests,
    completed: c.completed,
    usage: c.usage,
    online: c.online,
    thinking: c.thinking,
    lastError: c.lastError,
    done: snap.status !== 'active',
  };
}
