/**
 * The invariants the model-based walks check after every step, as plain functions returning the
 * broken rules (no test runner): over the runtime's effect log (one live generation at a time,
 * generations in order, nothing sent to a stale or stopped one, every accepted send delivered at
 * most once and never lost, every permission request answered at most once), and over the
 * session's state (runtime timers mirror the context, no request both open and completed).
 * The kit's `modelBasedHarness` and the repository's own model tests (test/model-based) share them.
 */
import type { Effect } from '../events/effect.js';

/** The effect-log rules `effects` breaks; `accepted`: local ids of sends the session accepted; `queued`: those still queued. */
export function effectLogViolations(effects: readonly Effect[], accepted: readonly string[], queued: readonly string[]): string[] {
  const problems: string[] = [];
  let newest = 0;
  const stopped = new Set<number>();
  const delivered: string[] = [];
  const answered = new Set<string>();
  for (const [i, e] of effects.entries()) {
    const where = `effect #${i} ${JSON.stringify(e).slice(0, 300)}`;
    switch (e.type) {
      case 'engine.start':
        // A restored session continues after its stored generation; after that, +1 each time.
        if (newest > 0 && e.gen !== newest + 1) problems.push(`${where}: generations start in order (expected ${newest + 1})`);
        if (newest > 0 && !stopped.has(newest)) problems.push(`${where}: gen ${newest} must be stopped first`);
        newest = e.gen;
        break;
      case 'engine.stop':
        if (e.gen !== newest) problems.push(`${where}: stop names gen ${e.gen}, not the newest ${newest}`);
        if (stopped.has(e.gen)) problems.push(`${where}: stopped twice`);
        stopped.add(e.gen);
        break;
      case 'engine.send':
      case 'engine.abort':
      case 'engine.configure':
      case 'engine.answer_permission':
        if (e.gen !== newest) problems.push(`${where}: names a stale gen`);
        if (stopped.has(e.gen)) problems.push(`${where}: sent to a stopped gen`);
        if (e.type === 'engine.send') {
          if (delivered.includes(e.message.localId)) problems.push(`${where}: delivered twice`);
          delivered.push(e.message.localId);
        }
        if (e.type === 'engine.answer_permission') {
          if (answered.has(e.requestId)) problems.push(`${where}: answered twice`);
          answered.add(e.requestId);
        }
        break;
      case 'transcript.emit':
        if (e.entry.type === 'exited') stopped.add(e.entry.gen);
        break;
      default:
        break;
    }
  }
  for (const id of accepted) if (!delivered.includes(id) && !queued.includes(id)) problems.push(`accepted send ${id} was lost`);
  for (const id of queued) if (delivered.includes(id)) problems.push(`queued send ${id} was also delivered`);
  return problems;
}

/** What the state rules need to see of a running session. */
export interface SessionStateView {
  /** Timer ids armed in the runtime. */
  armedTimers: readonly string[];
  /** Timer ids in the statechart's context. */
  contextTimers: readonly string[];
  openRequests: readonly string[];
  completedRequests: readonly string[];
  /** The session has ended. */
  done: boolean;
}

/** The state rules `view` breaks. */
export function sessionStateViolations(view: SessionStateView): string[] {
  const problems: string[] = [];
  if (!view.done) {
    const armed = [...view.armedTimers].sort().join(', ');
    const context = [...view.contextTimers].sort().join(', ');
    if (armed !== context) problems.push(`runtime timers [${armed}] do not mirror the context's [${context}]`);
  }
  for (const id of view.openRequests) if (view.completedRequests.includes(id)) problems.push(`request ${id} both open and completed`);
  if (view.done && view.openRequests.length > 0) problems.push(`open requests at the end: ${view.openRequests.join(', ')}`);
  return problems;
}
