/**
 * What the agent's messages mean for the session, decided in wire order: the engine feeds every
 * message its reader (agent-stream.ts) splits off the wire through here, synchronously and before the SDK
 * dispatches it, because the SDK may run different methods' handlers out of order (a permission
 * request before the `tool_call` that preceded it, a prompt response before its turn's last
 * updates). Updates go to the live translator or, during `session/load`, to the history replay;
 * permission requests open a pending answer and a `permission_request`; responses end a turn, a
 * replay, or name the new session. Answering requests stays with the SDK handlers (client.ts).
 */
import type { AnyMessage } from '@agentclientprotocol/sdk';
import type { EngineEvents } from '../core/engine-events.js';
import { noteSkipped, type SkippedInput } from '../core/skipped-inputs.js';
import type { HistoryReplay } from './history-replay.js';
import { classifyWire, isRecord, readPermissionRequest, readSessionUpdate, rpcKey } from './messages.js';
import type { PermissionBroker } from './permissions.js';
import type { AcpTranslator } from './translate.js';
import type { TurnQueue } from './turn-queue.js';

/** The engine's public session state the wire updates (AcpEngine is one). */
export interface WireSession {
  /** The session updates and permission requests must name; the session/new response sets it. */
  sessionId: string | undefined;
  /** Updates and permission requests that arrived while no turn was running. */
  lateMessages: number;
  /** Messages that could not be used (malformed, for an unknown session). */
  readonly unhandled: SkippedInput[];
}

export interface WireInterpreterParts {
  readonly session: WireSession;
  readonly events: EngineEvents;
  readonly translator: AcpTranslator;
  readonly permissions: PermissionBroker;
  readonly turns: TurnQueue;
  readonly replay: HistoryReplay;
  /**
   * Whether a host tool runs without asking (the host's own code is trusted unless the tool says
   * `requiresPermission`): its permission request is allowed here, never shown to the host.
   */
  readonly hostToolTrusted?: (name: string) => boolean;
}

export class WireInterpreter {
  readonly #p: WireInterpreterParts;
  /** Our outstanding JSON-RPC requests: id key → method. */
  readonly #outgoing = new Map<string, string>();

  constructor(parts: WireInterpreterParts) {
    this.#p = parts;
  }

  /** A message the SDK is sending: our requests are remembered, to know what a response answers. */
  outbound(message: AnyMessage): void {
    const wire = classifyWire(message);
    if (wire.kind !== 'request') return;
    const key = rpcKey(wire.id);
    this.#outgoing.set(key, wire.method);
    if (wire.method === 'session/prompt') this.#p.turns.promptSent(key);
    if (wire.method === 'session/load') this.#p.replay.loadSent(key);
  }

  /** A message the agent sent, in wire order. */
  inbound(message: AnyMessage): void {
    const wire = classifyWire(message);
    if (wire.kind === 'notification' && wire.method === 'session/update') this.#onUpdate(wire.params);
    else if (wire.kind === 'request' && wire.method === 'session/request_permission') this.#onPermissionRequest(rpcKey(wire.id), wire.params);
    else if (wire.kind === 'response') {
      const key = rpcKey(wire.id);
      const method = this.#outgoing.get(key);
      this.#outgoing.delete(key);
      if (method === 'session/prompt') {
        this.#p.turns.promptAnswered(key, wire);
      } else if (method === 'session/load') {
        this.#p.replay.loadAnswered(key); // later updates are live, even before the handshake's continuation runs
      } else if (method === 'session/new' && isRecord(wire.result) && typeof wire.result['sessionId'] === 'string') {
        this.#p.session.sessionId = wire.result['sessionId']; // updates right behind the response are routed already
      }
    }
  }

  #onUpdate(params: unknown): void {
    const { session, replay, turns, translator, events } = this.#p;
    const update = readSessionUpdate(params);
    if (!update) {
      noteSkipped(session.unhandled, { reason: 'malformed session/update', raw: params });
      return;
    }
    if (update.sessionId !== session.sessionId) {
      noteSkipped(session.unhandled, { reason: `session/update for unknown session ${update.sessionId}`, raw: params });
      return;
    }
    if (replay.loading) {
      replay.update(update);
      return;
    }
    if (!turns.current) session.lateMessages++;
    for (const body of translator.update(update)) events.emit(body);
  }

  #onPermissionRequest(key: string, params: unknown): void {
    const { session, permissions, turns, translator, events } = this.#p;
    const request = readPermissionRequest(params);
    if (!request || request.sessionId !== session.sessionId) {
      // No answer registered: the SDK handler answers it with an invalid-params error.
      noteSkipped(session.unhandled, { reason: 'malformed session/request_permission or unknown session', raw: params });
      return;
    }
    const call = request.toolCall;
    const input = call.rawInput ?? { ...(call.title !== undefined && { title: call.title }), ...(call.content && { content: call.content }), ...(call.locations && { locations: call.locations }) };
    const pending = permissions.open(key, call.toolCallId, request.options, input);
    for (const body of translator.permissionToolCall(call)) events.emit(body);
    const turn = turns.current;
    if (turn?.cancelled) {
      permissions.settle(pending.requestId, { outcome: 'cancelled' }, 'turn cancelled');
      return;
    }
    const hostTool = translator.hostToolOf(call.toolCallId);
    if (hostTool !== undefined && this.#p.hostToolTrusted?.(hostTool)) {
      // Once, never "always": the next call asks again and is allowed again, so the agent's own
      // rule store never learns to trust a server by name.
      const allow = request.options.find((o) => o.kind === 'allow_once') ?? request.options.find((o) => o.kind.startsWith('allow'));
      permissions.settle(pending.requestId, allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' }, 'host tool');
      return;
    }
    events.emit({
      type: 'permission_request',
      requestId: pending.requestId,
      toolName: hostTool ?? call.name ?? translator.toolName(call.toolCallId) ?? call.kind ?? 'tool',
      input,
      callId: call.toolCallId,
      suggestions: request.options,
    });
    if (!turn) {
      // Arrived after its turn ended (agents desync): answerable for the grace period only.
      session.lateMessages++;
      permissions.expireLater('no turn running');
    }
  }
}
