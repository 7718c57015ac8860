/**
 * The AgentEngine contract: what every protocol adapter (claude, codex, codex-mcp, acp, fake)
 * implements. An engine runs one agent process for one runner generation, translates its protocol
 * into AgentEvents stamped with that generation, and never imports from `actors/`.
 */
import type { AgentEvent } from '../../events/agent-event.js';
import type { ControlMode } from '../../events/session-input.js';
import type { EngineSettings, PermissionDecision, UserMessage } from '../../events/engine-input.js';
import type { ProcessObserver } from '../transport/process-observer.js';
import type { AgentDiagnosis } from './agent-diagnosis.js';
import type { HostToolbox } from './host-tools.js';
import type { ResumeCheck, ResumeTarget } from './resume-check.js';
import type { EngineTier } from './runtime-tier.js';

/** What an engine can do, so the session and clients can adapt (and tests can skip honestly). */
export interface EngineCapabilities {
  /** Accepts further user messages while a turn runs (stream-json input). */
  streamingInput: boolean;
  /** Asks the host for tool permissions. */
  permissions: boolean;
  /** Can interrupt a running turn without being restarted. */
  interrupt: boolean;
  /** Can continue an earlier agent session from a resume token. */
  resume: boolean;
  /** Can run the agent's own terminal UI for local mode. */
  localMode: boolean;
  /** Can follow the agent's transcript file (observe sessions it did not start). */
  transcriptTail: boolean;
  /** Reports per-turn cost in USD. */
  cost: boolean;
  /**
   * Can change the model of a running session (`session.setModel`, `configure({model})`).
   * Absent counts as false: the session then refuses `setModel` with `UNSUPPORTED`.
   */
  setModel?: boolean;
  /** Can change the permission mode of a running session (`session.setPermissionMode`). Absent counts as false. */
  setPermissionMode?: boolean;
  /**
   * The engine's runtime tier and, per signal (turn end, tool use, permission, cost, file changes),
   * whether it is authoritative, cooperative or absent (runtime-tier.ts). Every built-in engine
   * declares it; absent counts as `UNDECLARED_TIER` (delegated, nothing authoritative).
   */
  tier?: EngineTier;
  /**
   * Offers the session's host tools (`createSession({tools})`, `EngineContext.hostTools`) to the
   * agent. Absent counts as false: a session with tools on such an engine is refused (`UNSUPPORTED`).
   */
  hostTools?: boolean;
}

export interface EngineStartSpec {
  gen: number;
  mode: ControlMode;
  workDir: string;
  resumeToken?: string;
  /** Engine-specific options, passed through from `createSession({ engineOptions })`. */
  options: Record<string, unknown>;
  /**
   * The session's model chosen at runtime (`session.setModel`): it wins over the model in `options`.
   * Absent when none was chosen (or it was reset with `null`).
   */
  model?: string;
  /**
   * The session's permission mode chosen at runtime (`session.setPermissionMode`), in the engine's
   * own words (Claude `permissionMode`, Codex `approvalPolicy`, ACP `modeId`): it wins over `options`.
   */
  permissionMode?: string;
}

export interface EngineContext {
  /** Current time (epoch ms) for stamping events; the runtime's clock. */
  now(): number;
  /** Timer functions from the runtime's clock, so simulated time drives engines too. */
  setTimeout(fn: () => void, ms: number): { readonly id: number };
  clearTimeout(handle: { readonly id: number }): void;
  /** Overrides the agent executable (`ase --bin`). */
  bin?: string;
  /**
   * Told about every process the engine spawns (pass it to the transport's `observer` option).
   * The runtime records them in the data dir so a later host can reap what a dead one left.
   */
  processes?: ProcessObserver;
  /**
   * Where an engine in local mode hands the agent's own terminal UI (its PTY), so the host can
   * render it (the user's terminal, an IDE panel, a web terminal) and type into it.
   */
  terminal?: TerminalHost;
  /**
   * The session's host tools (`createSession({tools})`), when it has any: the engine offers
   * `hostTools.specs` to the agent by its own mechanism and runs each call through a
   * `hostTools.calls()` of its own, aborted when a turn is aborted and closed when it stops.
   * Host tool calls are reported as ordinary `tool_call` / `tool_result` events under the tool's
   * own name (`displayToolName`). Only engines whose capabilities say `hostTools` get one.
   */
  hostTools?: HostToolbox;
}

/** A terminal UI an engine runs in local mode (a PTY), as the host sees it. */
export interface TerminalPort {
  readonly cols: number;
  readonly rows: number;
  /** The terminal's output (text with escape sequences); returns the unsubscribe. */
  onData(listener: (data: string) => void): () => void;
  /** Keystrokes into the terminal. */
  write(data: string): void;
  resize(cols: number, rows: number): void;
}

/** The host's side of local mode: an engine attaches its terminal when its PTY starts and detaches it when the PTY is gone. */
export interface TerminalHost {
  /** The size a new terminal starts with (the host's window), if the host has one. */
  size(): { cols: number; rows: number } | undefined;
  attach(gen: number, port: TerminalPort): void;
  detach(gen: number): void;
  /**
   * A command of the host typed into the agent's own UI (`/ase:enter <id>`, see
   * claude/local/terminal-commands.ts), caught by the engine's prompt hook before the model sees
   * it. Resolves with the text the person is shown in the UI (quickly: the agent waits on it); what
   * the command does (moving the terminal to a sub-agent) may carry on after that.
   */
  command?(line: string): Promise<string>;
}

