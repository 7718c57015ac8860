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
