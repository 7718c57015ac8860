/**
 * `ase show ID`: one stored session, its state and its transcript, readable (one line per entry,
 * message text in full, tool input and output shortened) or `--json` (one object: the stored
 * state and every transcript entry, exact). A sub-agent session names its parent (and says when
 * the parent is no longer stored: an orphan).
 */
import { AseError, type TranscriptEntry, type VersionedSession } from '../index.js';
import { openData } from './data-dir.js';
import { formatTime, formatUsd } from './format.js';
import { bold, dim, type Output, summarize } from './render.js';

export async function runShow(options: { dataDir: string; sessionId: string; json: boolean }, output: Output): Promise<number> {
  const { store, journal } = openData(options.dataDir);
  const stored = await store.load(options.sessionId);
  const transcript = await journal.read(options.sessionId);
  if (!stored && transcript.length === 0) {
    throw new AseError('INVALID_INPUT', `no session "${options.sessionId}" under ${options.dataDir} (\`ase sessions\` lists them)`);
  }
  const parentId = stored?.state.parentId;
  const parentStored = parentId !== undefined && (await store.load(parentId).then((p) => p !== undefined, () => false));
  if (options.json) {
    const parent = parentId !== undefined ? { parentId, parentCallId: stored?.state.parentCallId ?? null, parentStored } : { parentId: null };
    output.out(`${JSON.stringify({ sessionId: options.sessionId, ...parent, version: stored?.version ?? null, state: stored?.state ?? null, transcript })}\n`);
    return 0;
  }
  output.out(header(options.sessionId, stored, parentStored));
  for (const entry of transcript) output.out(line(entry));
  return 0;
}

function header(sessionId: string, stored: VersionedSession | undefined, parentStored: boolean): string {
  if (!stored) return `${bold('session')}  ${sessionId} ${dim('(no stored state; transcript only)')}\n\n`;
  const s = stored.state;
  const u = s.usage;
  const call = s.parentCallId !== undefined ? ` (call ${s.parentCallId})` : '';
  return [
    `${bold('session')}  ${sessionId}`,
    ...(s.parentId !== undefined ? [`${bold('parent')}   ${s.parentId}${call}${parentStored ? '' : ` ${dim('(not stored: an orphan)')}`}`] : []),
    `${bold('agent')}    ${s.agent} in ${s.workDir}`,
    `${bold('phase')}    ${s.phase} (mode ${s.mode}, generation ${s.gen})${s.resumeToken ? `, agent session ${s.resumeToken}` : ''}`,
    `${bold('usage')}    ${u.turns} turn${u.turns === 1 ? '' : 's'}, ${u.inputTokens} in / ${u.outputTokens} out tokens, ${formatUsd(u.costUsd)}`,
    `${bold('updated')}  ${formatTime(s.updatedAt)}`,
    ...(s.queue.length > 0 ? [`${bold('queued')}   ${s.queue.map((q) => JSON.stringify(q.text)).join(', ')}`] : []),
    '',
    '',
  ].join('\n');
}

/** One transcript entry as `time  kind  text`; continuation lines of long text are indented. */
function line(entry: TranscriptEntry): string {
  const p = (entry.payload ?? {}) as Record<string, unknown>;
  const [kind, text] = describe(entry.type, p);
  const lead = `${dim(formatTime(entry.ts))}  ${kind.padEnd(10)}  `;
  const indent = ' '.repeat(19 + 2 + 10 + 2);
  return `${lead}${text.split('\n').join(`\n${indent}`)}\n`;
}

function describe(type: string, p: Record<string, unknown>): [string, string] {
  switch (type) {
    case 'user_message':
      return ['you', String(p['text'] ?? '')];
    case 'message': {
      const blocks = Array.isArray(p['blocks']) ? (p['blocks'] as { type: string; text?: string; name?: string; input?: unknown }[]) : [];
      const text = blocks
        .map((b) => (b.type === 'text' ? (b.text ?? '') : b.type === 'thinking' ? dim(`(thinking) ${b.text ?? ''}`) : b.type === 'tool_use' ? `[${b.name ?? 'tool'} ${summarize(b.input)}]` : ''))
        .filter((t) => t !== '')
        .join('\n');
      return [String(p['role'] ?? 'message'), text];
    }
    case 'tool_call':
      return ['tool', `${String(p['toolName'] ?? '?')} ${summarize(p['input'])}`];
    case 'tool_result':
      return ['result', `${String(p['status'] ?? '')}${p['output'] !== undefined ? ` ${summarize(p['output'])}` : ''}`];
    case 'permission_request': {
      const how = p['handledLocally'] ? ' (answered in the agent UI)' : p['refused'] ? ' (refused: not answerable now)' : '';
      return ['permission', `${String(p['requestId'])} asks to run ${String(p['toolName'] ?? '?')} ${summarize(p['input'])}${how}`];
    }
    case 'permission_resolved':
      return ['permission', `${String(p['requestId'])} ${String(p['status'])}${p['reason'] ? ` (${String(p['reason'])})` : ''}`];
    case 'turn_complete': {
      const u = (p['usage'] ?? {}) as { inputTokens?: number; outputTokens?: number; costUsd?: number };
      const cost = u.costUsd !== undefined ? `, ${formatUsd(u.costUsd)}` : '';
      return ['turn', `${String(p['status'])} (${u.inputTokens ?? 0} in / ${u.outputTokens ?? 0} out tokens${cost})`];
    }
    case 'plan': {
      const entries = Array.isArray(p['entries']) ? (p['entries'] as { content?: string; status?: string }[]) : [];
      return ['plan', entries.map((e) => `[${e.status === 'completed' ? 'x' : e.status === 'in_progress' ? '>' : ' '}] ${e.content ?? ''}`).join('\n')];
    }
    case 'agent_mode':
      return ['mode', String(p['modeId'] ?? '?')];
    case 'turn_ended':
      return ['turn', `${String(p['status'])}: ${String(p['reason'] ?? '')}`];
    case 'error':
      return ['error', `${String(p['kind'] ?? '')}: ${String(p['message'] ?? '')}`];
    case 'exited':
      return ['exited', `code ${String(p['code'])}${p['signal'] ? ` signal ${String(p['signal'])}` : ''}${p['reason'] ? ` (${String(p['reason'])})` : ''}`];
    case 'session_identified':
      return ['agent', `session ${String(p['resumeToken'])}${p['forkedFrom'] ? ` (forked from ${String(p['forkedFrom'])})` : ''}`];
    case 'mode_changed':
      return ['mode', String(p['to'])];
    default:
      return [type, summarize(p, 200)];
  }
}
