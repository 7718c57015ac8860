/**
 * Lists every transition a machine defines (event transitions and eventless `always` ones), read
 * from the machine itself. The diagram is rendered from this, and the model-based harness uses it
 * to prove that every transition was taken at least once.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

export interface TransitionInfo {
  /** Stable key: `<source state id>:<event type>#<index among that event's alternatives>`. */
  key: string;
  source: string;
  event: string;
  index: number;
  targets: string[];
  guard?: string;
  reenter: boolean;
}

interface TransitionDefinitionLike {
  eventType: string;
  target?: readonly AnyStateNode[];
  guard?: unknown;
  reenter?: boolean;
}

export function transitionKey(source: string, event: string, index: number): string {
  return `${source}:${event}#${index}`;
}

export function describeGuard(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner = (guard as { guards?: unknown[]; check?: unknown }).guards;
    if (Array.isArray(inner)) return inner.map((g) => describeGuard(g) ?? '?').join(' && ');
    return guard.name || 'guard';
  }
  if (typeof guard === 'object' && guard !== null && 'type' in guard) {
    const g = guard as { type: string; params?: Record<string, unknown> };
    const params = g.params ? Object.values(g.params).map(String).join(',') : '';
    return params ? `${g.type}(${params})` : g.type;
  }
  return 'guard';
}

export function allStateNodes(machine: AnyStateMachine): AnyStateNode[] {
  const out: AnyStateNode[] = [];
  const walk = (node: AnyStateNode) => {
    out.push(node);
    for (const child of Object.values(node.states)) walk(child as AnyStateNode);
  };
  walk(machine.root);
  return out;
}

export function listTransitions(machine: AnyStateMachine): TransitionInfo[] {
  const out: TransitionInfo[] = [];
  for (const node of allStateNodes(machine)) {
    const groups: [string, readonly TransitionDefinitionLike[]][] = [
      ...(node.transitions as Map<string, TransitionDefinitionLike[]>).entries(),
    ];
    if (node.always) groups.push(['always', node.always as TransitionDefinitionLike[]]);
    for (const [event, defs] of groups) {
      defs.forEach((def, index) => {
        const guard = describeGuard(def.guard);
        out.push({
          key: transitionKey(node.id, event, index),
          source: node.id,
          event,
          index,
          targets: (def.target ?? []).map((t) => t.id),
          ...(guard !== undefined && { guard }),
          reenter: def.reenter === true,
        });
      });
    }
  }
  return out;
}

/** The key of a transition definition as xstate reports it in `@xstate.microstep` inspection events. */
export function keyOfDefinition(def: TransitionDefinitionLike & { source: AnyStateNode }): string {
  const source = def.source;
  const event = def.eventType === '' || def.eventType === undefined ? 'always' : def.eventType;
  const list: readonly unknown[] =
    event === 'always' ? (source.always ?? []) : ((source.transitions as Map<string, unknown[]>).get(event) ?? []);
  return transitionKey(source.id, event, list.indexOf(def));
}
