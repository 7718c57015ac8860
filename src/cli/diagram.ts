/** `ase diagram [--format mermaid|dot|svg|json]`: the SessionActor statechart, generated from the machine. */
import { sessionMachine, toDot, toGraph, toMermaid } from '../index.js';
import { diagramSvg } from '../server.js';
import type { Output } from './render.js';

export const DIAGRAM_FORMATS = ['mermaid', 'dot', 'svg', 'json'] as const;
export type DiagramFormat = (typeof DIAGRAM_FORMATS)[number];

export async function runDiagram(output: Output, format: DiagramFormat = 'mermaid'): Promise<number> {
  switch (format) {
    case 'mermaid':
      output.out(toMermaid(sessionMachine));
      break;
    case 'dot':
      output.out(toDot(sessionMachine));
      break;
    case 'json':
      output.out(`${JSON.stringify(toGraph(sessionMachine), null, 2)}\n`);
      break;
    case 'svg':
      output.out(await diagramSvg(sessionMachine));
      break;
  }
  return 0;
}
