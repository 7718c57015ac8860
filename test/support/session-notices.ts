/** Waiting on a SessionActor's notices in real-CLI tests: resolves on arrival, no sleeps. */
import type { AgentEvent, Session, SessionNotice } from '../../src/index.js';

const WAIT_MS = 30_000;

/** Resolves with the first notice matching `pred` from now on; rejects after `timeoutMs` (30 s) naming `what`. */
export function waitForNotice<T extends SessionNotice>(session: Session, pred: (n: SessionNotice) => n is T, what: string, timeoutMs?: number): Promise<T>;
export function waitForNotice(session: Session, pred: (n: SessionNotice) => boolean, what: string, timeoutMs?: number): Promise<SessionNotice>;
export function waitForNotice(session: Session, pred: (n: SessionNotice) => boolean, what: string, timeoutMs = WAIT_MS): Promise<SessionNotice> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    const off = session.on('*', (n) => {
      if (!pred(n)) return;
      clearTimeout(timer);
      off();
      resolve(n);
    });
  });
}

/** Matches the `agent` notice that carries an engine event of `type`. */
export const agentEvent = (type: AgentEvent['type']) => (n: SessionNotice) => n.type === 'agent' && n.event.type === type;

/** Matches the `status` notice of phase `name`. */
export const phase = (name: string) => (n: SessionNotice) => n.type === 'status' && n.phase === name;
