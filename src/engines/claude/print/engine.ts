/**
 * The `claude-print` engine (driven tier): each turn runs `claude -p --output-format stream-json
 * --verbose` with the prompt on stdin, the first with `--session-id <a uuid we mint>`, the next
 * ones with `--resume <that id>`. No permission prompt surface: what would ask is denied by the CLI
 * (or allowed by `permissionMode` / `allowedTools`). `claude` (stream-json in and out, with
 * `can_use_tool`) is the hooked alternative.
 *
 * With host tools (`EngineContext.hostTools`) a turn reads stream-json input instead: the prompt is
 * one `user` line and stdin stays open until the turn's `result`, so the engine can serve the
 * in-process MCP server's `mcp_message` requests (host-tools.ts), as the hooked engine does.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { UserMessage } from '../../../events/engine-input.js';
import { DrivenEngine, type TurnCommand, type TurnIo, type TurnStreamTranslator } from '../../core/driven-engine.js';
import type { HostToolCalls } from '../../core/host-tools.js';
import { ControlClient } from '../client.js';
import { answerClaudeMcp, claudeToolName, withHostTools } from '../host-tools.js';
import type { EngineCapabilities, EngineContext, EngineStartSpec } from '../../core/engine.js';
import { engineTier } from '../../core/runtime-tier.js';
import { buildEnv } from '../../transport/env.js';
import { CLAUDE_CLI, CLAUDE_DEFAULT_PASS_ENV } from '../cli.js';
import { checkClaudeSettings, claudeOptionArgs, mergeClaudeOptions, type ClaudeEngineOptions, type ClaudePermissionMode } from '../options.js';
import { ClaudePrintTurnTranslator } from './turn-translator.js';

export const CLAUDE_PRINT_CAPABILITIES: EngineCapabilities = Object.freeze({
  streamingInput: false,
  // Print mode has no prompt surface: "ask" becomes deny inside the CLI.
  permissions: false,
  // Stopping the turn's process (the turn ends `cancelled`).
  interrupt: true,
  resume: true,
  localMode: false,
  transcriptTail: false,
  cost: true,
  setModel: false,
  setPermissionMode: false,
  // The in-process MCP server over a stream-json turn (host-tools.ts); requiresPermission tools are refused (no prompt surface).
  hostTools: true,
  // `result` ends each turn (and the exit backs it); tool_use blocks; no prompts; the CLI's own cost.
  tier: engineTier('driven', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'absent', cost: 'authoritative', fileChanges: 'cooperative' }),
});

export class ClaudePrintEngine extends DrivenEngine<ClaudeEngineOptions> {
  readonly capabilities = CLAUDE_PRINT_CAPABILITIES;
  protected readonly engineName = 'claude-print';
  protected readonly cli = CLAUDE_CLI;
  readonly #factoryOptions: ClaudeEngineOptions;
  #env: Record<string, string> = {};
  #hostCalls: HostToolCalls | undefined;
  /** The control channel of the running turn's process (host tools only), made when its first request comes. */
  #control: { io: TurnIo; client: ControlClient } | undefined;

  constructor(context: EngineContext, options: ClaudeEngineOptions = {}) {
    super(context);
    this.#factoryOptions = options;
  }

  protected resolveOptions(spec: EngineStartSpec): ClaudeEngineOptions {
    const merged = mergeClaudeOptions(this.#factoryOptions, spec.options);
    checkClaudeSettings({ ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode }) });
    const options: ClaudeEngineOptions = {
      ...merged,
      ...(spec.model !== undefined && { model: spec.model }),
      ...(spec.permissionMode !== undefined && { permissionMode: spec.permissionMode as ClaudePermissionMode }),
      // Stdin is closed at spawn: an abort goes straight to SIGTERM.
      shutdown: { stdinGraceMs: 0, termGraceMs: 2_000, ...merged.shutdown },
    };
    this.#env = buildEnv({ allow: [...CLAUDE_DEFAULT_PASS_ENV, ...(options.passEnv ?? [])], set: options.env ?? {} });
    // Refuses a user server named like ours now (INVALID_OPTIONS at start), not at the first turn.
    withHostTools(options, this.context.hostTools);
    const hostTools = this.context.hostTools;
    this.#hostCalls = hostTools && hostTools.size > 0 ? hostTools.calls() : undefined;
    return options;
  }

  protected newTranslator(): TurnStreamTranslator {
    const configDir = this.#env['CLAUDE_CONFIG_DIR'] ?? join(this.#env['HOME'] ?? homedir(), '.claude');
    const toolName = claudeToolName(this.context.hostTools);
    return new ClaudePrintTurnTranslator({ configDir, cwd: this.spec.workDir, ...(toolName && { toolName }) });
  }

  protected turnCommand(message: UserMessage, resumeToken: string | undefined): TurnCommand {
    // A new session gets an id we choose; a later turn (or a restarted host) resumes it.
    const session = resumeToken !== undefined ? ['--resume', resumeToken] : ['--session-id', randomUUID()];
    if (!this.#hostCalls) {
      const args = ['-p', '--output-format', 'stream-json', '--verbose', ...session, ...claudeOptionArgs(this.options)];
      return { args, env: { ...this.#env }, input: message.text };
    }
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', ...session, ...claudeOptionArgs(withHostTools(this.options, this.context.hostTools))];
    const inputLine = { type: 'user', session_id: '', message: { role: 'user', content: [{ type: 'text', text: message.text }] }, parent_tool_use_id: null };
    return { args, env: { ...this.#env }, input: message.text, inputLine };
  }

  /** The CLI's control requests in a host-tools turn: `mcp_message` served, anything else answered with an error. */
  protected override controlMessage(value: unknown, io: TurnIo): boolean {
    const type = (value as { type?: unknown } | null)?.type;
    if (!this.#hostCalls || typeof type !== 'string' || !type.startsWith('control_')) return false;
    if (this.#control?.io !== io) {
      this.#control?.client.close('the turn ended');
      const calls = this.#hostCalls;
      this.#control = { io, client: new ControlClient({ writer: io, onMcpMessage: (server, msg, signal) => answerClaudeMcp(calls, server, msg, signal) }) };
    }
    return this.#control.client.handle(value);
  }

  protected override turnAborting(stopping: boolean): void {
    if (stopping) this.#hostCalls?.close('the claude-print engine stopped');
    else this.#hostCalls?.abortAll('the turn was aborted');
  }
}
