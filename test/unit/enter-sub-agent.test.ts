/**
 * enterSubAgent (src/cli/enter-sub-agent.ts): the steps both desks take to enter a sub-agent, in
 * order, with their refusals. The real moves, on real agents at a real terminal, are
 * test/real-cli/ase-sub-agent-codex-tmux.test.ts (in process) and ase-attach-sub-agent-tmux.test.ts (on a server).
 */
import { describe, expect, it } from 'vitest';
import { enterSubAgent } from '../../src/cli/enter-sub-agent.js';

function child(state: { phase?: string; mode?: string }, fail: { focus?: boolean; interrupt?: boolean; local?: boolean } = {}) {
  const steps: string[] = [];
  const refuse = (what: string) => Promise.reject(new Error(`${what} refused`));
  return {
    steps,
    run: () =>
      enterSubAgent({
        focus: () => (steps.push('focus'), fail.focus ? refuse('focus') : Promise.resolve('handle')),
        state: (handle) => (steps.push(`state ${handle}`), state),
        interrupt: (handle) => (steps.push(`interrupt ${handle}`), fail.interrupt ? refuse('interrupt') : Promise.resolve()),
        switchToLocal: (handle) => (steps.push(`local ${handle}`), fail.local ? refuse('local') : Promise.resolve()),
      }),
  };
}

describe('enterSubAgent', () => {
  it('a running remote child: focus, interrupt, local, in that order; resolves with the handle', async () => {
    const c = child({ phase: 'running', mode: 'remote' });
    await expect(c.run()).resolves.toBe('handle');
    expect(c.steps).toEqual(['focus', 'state handle', 'interrupt handle', 'local handle']);
  });

  it('an idle child is not interrupted; a local one is not switched', async () => {
    const idle = child({ phase: 'idle', mode: 'remote' });
    await idle.run();
    expect(idle.steps).toEqual(['focus', 'state handle', 'local handle']);
    const local = child({ phase: 'idle', mode: 'local' });
    await local.run();
    expect(local.steps).toEqual(['focus', 'state handle']);
  });

  it('a refused interrupt does not stop the entry (the turn may have ended); a refused focus or switch rejects, and nothing follows a refused focus', async () => {
    const late = child({ phase: 'running', mode: 'remote' }, { interrupt: true });
    await expect(late.run()).resolves.toBe('handle');
    expect(late.steps.at(-1)).toBe('local handle');
    const refused = child({ phase: 'running', mode: 'remote' }, { focus: true });
    await expect(refused.run()).rejects.toThrow('focus refused');
    expect(refused.steps).toEqual(['focus']);
    await expect(child({ phase: 'idle', mode: 'remote' }, { local: true }).run()).rejects.toThrow('local refused');
  });
});
