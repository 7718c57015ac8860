/**
 * The ACP handshake, request by request: `initialize` (fs and terminal advertised only when the
 * engine serves them) → `authenticate` if configured → `session/load` of the resume token (its
 * replay routed to history; on failure a new session, reported, unless `loadFallback: 'fail'`),
 * else `session/new` → `session/set_mode` if configured. Kept apart from the engine, which only
 * reports the outcome: ready, or a start-up failure.
 */
import type { ClientConnection, McpServer, NewSessionRequest } from '@agentclientprotocol/sdk';
import { PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { AseError, errorMessage } from '../../errors.js';
import type { EngineEvents } from '../core/engine-events.js';
import type { ClientServices } from './client-services.js';
import { CLIENT_INFO } from './client.js';
import type { HistoryReplay } from './history-replay.js';
import { ACP_DEFAULTS, type AcpEngineOptions } from './options.js';

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
  readonly services: ClientServices;
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
      protocolVersion: PROTOCOL_VERSION,
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
    mcpServers: (o.mcpServers ?? []) as McpServer[],
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
  if (o.modeId !== undefined) {
    await p.request(agent.request('session/set_mode', { sessionId: session.sessionId!, modeId: o.modeId }), sessionTimeout, 'session/set_mode');
  }
  return true;
}
