/** Waiting on a SessionActor's notices in real-CLI tests: resolves on arrival, no sleeps. */
import type { AgentEvent, Session, SessionNotice } from '../../src/index.js';

const WAIT_MS = 30_000;

/** Resolves with the first notice matching `pred` from now on; rejects after 30 s naming `what`. */
export function waitForNotice<T extends SessionNotice>(session: Session, pred: (n: SessionNotice) => n is T, what: string): Promise<T>;
export function waitForNotice(session: Session, pred: (n: SessionNotice) => boolean, what: string): Promise<SessionNotice>;
export function waitForNotice(session: Session, pred: (n: SessionNotice) => boolean, what: string): Promise<SessionNotice> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, WAIT_MS);
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
