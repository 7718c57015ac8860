/** `ase diagram`: the SessionActor as Mermaid, generated from the machine. */
import { sessionMachine, toMermaid } from '../index.js';
import type { Output } from './render.js';

export function runDiagram(output: Output): number {
  output.out(toMermaid(sessionMachine));
  return 0;
}
