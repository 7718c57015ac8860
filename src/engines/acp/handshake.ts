/**
 * The ACP handshake, request by request: `initialize` (fs and terminal advertised only when the
 * engine serves them) → `authenticate` if configured → `session/load` of the resume token (its
 * replay routed to history; on failure a new session, reported, unless `loadFallback: 'fail'`),
 * else `session/new` → the session's runtime mode and model, the configured mode, model and config
 * options (`session/set_mode`, `session/set_config_option` or `session/set_model`), each checked
 * against the agent's offer (session-settings.ts). The host tools' loopback MCP server, when the
 * session has tools, joins the `mcpServers` of session/new and session/load (agents do not
 * remember them): over HTTP when the agent advertises it, else through the stdio shim. Kept apart from the engine, which only reports
 * the outcome: ready, or a start-up failure.
 */
import type { ClientConnection, McpServer, NewSessionRequest } from '@agentclientprotocol/sdk';
import { acpSdk } from './sdk.js';
import { AseError, errorMessage } from '../../errors.js';
import type { EngineEvents } from '../core/engine-events.js';
import type { ClientServices } from './client-services.js';
import { CLIENT_INFO } from './client.js';
import type { HistoryReplay } from './history-replay.js';
import { ACP_DEFAULTS, type AcpEngineOptions } from './options.js';
import { stdioShimServer } from '../transport/host-mcp-stdio-shim.js';
import { checkMode, checkModel, readOffer, selectValues, setMode, setModel } from './session-settings.js';

/** The engine's public session state the handshake fills in (AcpEngine is one). */
export interface HandshakeSession {
  sessionId: string | undefined;
  initializeResult: Record<string, unknown> | undefined;
  sessionResult: Record<string, unknown> | undefined;
  readonly timings: { initialized?: number };
}

export interface HandshakeParts {
  readonly session: HandshakeSession;
  readonly agent: ClientConnection['agent'];
  readonly options: AcpEngineOptions;
  readonly workDir: string;
  readonly gen: number;
  readonly resumeToken: string | undefined;
  /** The session's runtime choices from the start spec (they win over `options.modeId` / `model`). */
  readonly settings: { readonly model?: string; readonly permissionMode?: string };
  readonly services: ClientServices;
  /** The host tools' loopback MCP server, when the session has tools. */
  readonly hostMcp?: { readonly serverName: string; readonly url: string };
  readonly replay: HistoryReplay;
  readonly events: EngineEvents;
  now(): number;
  /** One of our requests, bounded (agent-request.ts). */
  request<T>(request: Promise<T>, ms: number, what: string): Promise<T>;
  /** The engine is going down: its exit path reports, so the handshake stops without a word. */
  gone(): boolean;
}

/**
 * Resolves `true` once the session is open (`session.sessionId` set), `false` if the engine went
 * down during a failed `session/load`. Rejects with an AseError when a step failed.
 */
export async function handshake(p: HandshakeParts): Promise<boolean> {
  const { session, agent, options: o } = p;
  const init = await p.request(
    agent.request('initialize', {
      protocolVersion: acpSdk().PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: p.services.fs !== undefined, writeTextFile: p.services.fs !== undefined },
        terminal: p.services.terminals !== undefined,
      },
      clientInfo: { ...CLIENT_INFO },
    }),
    o.initializeTimeoutMs ?? ACP_DEFAULTS.initializeTimeoutMs,
    'initialize',
  );
  session.initializeResult = init as unknown as Record<string, unknown>;
  session.timings.initialized = p.now();
  if (o.authenticate) {
    await p.request(agent.request('authenticate', { ...o.authenticate }), o.initializeTimeoutMs ?? ACP_DEFAULTS.initializeTimeoutMs, 'authenticate');
  }
  const sessionTimeout = o.sessionTimeoutMs ?? ACP_DEFAULTS.sessionTimeoutMs;
  const request: NewSessionRequest = {
    cwd: p.workDir,
    mcpServers: mcpServersFor(p, init.agentCapabilities?.mcpCapabilities),
    ...(o.additionalDirectories && { additionalDirectories: o.additionalDirectories }),
  };
  const token = p.resumeToken;
  const canLoad = init.agentCapabilities?.loadSession === true;
  let loaded = false;
  if (token !== undefined) {
    try {
      if (!canLoad) throw new AseError('ENGINE_START_FAILED', 'the agent does not support session/load');
      p.replay.begin(`acp-${p.gen}-history`);
      session.sessionId = token;
      const result = await p.request(agent.request('session/load', { sessionId: token, ...request }), sessionTimeout, 'session/load');
      session.sessionResult = (result ?? {}) as Record<string, unknown>;
      loaded = true;
    } catch (error) {
      if (p.gone()) return false;
      session.sessionId = undefined;
      if ((o.loadFallback ?? 'new') === 'fail') throw error;
      p.events.emit({ type: 'error', kind: 'protocol', message: `acp engine: session/load of ${token} failed (${errorMessage(error)}); started a new session`, retryable: true });
    } finally {
      p.replay.end();
    }
  }
  if (!loaded) {
    const result = await p.request(agent.request('session/new', request), sessionTimeout, 'session/new');
    session.sessionResult = { ...result };
    session.sessionId = result.sessionId;
  }
  await applySessionSettings(p, session.sessionId!, session.sessionResult ?? {}, sessionTimeout);
  return true;
}

