/**
 * The SessionActor drawn as SVG from the machine itself: `toGraph` gives nested states and edges,
 * elkjs lays them out (compound states as nested children, layered, left to right), and we draw
 * rectangles, edge polylines and labels ourselves. Each state's group carries `data-state="<id>"`,
 * so the page highlights the active states by toggling a class, without re-laying anything out.
 */
import ELKImport from 'elkjs/lib/elk.bundled.js';
import type { AnyStateMachine } from 'xstate';
import { toGraph, type StateGraphNode } from '../actors/diagram.js';
import { sessionMachine } from '../actors/session.js';

// elkjs ships CommonJS: under NodeNext its default import is the class itself at runtime.
const ELK = ELKImport as unknown as new () => { layout(graph: ElkNode): Promise<ElkNode> };

interface ElkNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  labels?: { text: string; width?: number; height?: number; x?: number; y?: number }[];
  children?: ElkNode[];
  edges?: ElkEdge[];
  layoutOptions?: Record<string, string>;
}
interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: { text: string; width: number; height: number; x?: number; y?: number }[];
  sections?: { startPoint: { x: number; y: number }; endPoint: { x: number; y: number }; bendPoints?: { x: number; y: number }[] }[];
}

const CHAR = 7; // px per character at the 12px font the SVG uses
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const cache = new Map<AnyStateMachine, Promise<string>>();

/** The machine's diagram as an SVG document (laid out once per machine, then cached). */
export function diagramSvg(machine: AnyStateMachine = sessionMachine): Promise<string> {
  let svg = cache.get(machine);
  if (!svg) {
    svg = layoutSvg(machine);
    cache.set(machine, svg);
    svg.catch(() => cache.delete(machine));
  }
  return svg;
}

async function layoutSvg(machine: AnyStateMachine): Promise<string> {
  const { root, edges } = toGraph(machine);
  const anyId = `${root.id}.(any)`;
  const toElk = (n: StateGraphNode): ElkNode => {
    if (n.children.length === 0) return { id: n.id, width: Math.max(70, n.key.length * CHAR + 24), height: 32, labels: [{ text: n.key }] };
    return {
      id: n.id,
      labels: [{ text: n.key, width: n.key.length * CHAR, height: 16 }],
      layoutOptions: { 'elk.padding': '[top=28,left=12,bottom=12,right=12]', 'elk.nodeLabels.placement': 'INSIDE V_TOP H_LEFT' },
      children: n.children.map(toElk),
    };
  };
  const children = root.children.map(toElk);
  if (edges.some((e) => e.source === root.id)) children.push({ id: anyId, width: 80, height: 28, labels: [{ text: 'any state' }] });
  const graph: ElkNode = {
    id: root.id,
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'ROOT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '40',
      'elk.spacing.nodeNode': '24',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.edgeRouting': 'ORTHOGONAL',
    },
    children,
    edges: edges.map((e) => {
      const text = e.event === '' ? 'always' : e.event;
      return { id: e.id, sources: [e.source === root.id ? anyId : e.source], targets: [e.target], labels: [{ text, width: text.length * 6 + 4, height: 12 }] };
    }),
  };
  const laid = await new ELK().layout(graph);
  const width = Math.ceil((laid.width ?? 0) + 8);
  const height = Math.ceil((laid.height ?? 0) + 8);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="statechart" viewBox="-4 -4 ${width} ${height}" width="${width}" height="${height}" font-family="system-ui, sans-serif" font-size="12">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#667"/></marker></defs>',
    `<style>.state rect{fill:#fff;stroke:#99a;stroke-width:1.2}.state.compound>rect{fill:#f6f7fb}.state.active>rect{fill:#dff3e4;stroke:#1a7f37;stroke-width:2.5}.state.compound.active>rect{fill:#eef9f0}.edge path{fill:none;stroke:#889;stroke-width:1}.edge text{fill:#556;font-size:10px}.state text{fill:#223}</style>`,
  );
  const drawNode = (n: ElkNode, compound: boolean) => {
    const x = n.x ?? 0;
    const y = n.y ?? 0;
    const w = n.width ?? 0;
    const h = n.height ?? 0;
    const label = escapeXml(n.labels?.[0]?.text ?? n.id);
    const isAny = n.id === anyId;
    parts.push(`<g class="state${compound ? ' compound' : ''}" data-state="${escapeXml(n.id)}">`);
    if (!isAny) parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="8"/>`);
    parts.push(compound ? `<text x="${x + 10}" y="${y + 18}" font-weight="600">${label}</text>` : `<text x="${x + w / 2}" y="${y + h / 2 + 4}" text-anchor="middle"${isAny ? ' font-style="italic"' : ''}>${label}</text>`);
    parts.push('</g>');
    for (const child of n.children ?? []) drawNode(child, (child.children?.length ?? 0) > 0);
  };
  for (const child of laid.children ?? []) drawNode(child, (child.children?.length ?? 0) > 0);
  const allEdges: ElkEdge[] = [];
  const collect = (n: ElkNode) => {
    allEdges.push(...(n.edges ?? []));
    (n.children ?? []).forEach(collect);
  };
  collect(laid);
  for (const e of allEdges) {
    for (const s of e.sections ?? []) {
      const points = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint].map((p) => `${p.x},${p.y}`).join(' L');
      parts.push(`<g class="edge" data-edge="${escapeXml(e.id)}"><path d="M${points}" marker-end="url(#arrow)"/>`);
      const label = e.labels?.[0];
      if (label && label.x !== undefined && label.y !== undefined) parts.push(`<text x="${label.x}" y="${label.y + 9}">${escapeXml(label.text)}</text>`);
      parts.push('</g>');
    }
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
