/**
 * The inspector's scrubber: the SessionActor's chart as a session's durable log says it was after
 * any seq. Folds transcript entries (what the actor journaled on its way: deliveries, turn ends,
 * exits, mode changes, permission requests and outcomes) into the state they imply, plus the facts
 * beside it. Timers and engine readiness are not journaled, so between two entries the chart shows
 * the settled state, not each passing one (`launching`, `confirming`). Neither is a stop or a
 * hibernation request: the clean exit that follows either shows as `stopped` (a hibernated session's
 * next message then shows it running again).
 */
import type { TranscriptEntry } from '../events/transcript-entry.js';

export interface ChartAt {
  /** The statechart value, e.g. `{ remote: 'running' }`, as `snapshot.value` would read. */
  value: string | Record<string, string>;
  /** The active state ids, outermost first (what the diagram highlights). */
  active: string[];
  mode: 'local' | 'remote';
  gen: number;
  /** Open permission requests: requestId → tool. */
  openPermissions: Record<string, string>;
  /** The localId of the turn in flight, if any. */
  turn: string | null;
  /** The seq of the last entry folded in (0: none). */
  seq: number;
  /** The type of the last entry folded in. */
  lastType: string | null;
}

type Payload = Record<string, unknown> | null | undefined;

export function chartAt(entries: readonly TranscriptEntry[], machineId = 'session'): ChartAt {
  let top = 'init';
  let child: string | undefined;
  let mode: 'local' | 'remote' = 'remote';
  let gen = 0;
  let turn: string | null = null;
  const open: Record<string, string> = {};
  let seq = 0;
  let lastType: string | null = null;
  const settle = () => {
    top = mode;
    child = mode === 'local' ? 'active' : turn ? 'running' : 'idle';
  };
  for (const entry of entries) {
    const p = entry.payload as Payload;
    seq = entry.seq ?? seq + 1;
    lastType = entry.type;
    gen = Math.max(gen, entry.gen);
    switch (entry.type) {
      case 'session_identified':
        settle();
        break;
      case 'user_message':
        turn = typeof p?.['localId'] === 'string' ? p['localId'] : 'turn';
        if (mode === 'remote') {
          top = 'remote';
          child = 'running';
        }
        break;
      case 'turn_complete':
      case 'turn_ended':
        turn = null;
        if (top === 'remote') child = 'idle';
        break;
      case 'interrupt_timed_out':
        top = 'switching';
        child = undefined;
        break;
      case 'mode_changed':
        if (p?.['to'] === 'local' || p?.['to'] === 'remote') mode = p['to'];
        top = 'switching';
        child = undefined;
        break;
      case 'exited': {
        const clean = p?.['code'] === 0 && (p?.['signal'] ?? null) === null;
        turn = null;
        for (const id of Object.keys(open)) delete open[id];
        // A stop is not journaled, its clean exit is (an unasked clean exit also ends in `stopped`).
        if (clean) top = 'stopped';
        else if (top !== 'switching') top = 'recovering';
        child = undefined;
        break;
      }
      case 'permission_request':
        if (typeof p?.['requestId'] === 'string') open[p['requestId']] = String(p['toolName'] ?? p['tool'] ?? 'tool');
        break;
      case 'permission_resolved':
        if (typeof p?.['requestId'] === 'string') delete open[p['requestId']];
        break;
      default:
        // Agent output (messages, tool calls) during a turn; anything after a restart settles.
        if (top === 'switching' || top === 'recovering' || top === 'init' || top === 'stopped') settle();
    }
  }
  const value = child ? { [top]: child } : top;
  const active = [machineId, `${machineId}.${top}`, ...(child ? [`${machineId}.${top}.${child}`] : [])];
  return { value, active, mode, gen, openPermissions: open, turn, seq, lastType };
}
