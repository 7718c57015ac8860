/**
 * `ase sessions`: the sessions stored under the data directory, newest activity first, with their
 * agent, phase, last activity, turns, cost and working directory (`--json`: one object per line,
 * exact numbers, `parentId` on sub-agent sessions). The table shows the session tree: a sub-agent
 * session is indented under its parent; one whose parent is not listed stands at the top level,
 * marked. Listed by a supervisor over the data dir, as a server lists its sessions (this one opens
 * none, so every session is `stored`).
 */
import { createSupervisor, type SupervisedSessionInfo } from '../index.js';
import { openData } from './data-dir.js';
import { formatTime, formatUsd } from './format.js';
import type { Output } from './render.js';
import { treeOrder, type TreeRow } from './session-tree-order.js';

export interface SessionRow {
  sessionId: string;
  agent: string;
  workDir: string;
  phase: string;
  mode: string;
  /** `stored` here (`running` / `hibernated` for a session open in a supervisor). */
  status: SupervisedSessionInfo['status'];
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
  /** The session that started this one (a sub-agent session). */
  parentId?: string;
  /** The parent's tool call that started it. */
  parentCallId?: string;
}

export async function runSessions(options: { dataDir: string; json: boolean }, output: Output): Promise<number> {
  const { store, journal } = openData(options.dataDir);
  const supervisor = createSupervisor({ dataDir: options.dataDir, store, journal });
  const broken: { sessionId: string; code: string; message: string }[] = [];
  // One unreadable file must not hide the others.
  const rows = (await supervisor.list({ onUnreadable: (sessionId, error) => broken.push({ sessionId, code: error.code, message: error.message }) })).map(toRow);
  broken.sort((a, b) => a.sessionId.localeCompare(b.sessionId));
  rows.sort((a, b) => b.updatedAt - a.updatedAt || a.sessionId.localeCompare(b.sessionId));

  if (options.json) {
    for (const row of rows) output.out(`${JSON.stringify(row)}\n`);
    for (const b of broken) output.out(`${JSON.stringify({ sessionId: b.sessionId, error: { code: b.code, message: b.message } })}\n`);
  } else if (rows.length > 0) {
    const table = [
      ['ID', 'AGENT', 'PHASE', 'LAST ACTIVITY', 'TURNS', 'COST', 'WORKDIR'],
      ...treeOrder(rows).map((t) => [idCell(t), t.row.agent, t.row.phase, formatTime(t.row.updatedAt), String(t.row.turns), formatUsd(t.row.costUsd), t.row.workDir]),
    ];
    const widths = table[0]!.map((_, col) => Math.max(...table.map((line) => line[col]!.length)));
    for (const line of table) output.out(`${line.map((cell, col) => (col === line.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')}\n`);
  }
  if (!options.json) for (const b of broken) output.err(`ase sessions: ${b.sessionId}: ${b.code}: ${b.message}\n`);
  if (rows.length === 0 && broken.length === 0 && !options.json) output.err(`no sessions under ${options.dataDir}\n`);
  return broken.length > 0 ? 1 : 0;
}

/** The ID column: a child indented under its parent, an orphan marked with the parent it names. */
function idCell({ row, depth, orphanOf }: TreeRow<SessionRow>): string {
  const indent = depth === 0 ? '' : `${'  '.repeat(depth - 1)}└ `;
  return `${indent}${row.sessionId}${orphanOf !== undefined ? ` (orphan of ${orphanOf})` : ''}`;
}

function toRow(info: SupervisedSessionInfo): SessionRow {
  return {
    sessionId: info.sessionId,
    agent: info.agent,
    workDir: info.workDir,
    phase: info.phase,
    status: info.status,
    mode: info.mode,
    updatedAt: info.lastActivityAt,
    turns: info.usage.turns,
    inputTokens: info.usage.inputTokens,
    outputTokens: info.usage.outputTokens,
    costUsd: info.costUsd,
    queued: info.queued,
    openRequests: info.openRequests,
    ...(info.resumeToken !== undefined && { resumeToken: info.resumeToken }),
    ...(info.parentId !== undefined && { parentId: info.parentId }),
    ...(info.parentCallId !== undefined && { parentCallId: info.parentCallId }),
  };
}