const invalid = (message: string) => new AseError('INVALID_OPTIONS', `acp engine: ${message}`);

/**
 * The configured MCP servers plus the host tools' one: `http` when the agent can (gemini,
 * codex-acp and claude-code-acp all advertise it), otherwise `stdio` (every ACP agent must take
 * it). A configured server named like the host's would shadow it: refused.
 */
function mcpServersFor(p: HandshakeParts, capabilities: { http?: boolean } | undefined): McpServer[] {
  const configured = (p.options.mcpServers ?? []) as McpServer[];
  const host = p.hostMcp;
  if (!host) return configured;
  if (configured.some((s) => (s as { name?: unknown }).name === host.serverName)) {
    throw invalid(`mcpServers: the name "${host.serverName}" is taken by the session's host tools; rename that server`);
  }
  const http = capabilities?.http === true && (p.options.hostToolsTransport ?? 'auto') === 'auto';
  const entry: McpServer = http ? { type: 'http', name: host.serverName, url: host.url, headers: [] } : stdioShimServer(host.serverName, host.url);
  return [...configured, entry];
}

/**
 * The session's runtime choices (`setPermissionMode` / `setModel`) first, then `modeId`, `model`
 * and `configOptions`, each checked against what the agent offered in the session/new (or
 * session/load) result before it is set, so a typo in engineOptions fails the start with the
 * agent's own choices listed instead of an opaque JSON-RPC error (or none at all). A runtime choice
 * the agent does not take does not fail the start: it is reported as an `error` event and the
 * engineOptions value (if any) applies instead, so a stored choice can never keep a session from
 * starting.
 */
async function applySessionSettings(p: HandshakeParts, sessionId: string, result: Record<string, unknown>, timeoutMs: number): Promise<void> {
  const { agent, options: o } = p;
  const offer = readOffer(result);
  const runtimeMode = await applyRuntimeChoice(p, 'permission mode', p.settings.permissionMode, async (modeId) => {
    checkMode(offer, modeId, 'INVALID_INPUT', 'the session\'s permission mode');
    await setMode(p.request, agent, sessionId, modeId, timeoutMs);
  });
  if (!runtimeMode && o.modeId !== undefined) {
    checkMode(offer, o.modeId, 'INVALID_OPTIONS', 'modeId');
    await setMode(p.request, agent, sessionId, o.modeId, timeoutMs);
  }
  const runtimeModel = await applyRuntimeChoice(p, 'model', p.settings.model, async (model) => {
    checkModel(offer, model, 'INVALID_INPUT', 'the session\'s model', 'UNSUPPORTED');
    await setModel(p.request, agent, sessionId, offer, model, timeoutMs);
  });
  if (!runtimeModel && o.model !== undefined) {
    checkModel(offer, o.model, 'INVALID_OPTIONS', 'model');
    await setModel(p.request, agent, sessionId, offer, o.model, timeoutMs);
  }
  for (const [id, value] of Object.entries(o.configOptions ?? {})) {
    const option = offer.configs.find((c) => c.id === id);
    if (!option) throw invalid(`configOptions.${id}: not a config option of this agent; its options: ${offer.configs.map((c) => c.id).join(', ') || '(none)'}`);
    if (option.type === 'boolean') {
      if (typeof value !== 'boolean') throw invalid(`configOptions.${id} is a boolean option`);
      await p.request(agent.request('session/set_config_option', { sessionId, configId: id, type: 'boolean', value }), timeoutMs, 'session/set_config_option');
      continue;
    }
    const values = selectValues(option);
    if (typeof value !== 'string' || (values.length > 0 && !values.includes(value))) throw invalid(`configOptions.${id}: ${JSON.stringify(value)} is not one of ${values.join(', ')}`);
    await p.request(agent.request('session/set_config_option', { sessionId, configId: id, value }), timeoutMs, 'session/set_config_option');
  }
}

/** Applies a runtime choice if there is one; true once applied, false (reported) when the agent did not take it. */
async function applyRuntimeChoice(p: HandshakeParts, what: string, value: string | undefined, apply: (value: string) => Promise<void>): Promise<boolean> {
  if (value === undefined) return false;
  try {
    await apply(value);
    return true;
  } catch (error) {
    if (p.gone()) throw error;
    p.events.emit({ type: 'error', kind: 'protocol', message: `acp engine: the session's ${what} ${JSON.stringify(value)} was not applied: ${errorMessage(error)}`, retryable: true });
    return false;
  }
}
