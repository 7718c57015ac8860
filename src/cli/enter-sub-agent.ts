/**
 * Entering a sub-agent session from a desk: the same steps, in the same order, whether the session
 * runs in this process (`ase run --sub-agents`, run-local-tree.ts) or on a server (`ase attach`,
 * attach.ts); each desk supplies the steps in its own terms (Session calls or HTTP requests).
 *
 * 1. The tree's focus moves to the child (the tree's rules may refuse: nothing else happens then).
 * 2. A turn the child is still running is interrupted now, rather than after the mode switch's
 *    wait; its own UI shows where it stopped, and the person goes on from there.
 * 3. The child switches to local mode, so its own terminal UI resumes the same session.
 */

/** What entering needs of the child, wherever it runs; `Child` is the desk's handle on it. */
export interface SubAgentToEnter<Child> {
  /** Moves the tree's focus to the child and hands back the desk's handle on it; rejects when the tree refuses. */
  focus(): Promise<Child>;
  /** The child's phase and control mode now. */
  state(child: Child): Promise<{ phase?: string; mode?: string }> | { phase?: string; mode?: string };
  /** Interrupts its turn (a refusal does not matter: the turn may have ended meanwhile). */
  interrupt(child: Child): Promise<unknown>;
  /** Switches it to local mode. */
  switchToLocal(child: Child): Promise<unknown>;
}

/** Focus → interrupt a running turn → local mode; the desk then shows the child's terminal UI. Resolves with the handle. */
export async function enterSubAgent<Child>(steps: SubAgentToEnter<Child>): Promise<Child> {
  const child = await steps.focus();
  const { phase, mode } = await steps.state(child);
  if (phase === 'running') await steps.interrupt(child).catch(() => undefined);
  if (mode !== 'local') await steps.switchToLocal(child);
  return child;
}
