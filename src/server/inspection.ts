/**
 * The inspector's wire format: XState's inspection events as @statelyai/inspect sends them
 * (`@xstate.actor` with the machine `definition`, `@xstate.snapshot`, `@xstate.event` with
 * `sourceId`; each with `id`, `rootId`, `sessionId`, `createdAt`, `_version`), so a Stately viewer
 * could consume the stream too. We add `seq`: the session's last journaled seq when it happened,
 * which lines the inspector's log up with the durable transcript. Secrets in the context and in
 * events are redacted unless the server is told otherwise. `@xstate.action`s that emit effects
 * become `effect` records (the effect log).
 */
import { randomUUID } from 'node:crypto';
import type { AnyStateMachine, InspectionEvent } from 'xstate';

export const INSPECTION_VERSION = '0.7.2';
export const REDACTED = '[redacted]';

/** Keys whose values never leave the server unless redaction is turned off. */
const SECRET_KEY = /(token|secret|password|passwd|passphrase|api[-_]?key|authorization|cookie|credential|private[-_]?key|^env$)/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 20) return '[deep]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'function') continue;
      out[k] = SECRET_KEY.test(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

export interface WireBase {
  id: string;
  rootId: string;
  sessionId: string;
  createdAt: number;
  _version: string;
  seq: number;
}
export interface WireSnapshot {
  value: unknown;
  status: string;
  context: unknown;
}
export type InspectionWire =
  | (WireBase & { type: '@xstate.actor'; name: string; parentId?: string; definition: string; snapshot: WireSnapshot })
  | (WireBase & { type: '@xstate.snapshot'; event: unknown; snapshot: WireSnapshot })
  | (WireBase & { type: '@xstate.event'; sourceId?: string; event: unknown })
  | (WireBase & { type: 'effect'; effect: unknown });

/** The machine definition as JSON text (what `@xstate.actor.definition` carries). */
export function machineDefinition(machine: AnyStateMachine): string {
  return JSON.stringify(machine.definition, (_k, v: unknown) => (typeof v === 'function' ? undefined : v));
}

interface RawSnapshot {
  value?: unknown;
  status?: string;
  context?: unknown;
}

/** Turns one raw InspectionEvent of a session's actor into wire events (none for what it does not show). */
export class InspectionEncoder {
  readonly #sessionId: string;
  readonly #machine: AnyStateMachine;
  readonly #reveal: boolean;

  constructor(sessionId: string, machine: AnyStateMachine, options: { revealSecrets?: boolean } = {}) {
    this.#sessionId = sessionId;
    this.#machine = machine;
    this.#reveal = options.revealSecrets === true;
  }

  snapshot(raw: RawSnapshot | undefined): WireSnapshot {
    const context = this.#reveal ? raw?.context : redact(raw?.context);
    return { value: raw?.value ?? null, status: raw?.status ?? 'active', context: context ?? null };
  }

  encode(event: InspectionEvent, seq: number): InspectionWire[] {
    const base = (): WireBase => ({ id: randomUUID(), rootId: event.rootId, sessionId: this.#sessionId, createdAt: Date.now(), _version: INSPECTION_VERSION, seq });
    const clean = (v: unknown) => (this.#reveal ? v : redact(v));
    switch (event.type) {
      case '@xstate.actor': {
        const ref = event.actorRef as unknown as { sessionId: string };
        if (ref.sessionId !== event.rootId) return []; // only the SessionActor itself
        // Its snapshot cannot be read while it initializes: the first `@xstate.snapshot` follows.
        return [{ ...base(), type: '@xstate.actor', name: 'SessionActor', definition: machineDefinition(this.#machine), snapshot: this.snapshot(undefined) }];
      }
      case '@xstate.event': {
        const source = (event.sourceRef as unknown as { sessionId?: string } | undefined)?.sessionId;
        // The actor's own init and emitted effects are not inputs.
        if (typeof event.event?.type !== 'string' || event.event.type.startsWith('xstate.')) return [];
        return [{ ...base(), type: '@xstate.event', ...(source !== undefined && { sourceId: source }), event: clean(event.event) }];
      }
      case '@xstate.snapshot':
        return [{ ...base(), type: '@xstate.snapshot', event: clean(event.event), snapshot: this.snapshot(event.snapshot as RawSnapshot) }];
      case '@xstate.action': {
        const action = (event as unknown as { action: { type: string; params?: unknown } }).action;
        if (action.type !== 'xstate.emit') return [];
        const params = action.params as { event?: unknown } | undefined;
        return [{ ...base(), type: 'effect', effect: clean(params?.event ?? params) }];
      }
      default:
        return [];
    }
  }
}
