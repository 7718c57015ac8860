/**
 * Property tests of the session tree's rules (src/session/session-tree-state.ts), over any
 * sequence of spawn / enter / exit / complete / deliver / crash-during-delivery / host restart
 * (the record round-tripped through JSON, as the file keeps it):
 * - focus: exactly one focused session per tree; it is active; every suspended session is one of
 *   its ancestors and every ancestor is suspended (so at most one session is interactive);
 * - completion: a completed child's result reaches its parent at most once, and exactly once after
 *   a delivery pass, also when a host died between sending it and noting it;
 * - no fork: enter/exit/restart never change a session's agent identity, and a parent that comes
 *   back with another resume token is refused (RESUME_FORKED) with the tree unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import * as tree from '../../src/session/session-tree-state.js';

type Op =
  | { op: 'spawn'; parent: number }
  | { op: 'enter'; child: number }
  | { op: 'exit'; forked: boolean }
  | { op: 'complete'; child: number }
  | { op: 'deliver'; crashAfterSend: boolean }
  | { op: 'restart' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('spawn' as const), parent: fc.nat(8) }),
  fc.record({ op: fc.constant('enter' as const), child: fc.nat(8) }),
  fc.record({ op: fc.constant('exit' as const), forked: fc.boolean() }),
  fc.record({ op: fc.constant('complete' as const), child: fc.nat(8) }),
  fc.record({ op: fc.constant('deliver' as const), crashAfterSend: fc.boolean() }),
  fc.constant({ op: 'restart' as const }),
);

/** Each session's agent identity: what its resume token is (a fork would change it). */
const tokenOf = (id: string) => `agent-${id}`;

function ancestors(rec: tree.TreeRecord, id: string): string[] {
  const out: string[] = [];
  for (let p = rec.nodes[id]?.parentId; p !== undefined; p = rec.nodes[p]?.parentId) out.push(p);
  return out;
}

function checkInvariants(rec: tree.TreeRecord, inbox: Map<string, number>): void {
  const focus = rec.nodes[rec.focus];
  expect(focus, 'the focus is a session of the tree').toBeDefined();
  expect(focus!.state).toBe('active');
  const path = new Set(ancestors(rec, rec.focus));
  for (const n of Object.values(rec.nodes)) {
    if (path.has(n.sessionId)) expect(n.state, `${n.sessionId} is an ancestor of the focus`).toBe('suspended');
    else expect(n.state, `${n.sessionId} is off the focus path`).not.toBe('suspended');
    // No fork: a noted token is always the session's own identity.
    if (n.resumeTokenAtSuspend !== undefined) expect(n.resumeTokenAtSuspend).toBe(tokenOf(n.sessionId));
  }
  for (const [child, count] of inbox) {
    expect(count, `result of ${child} delivered at most once`).toBeLessThanOrEqual(1);
    expect(rec.nodes[child]?.state).toBe('completed');
  }
}

describe('session tree properties', () => {
  it('focus, exactly-once completion and no fork hold across any sequence', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        let rec = tree.newTree('s0');
        let next = 1;
        /** The parent's inbox: localIds it accepted (a duplicate is refused, like DUPLICATE_SEND). */
        const accepted = new Set<string>();
        const inbox = new Map<string, number>();
        const ids = () => Object.keys(rec.nodes);
        const attempt = (change: () => tree.TreeRecord): void => {
          const before = JSON.stringify(rec);
          try {
            rec = change();
          } catch (error) {
            expect(isAseError(error)).toBe(true);
            expect(JSON.stringify(rec)).toBe(before); // a refused change leaves the tree as it was
          }
        };
        const deliver = (crashAfterSend: boolean): void => {
          for (const child of tree.undelivered(rec)) {
            const { localId } = tree.resultMessage(child);
            if (!accepted.has(localId)) {
              accepted.add(localId);
              inbox.set(child.sessionId, (inbox.get(child.sessionId) ?? 0) + 1);
            }
            if (crashAfterSend) return; // the host died before noting it
            rec = tree.markDelivered(rec, child.sessionId);
          }
        };
        for (const step of ops) {
          const all = ids();
          switch (step.op) {
            case 'spawn':
              attempt(() => tree.addChild(rec, all[step.parent % all.length]!, `s${next++}`));
              break;
            case 'enter':
              attempt(() => tree.enter(rec, all[step.child % all.length]!, tokenOf(rec.focus)));
              break;
            case 'exit': {
              const parent = rec.nodes[rec.focus]?.parentId;
              const token = parent === undefined ? undefined : step.forked ? `${tokenOf(parent)}-fork` : tokenOf(parent);
              const before = rec.focus;
              attempt(() => tree.exit(rec, token));
              if (step.forked && parent !== undefined) expect(rec.focus, 'a forked parent does not take the focus').toBe(before);
              break;
            }
            case 'complete':
              attempt(() => tree.complete(rec, all[step.child % all.length]!, 'done'));
              break;
            case 'deliver':
              deliver(step.crashAfterSend);
              break;
            case 'restart':
              rec = JSON.parse(JSON.stringify(rec)) as tree.TreeRecord;
              break;
          }
          checkInvariants(rec, inbox);
        }
        // A final delivery pass (as openSessionTree runs after a restart): every completed child's result, once.
        deliver(false);
        checkInvariants(rec, inbox);
        for (const n of Object.values(rec.nodes)) if (n.state === 'completed' && n.parentId !== undefined) expect(inbox.get(n.sessionId)).toBe(1);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });
});
