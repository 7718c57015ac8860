/**
 * `ase inspect ID`: the inspector in the terminal. Replays the session's durable log: one line per
 * entry with the chart state it leads to, or, with `--at-seq N`, the chart at that seq; `--svg`
 * prints the statechart with that state highlighted, `--json` the chart and the entries.
 */
import { AseError, chartAt, type TranscriptEntry } from '../index.js';
import { diagramSvg } from '../server.js';
import { openData } from './data-dir.js';
import { bold, dim, type Output } from './render.js';

export interface InspectArgs {
  dataDir: string;
  sessionId: string;
  atSeq?: number;
  json: boolean;
  svg: boolean;
}

export async function runInspect(args: InspectArgs, output: Output): Promise<number> {
  const { store, journal } = openData(args.dataDir);
  try {
    const entries = await journal.read(args.sessionId, args.atSeq !== undefined ? { beforeSeq: args.atSeq + 1 } : undefined);
    if (entries.length === 0 && !(await store.load(args.sessionId))) {
      throw new AseError('INVALID_INPUT', `no session "${args.sessionId}" under ${args.dataDir} (\`ase sessions\` lists them)`);
    }
    const chart = chartAt(entries);
    if (args.json) {
      output.out(`${JSON.stringify({ sessionId: args.sessionId, chart, entries })}\n`);
      return 0;
    }
    if (args.svg) {
      output.out(highlightSvg(await diagramSvg(), chart.active));
      return 0;
    }
    const seen: TranscriptEntry[] = [];
    for (const entry of entries) {
      seen.push(entry);
      const at = chartAt(seen);
      output.out(`${dim(`#${String(entry.seq).padStart(4)}`)} ${entry.type.padEnd(20)} → ${JSON.stringify(at.value)}\n`);
    }
    output.out(`\n${bold('chart')} at seq ${chart.seq}: ${JSON.stringify(chart.value)} (mode ${chart.mode}, gen ${chart.gen}${chart.turn ? `, turn ${chart.turn}` : ''}${Object.keys(chart.openPermissions).length > 0 ? `, open permissions ${Object.keys(chart.openPermissions).join(', ')}` : ''})\n`);
    return 0;
  } finally {
    await journal.close();
  }
}

/** Marks the active states' groups in the diagram (the page does the same with a class toggle). */
export function highlightSvg(svg: string, active: readonly string[]): string {
  return svg.replace(/<g class="state( compound)?" data-state="([^"]+)">/g, (whole, compound: string | undefined, id: string) =>
    active.includes(id) ? `<g class="state${compound ?? ''} active" data-state="${id}">` : whole,
  );
}
