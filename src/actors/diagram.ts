/**
 * Renders a statechart as Mermaid `stateDiagram-v2`, built from the machine definition itself
 * (nesting from `machine.root`, edges from `listTransitions`), so the picture cannot drift from
 * the code. Targetless transitions (actions only) are left out: they do not change state.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { listTransitions } from './transitions.js';

const mermaidId = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');

export function toMermaid(machine: AnyStateMachine): string {
  const lines = ['stateDiagram-v2'];
  const edges = listTransitions(machine).filter((t) => t.targets.length > 0);

  const renderNode = (node: AnyStateNode, depth: number) => {
    const pad = '  '.repeat(depth);
    const children = Object.values(node.states) as AnyStateNode[];
    if (node.initial?.target?.[0]) {
      lines.push(`${pad}[*] --> ${mermaidId(node.initial.target[0].id)}`);
    }
    for (const child of children) {
      const id = mermaidId(child.id);
      const grandchildren = Object.values(child.states);
      if (grandchildren.length > 0) {
        lines.push(`${pad}state "${child.key}" as ${id} {`);
        renderNode(child, depth + 1);
        lines.push(`${pad}}`);
      } else {
        lines.push(`${pad}state "${child.key}" as ${id}`);
      }
      if (child.type === 'final') lines.push(`${pad}${id} --> [*]`);
    }
  };
  renderNode(machine.root, 1);

  for (const edge of edges) {
    const source = edge.source === machine.root.id ? `${mermaidId(edge.source)}_any` : mermaidId(edge.source);
    for (const target of edge.targets) {
      const label = edge.guard ? `${edge.event} [${edge.guard}]` : edge.event;
      lines.push(`  ${source} --> ${mermaidId(target)} : ${label}`);
    }
  }
  if (edges.some((e) => e.source === machine.root.id)) {
    lines.push(`  note right of ${mermaidId(machine.root.id)}_any : any state (root-level transitions)`);
  }
  return `${lines.join('\n')}\n`;
}

/** One state of a statechart as plain data: nesting from the machine, for layouts and `--format json`. */
export interface StateGraphNode {
  /** The state node id, e.g. `session.remote.idle`. */
  id: string;
  key: string;
  type: string;
  /** The child entered first (compound states). */
  initial?: string;
  children: StateGraphNode[];
}

/** One transition; `source` is the machine's root id for transitions taken from any state. */
export interface StateGraphEdge {
  id: string;
  source: string;
  target: string;
  event: string;
  guard?: string;
}

export interface StateGraph {
  root: StateGraphNode;
  edges: StateGraphEdge[];
}

/** The statechart as JSON: nested states and every state-changing transition. */
export function toGraph(machine: AnyStateMachine): StateGraph {
  const node = (n: AnyStateNode): StateGraphNode => ({
    id: n.id,
    key: n.key,
    type: n.type,
    ...(n.initial?.target?.[0] && { initial: n.initial.target[0].id }),
    children: (Object.values(n.states) as AnyStateNode[]).map(node),
  });
  const edges: StateGraphEdge[] = [];
  for (const t of listTransitions(machine)) {
    for (const [i, target] of t.targets.entries()) {
      edges.push({ id: `${t.key}>${i}`, source: t.source, target, event: t.event, ...(t.guard && { guard: t.guard }) });
    }
  }
  return { root: node(machine.root), edges };
}

const dotId = (id: string) => JSON.stringify(id);

/** The statechart as Graphviz DOT: compound states as clusters, root-level transitions from an "any state" node. */
export function toDot(machine: AnyStateMachine): string {
  const { root, edges } = toGraph(machine);
  const lines = ['digraph SessionActor {', '  compound=true;', '  rankdir=LR;', '  node [shape=box, style=rounded, fontname="sans-serif"];', '  edge [fontname="sans-serif", fontsize=10];'];
  const render = (n: StateGraphNode, depth: number) => {
    const pad = '  '.repeat(depth);
    for (const child of n.children) {
      if (child.children.length > 0) {
        lines.push(`${pad}subgraph ${dotId(`cluster_${child.id}`)} {`, `${pad}  label=${dotId(child.key)};`, `${pad}  style=rounded;`);
        // A cluster cannot be an edge end in DOT: its initial child stands in for it.
        render(child, depth + 1);
        lines.push(`${pad}}`);
      } else {
        lines.push(`${pad}${dotId(child.id)} [label=${dotId(child.key)}${child.type === 'final' ? ', peripheries=2' : ''}];`);
      }
    }
  };
  render(root, 1);
  const anyId = `${root.id}.(any)`;
  if (edges.some((e) => e.source === root.id)) lines.push(`  ${dotId(anyId)} [label="any state", shape=plaintext];`);
  const byId = new Map<string, StateGraphNode>();
  const index = (n: StateGraphNode) => {
    byId.set(n.id, n);
    n.children.forEach(index);
  };
  index(root);
  // An edge to or from a compound state attaches to its initial leaf, clipped at the cluster.
  const leaf = (id: string): string => {
    let n = byId.get(id);
    while (n && n.children.length > 0) n = byId.get(n.initial ?? n.children[0]!.id);
    return n?.id ?? id;
  };
  for (const e of edges) {
    const source = e.source === root.id ? anyId : leaf(e.source);
    const target = leaf(e.target);
    const attrs = [`label=${dotId(e.guard ? `${e.event} [${e.guard}]` : e.event)}`];
    if (source !== e.source && e.source !== root.id) attrs.push(`ltail=${dotId(`cluster_${e.source}`)}`);
    if (target !== e.target) attrs.push(`lhead=${dotId(`cluster_${e.target}`)}`);
    lines.push(`  ${dotId(source)} -> ${dotId(target)} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
