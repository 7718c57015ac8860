/**
 * `ase sessions`: the sessions stored under the data directory, newest activity first, with their
 * agent, phase, last activity, turns, cost and working directory (`--json`: one object per line,
 * exact numbers).
 */
import { isAseError, type VersionedSession } from '../index.js';
import { openData } from './data-dir.js';
import { formatTime, formatUsd } from './format.js';
import type { Output } from './render.js';

export interface SessionRow {
  sessionId: string;
  agent: string;
  workDir: string;
  phase: string;
  mode: string;
  /** Last time the session's state was written (epoch ms). */
  updatedAt: number;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  /** Exact sum of the turns' reported costs. */
  costUsd: number;
  queued: number;
  openRequests: number;
  resumeToken?: string;
}

export async function runSessions(options: { dataDir: string; json: boolean }, output: Output): Promise<number> {
  const { store } = openData(options.dataDir);
  const rows: SessionRow[] = [];
  const broken: { sessionId: string; code: string; message: string }[] = [];
  for (const sessionId of await store.list()) {
    try {
      const stored = await store.load(sessionId);
      if (stored) rows.push(toRow(stored));
    } catch (error) {
      // One unreadable file must not hide the others.
      if (!isAseError(error)) throw error;
      broken.push({ sessionId, code: error.code, message: error.message });
    }
  }
  rows.sort((a, b) => b.updatedAt - a.updatedAt || a.sessionId.localeCompare(b.sessionId));

  if (options.json) {
    for (const row of rows) output.out(`${JSON.stringify(row)}\n`);
    for (const b of broken) output.out(`${JSON.stringify({ sessionId: b.sessionId, error: { code: b.code, message: b.message } })}\n`);
  } else if (rows.length > 0) {
    const table = [
      ['ID', 'AGENT', 'PHASE', 'LAST ACTIVITY', 'TURNS', 'COST', 'WORKDIR'],
      ...rows.map((r) => [r.sessionId, r.agent, r.phase, formatTime(r.updatedAt), String(r.turns), formatUsd(r.costUsd), r.workDir]),
    ];
    const widths = table[0]!.map((_, col) => Math.max(...table.map((line) => line[col]!.length)));
    for (const line of table) output.out(`${line.map((cell, col) => (col === line.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')}\n`);
  }
  if (!options.json) for (const b of broken) output.err(`ase sessions: ${b.sessionId}: ${b.code}: ${b.message}\n`);
  if (rows.length === 0 && broken.length === 0 && !options.json) output.err(`no sessions under ${options.dataDir}\n`);
  return broken.length > 0 ? 1 : 0;
}

function toRow({ state }: VersionedSession): SessionRow {
  return {
    sessionId: state.sessionId,
    agent: state.agent,
    workDir: state.workDir,
    phase: state.phase,
    mode: state.mode,
    updatedAt: state.updatedAt,
    turns: state.usage.turns,
    inputTokens: state.usage.inputTokens,
    outputTokens: state.usage.outputTokens,
    costUsd: state.usage.costUsd,
    queued: state.queue.length,
    openRequests: Object.keys(state.requests).length,
    ...(state.resumeToken !== undefined && { resumeToken: state.resumeToken }),
  };
}