export type AgentEventListener = (event: AgentEvent) => void;

/**
 * Rules every engine follows:
 * - Every event carries the start spec's `gen`; nothing is emitted after `exited`.
 * - `permission_request` ids are unique within the session, across generations too (prefix
 *   protocol ids that restart per process with the generation): the ledger ignores a repeated id.
 * - An engine can take the answer to a `permission_request` from the moment it emits it: a
 *   listener may call `answerPermission` synchronously, inside the emit.
 * - Unknown or malformed upstream messages are logged and skipped (kept for diagnostics), never
 *   thrown: the session survives protocol drift.
 * - Usage in `turn_complete` is per turn; engines convert cumulative counters into deltas.
 */
export interface AgentEngine {
  readonly capabilities: EngineCapabilities;
  /**
   * Starts the agent. Resolves once the process is spawned; `ready` follows as an event.
   * A failure to start is reported as `error` + `exited` events (and may also reject).
   */
  start(spec: EngineStartSpec): Promise<void>;
  /** Sends one user message (a turn). */
  send(message: UserMessage): Promise<void>;
  /** Interrupts the running turn; the engine then reports `turn_complete {status: cancelled}`. */
  abort(): Promise<void>;
  /** Answers a `permission_request` it reported. */
  answerPermission(requestId: string, decision: PermissionDecision): Promise<void>;
  /**
   * Optional. Whether the agent session this engine resumed already holds `message` (e.g. found in
   * the agent's own transcript), asked after `ready` when a host crash left it unknown whether the
   * message reached the agent. `true`/`false` when the engine can tell, `undefined` when it cannot.
   * Must settle (bounded by the engine's own request timeouts). An engine without it counts as
   * "cannot tell": the message is then not sent again (at most once).
   */
  wasReceived?(message: UserMessage): Promise<boolean | undefined>;
  /**
   * Optional (required when the capabilities claim `setModel` or `setPermissionMode`). Applies a new
   * model and/or permission mode (only the keys present; `null` = back to what this engine started
   * with). Called only after `start()`; an engine that is not ready yet applies it before `ready`.
   * When a running turn feels it is the engine's to say (and document). Rejects when the agent
   * refuses; the session reports that as an `error` event and keeps the choice for later starts.
   */
  configure?(settings: EngineSettings): Promise<void>;
  /**
   * Optional. Checks a settings change against what the running agent offers (e.g. the modes an
   * ACP agent advertised) before the session stores it: throws an AseError `INVALID_INPUT` (not
   * offered, the offer listed) or `UNSUPPORTED` (no such choice at all). Synchronous; an engine
   * that does not know yet (not ready) accepts.
   */
  validateSettings?(settings: EngineSettings): void;
  /**
   * Stops the agent and everything it spawned. Resolves after the process is gone and `exited`
   * has been reported. Idempotent.
   */
  stop(): Promise<void>;
  /** Subscribes to the engine's AgentEvents (all stamped with the start spec's `gen`). */
  onEvent(listener: AgentEventListener): () => void;
}

export interface EngineFactory {
  readonly name: string;
  readonly capabilities: EngineCapabilities;
  create(context: EngineContext): AgentEngine;
  /**
   * Checks a session's `engineOptions` before anything starts (`createSession` calls it): throws an
   * AseError INVALID_OPTIONS for an unknown key (naming the known ones) or a malformed value.
   * Optional: an engine without it takes any options.
   */
  validateOptions?(options: Record<string, unknown>): void;
  /**
   * Finds the agent CLI a session with these options would start, without starting it, so
   * `createSession` fails before anything is stored: rejects with AGENT_NOT_FOUND naming every
   * place looked in. Resolves when the options start no CLI of ours to look for (a replaced
   * launcher, an ACP `command`). `bin` is the session's (it wins over `engineOptions.bin`).
   * Optional: an engine without it (fake, replay) is not checked.
   */
  locateAgent?(options: { bin?: string; engineOptions: Record<string, unknown> }): Promise<void>;
  /**
   * Checks a settings change (`session.setModel` / `setPermissionMode`) before the session stores
   * it: throws an AseError INVALID_INPUT for a value this engine never accepts (e.g. a permission
   * mode its CLI does not know, naming the known ones). Optional: without it any name is stored.
   */
  validateSettings?(settings: EngineSettings): void;
  /**
   * What `ase doctor` shows for this engine: per agent CLI, where it was found (or every place
   * looked in), its version and the tested one, and which credential variables are set (names
   * only). `env` is where `ASE_*_BIN`, PATH and the credentials are read (default `process.env`).
   */
  diagnose?(options?: { env?: Readonly<Record<string, string | undefined>> }): Promise<AgentDiagnosis[]>;
  /**
   * Whether the agent could continue the agent session `target.resumeToken` names on this machine:
   * its own session files are here (Claude Code's transcript, Codex's rollout), where the options
   * and the environment would have the agent look. Asked before a host adopts a session another
   * host ran (`POST /api/sessions/:id/adopt`); `{ ok: false, reason }` refuses the adoption (409
   * RESUME_FORKED) and nothing is changed. Must not throw for a missing file (that is the answer);
   * reads only. Optional: an engine without it is adopted wherever the work directory exists.
   */
  checkResume?(target: ResumeTarget): Promise<ResumeCheck>;
}
