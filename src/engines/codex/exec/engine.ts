/**
 * The `codex-exec` engine (driven tier): each turn runs `codex exec --json` (the next ones
 * `codex exec --json … resume <thread id> -`), the prompt on stdin, and translates its event stream
 * (translate.ts). For hosts that can only run Codex's one-shot mode; `codex` (app-server) is the
 * hooked alternative with approvals, interrupts and streaming.
 *
 * Host tools (`EngineContext.hostTools`) reach every turn's process through one loopback MCP
 * server per engine, given as `-c mcp_servers.host.url` with the token in the environment
 * (`bearer_token_env_var`, so `ps` never shows it) and approvals off; Codex puts MCP tools behind
 * its `tool_search` (reference host-tools.md §2). The server closes when the engine stops.
 */
import type { UserMessage } from '../../../events/engine-input.js';
import { DrivenEngine, type TurnCommand, type TurnStreamTranslator } from '../../core/driven-engine.js';
import type { AgentLocation } from '../../core/agent-discovery.js';
import type { EngineCapabilities, EngineContext, EngineStartSpec } from '../../core/engine.js';
import { engineTier } from '../../core/runtime-tier.js';
import { buildEnv } from '../../transport/env.js';
import { CODEX_CLI } from '../binary.js';
import { configOverrideArgs } from '../config-overrides.js';
import { codexEnvAllow, mergeCodexOptions, type CodexApprovalPolicy, type CodexEngineOptions, type CodexSandboxMode } from '../options.js';
import { CodexExecTranslator } from './translate.js';
import { rolloutUsageTotal, type UsageCounts } from './thread-usage.js';
import { join } from 'node:path';
import type { HostToolCalls } from '../../core/host-tools.js';
import { startHostToolsLoopback, type HostToolsLoopback } from '../../core/host-tools-loopback.js';

/** The variable that carries the loopback server's token to Codex (`bearer_token_env_var`). */
const HOST_TOKEN_ENV = 'ASE_HOST_MCP_TOKEN';

export const CODEX_EXEC_CAPABILITIES: EngineCapabilities = Object.freeze({
  // Each message is a new process: messages sent during a turn wait for it.
  streamingInput: false,
  // exec never asks: Codex applies its approval policy itself.
  permissions: false,
  // Stopping the turn's process (the turn ends `cancelled`).
  interrupt: true,
  resume: true,
  localMode: false,
  transcriptTail: false,
  cost: false,
  setModel: false,
  setPermissionMode: false,
  // The JSON stream ends each turn (`turn.completed`/`turn.failed`) and the process exit backs it;
  // commands and patches are items; no prompts; tokens without a price; shell edits unreported.
  tier: engineTier('driven', { turnEnd: 'authoritative', toolUse: 'authoritative', permission: 'absent', cost: 'absent', fileChanges: 'cooperative' }),
  // Through the loopback MCP server (`-c mcp_servers.host…`).
  hostTools: true,
});

export interface CodexExecEngineOptions extends Pick<CodexEngineOptions, 'bin' | 'env' | 'passEnv' | 'envAllow' | 'extraArgs' | 'config' | 'model' | 'shutdown' | 'maxLineBytes' | 'onTraffic' | 'launcher'> {
  approvalPolicy?: CodexApprovalPolicy;
  sandbox?: CodexSandboxMode;
}

export class CodexExecEngine extends DrivenEngine<CodexExecEngineOptions> {
  readonly capabilities = CODEX_EXEC_CAPABILITIES;
  protected readonly engineName = 'codex-exec';
  protected readonly cli = CODEX_CLI;
  readonly #factoryOptions: CodexExecEngineOptions;
  #turns = 0;
  /** The thread's token totals after the last completed turn (the next turn's baseline). */
  #threadTotal: UsageCounts | undefined;
  #lastTranslator: CodexExecTranslator | undefined;
  #hostCalls: HostToolCalls | undefined;
  #loopback: HostToolsLoopback | undefined;

  constructor(context: EngineContext, options: CodexExecEngineOptions = {}) {
    super(context);
    this.#factoryOptions = options;
  }

  /** The loopback server comes first: a turn's command line names it, and turns may start right after `ready`. */
  override async start(spec: EngineStartSpec): Promise<void> {
    const toolbox = this.context.hostTools;
    if (toolbox && toolbox.size > 0) {
      this.#hostCalls = toolbox.calls();
      this.#loopback = await startHostToolsLoopback(this.#hostCalls);
    }
    try {
      await super.start(spec);
    } catch (error) {
      await this.#loopback?.close('the engine did not start');
      throw error;
    }
  }

  /** The running turn's host tool handlers stop too. */
  override async abort(): Promise<void> {
    this.#hostCalls?.abortAll('the turn was aborted');
    await super.abort();
  }

  override async stop(): Promise<void> {
    this.#hostCalls?.abortAll('the engine stopped');
    await super.stop();
    await this.#loopback?.close('the engine stopped');
  }

  protected resolveOptions(spec: EngineStartSpec): CodexExecEngineOptions {
    const merged = mergeCodexOptions('codex-exec', this.#factoryOptions as CodexEngineOptions, spec.options) as CodexExecEngineOptions;
    // A turn process ends by itself; stopping one early (abort) needs no stdin grace: stdin is closed.
    return { ...merged, shutdown: { stdinGraceMs: 0, termGraceMs: 2_000, ...merged.shutdown } };
  }

  protected newTranslator(): TurnStreamTranslator {
    this.#threadTotal = this.#lastTranslator?.threadTotal ?? this.#threadTotal;
    // A thread this engine has not run a turn of yet (resumed after a restart): its rollout says.
    if (this.#threadTotal === undefined && this.resumeToken !== undefined) this.#threadTotal = rolloutUsageTotal(this.#codexHome(), this.resumeToken);
    this.#lastTranslator = new CodexExecTranslator(`t${this.spec.gen}.${++this.#turns}`, this.#threadTotal, this.#loopback && this.context.hostTools);
    return this.#lastTranslator;
  }

  #codexHome(): string {
    const env = buildEnv({ allow: codexEnvAllow(this.options), set: this.options.env ?? {} });
    return env['CODEX_HOME'] ?? join(env['HOME'] ?? '', '.codex');
  }

  protected turnCommand(message: UserMessage, resumeToken: string | undefined, location: AgentLocation | undefined): TurnCommand {
    const o = this.options;
    const env = buildEnv({ allow: codexEnvAllow(o), set: o.env ?? {} });
    // The bundled `rg` lives next to the binary; Codex finds it on PATH.
    if (location?.pathDir) env['PATH'] = [location.pathDir, env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
    const model = this.spec.model ?? o.model;
    const loopback = this.#loopback;
    if (loopback) env[HOST_TOKEN_ENV] = loopback.bearerToken;
    const hostServer = loopback
      ? {
          [`mcp_servers.${loopback.serverName}.url`]: loopback.bearerUrl,
          [`mcp_servers.${loopback.serverName}.bearer_token_env_var`]: HOST_TOKEN_ENV,
          [`mcp_servers.${loopback.serverName}.default_tools_approval_mode`]: 'approve',
        }
      : {};
    const args = [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-C',
      this.spec.workDir,
      ...(model ? ['-m', model] : []),
      ...(o.sandbox ? ['-s', o.sandbox] : []),
      ...configOverrideArgs({ ...o.config, ...(o.approvalPolicy && { approval_policy: o.approvalPolicy }), ...hostServer }),
      ...(o.extraArgs ?? []),
      ...(resumeToken !== undefined ? ['resume', resumeToken] : []),
      '-',
    ];
    return { args, env, input: message.text };
  }
}
