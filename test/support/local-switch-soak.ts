/**
 * The local-mode soak both real-CLI session tests run (claude-local-session, codex-local-session):
 * alternating switches, starting in local mode, with messages sent during the transitions.
 *
 * - local → remote: a `send` asks for remote control; a second one arrives while switching.
 * - remote → local: `switchMode('local')`; the resumed terminal UI must show the last answer (it
 *   reads the same transcript).
 *
 * It measures each switch and returns what was sent, in order; the caller checks delivery.
 */
import type { Session } from '../../src/index.js';
import type { HeadlessScreen } from './headless-screen.js';
import { phase, waitForNotice } from './session-notices.js';

const WAIT_MS = 60_000;

export interface SwitchSoakResult {
  switches: number;
  /** localIds, in the order sent. */
  sent: string[];
  /** ms: the `send` that asks for remote → the remote engine ready. */
  toRemote: number[];
  /** ms: `switchMode('local')` → the local phase. */
  toLocal: number[];
  /** ms: `switchMode('local')` → the last answer drawn by the resumed terminal UI. */
  toLocalScreen: number[];
}

export async function runSwitchSoak(session: Session, screen: HeadlessScreen, switchCount: number): Promise<SwitchSoakResult> {
  const result: SwitchSoakResult = { switches: 0, sent: [], toRemote: [], toLocal: [], toLocalScreen: [] };
  const waitFor = (pred: Parameters<typeof waitForNotice>[1], what: string) => waitForNotice(session, pred, what, WAIT_MS);
  for (let round = 0; result.switches < switchCount; round++) {
    const t0 = performance.now();
    const remoteIdle = waitFor(phase('idle'), 'remote idle after the sends');
    const remoteReady = waitFor((n) => n.type === 'status' && n.mode === 'remote' && (n.phase === 'running' || n.phase === 'idle'), 'remote ready');
    const a = `r${round}-a`;
    const b = `r${round}-b`;
    result.sent.push(a, b);
    const switching = waitFor(phase('switching'), 'switching');
    void session.send(`message ${a}`, { localId: a });
    await switching;
    void session.send(`message ${b}`, { localId: b });
    await remoteReady;
    result.toRemote.push(performance.now() - t0);
    await remoteIdle;
    if (++result.switches >= switchCount) break;

    const t1 = performance.now();
    const local = waitFor(phase('local'), 'local phase');
    await session.switchMode('local');
    await local;
    result.toLocal.push(performance.now() - t1);
    await screen.waitFor(new RegExp(`Echo: message ${b}`));
    result.toLocalScreen.push(performance.now() - t1);
    result.switches++;
  }
  return result;
}

/** `median N ms, p95 N ms (n=N)`. */
export function latencyStats(values: number[]): string {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN);
  return `median ${at(50)} ms, p95 ${at(95)} ms (n=${values.length})`;
}
