/**
 * The typed delivery of a sub-agent's result (src/session/typed-result.ts) against the parts of the
 * Session contract it uses: it settles when the parent's agent reports the prompt, and at once when
 * the parent ends first (not after its whole wait); an empty first line is sent, never typed; a
 * parent whose UI is attached but not ready yet (phase `starting`: its engine may still wait for the
 * host tools) is typed into only at ready, and not at all if it leaves local mode first.
 */
import { describe, expect, it } from 'vitest';
import type { Session } from '../../src/index.js';
import { typedResultDelivery } from '../../src/session/typed-result.js';

function parentSession(phase = 'local') {
  let endSession!: () => void;
  const listeners = new Set<(notice: { event: unknown }) => void>();
  const statusListeners = new Set<(notice: { phase: string; mode: string }) => void>();
  const typed: string[] = [];
  const sent: string[] = [];
  const state = { phase, mode: 'local' };
  const parent = {
    id: 'parent',
    snapshot: () => ({ ...state }),
    terminal: { attached: true, write: (data: string) => void typed.push(data) },
    on: (type: string, listener: (notice: any) => void) => {
      const set = type === 'status' ? statusListeners : listeners;
      set.add(listener);
      return () => set.delete(listener);
    },
    send: async (text: string) => void sent.push(text),
    done: new Promise<void>((resolve) => (endSession = resolve)),
  } as unknown as Session;
  const report = (text: string) => {
    for (const listener of [...listeners]) listener({ event: { type: 'message', role: 'user', id: 'u', blocks: [{ type: 'text', text }] } });
  };
  /** The session's phase changes (its `status` notice). */
  const status = (next: { phase: string; mode?: string }) => {
    Object.assign(state, next);
    for (const listener of [...statusListeners]) listener({ ...state });
  };
  return { parent, typed, sent, report, status, end: () => endSession(), listeners, statusListeners };
}

describe('typedResultDelivery', () => {
  it('types the result and settles when the parent reports it as a user message', async () => {
    const p = parentSession();
    const delivered = typedResultDelivery({ confirmMs: 60_000 })(p.parent, { localId: 'l', text: '[sub-agent a finished]\nthe answer' });
    expect(p.typed[0]).toBe('\x1b[200~[sub-agent a finished]\nthe answer\x1b[201~');
    p.report('something else the person typed');
    p.report('[sub-agent a finished]\nthe answer');
    await expect(delivered).resolves.toBeUndefined();
    expect(p.listeners.size).toBe(0);
  });

  it('rejects at once with SESSION_STOPPED when the parent ends before it took the result', async () => {
    const p = parentSession();
    const delivered = typedResultDelivery({ confirmMs: 60_000 })(p.parent, { localId: 'l', text: '[sub-agent a finished]\nx' });
    const started = Date.now();
    p.end();
    await expect(delivered).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(p.listeners.size).toBe(0);
  });

  it('waits for the parent\'s UI to be ready (phase local) before it types: a UI just started may not have its host tools yet', async () => {
    const p = parentSession('starting');
    const delivered = typedResultDelivery({ confirmMs: 60_000 })(p.parent, { localId: 'l', text: '[sub-agent a finished]\nthe answer' });
    expect(p.typed).toEqual([]);
    p.status({ phase: 'starting' });
    expect(p.typed).toEqual([]);
    p.status({ phase: 'local' });
    expect(p.typed[0]).toBe('\x1b[200~[sub-agent a finished]\nthe answer\x1b[201~');
    p.status({ phase: 'local' }); // a later status types nothing more
    p.report('[sub-agent a finished]\nthe answer');
    await expect(delivered).resolves.toBeUndefined();
    expect(p.typed.filter((t) => t.startsWith('\x1b[200~')).length).toBe(1);
    expect(p.statusListeners.size).toBe(0);
  });

  it('a parent that leaves local mode before its UI is ready is not typed into: undelivered at once, the next attempt sends', async () => {
    const p = parentSession('starting');
    const deliver = typedResultDelivery({ confirmMs: 60_000 });
    const message = { localId: 'l', text: '[sub-agent a finished]\nx' };
    const delivered = deliver(p.parent, message);
    p.status({ phase: 'switching', mode: 'remote' });
    await expect(delivered).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
    expect(p.typed).toEqual([]);
    expect(p.listeners.size + p.statusListeners.size).toBe(0);
    await deliver(p.parent, message);
    expect(p.sent).toEqual(['[sub-agent a finished]\nx']);
  });

  it('sends (never types) a result whose first line is empty: any prompt would match it', async () => {
    const p = parentSession();
    await typedResultDelivery()(p.parent, { localId: 'l', text: '\nonly a body' });
    expect(p.typed).toEqual([]);
    expect(p.sent).toEqual(['\nonly a body']);
  });

  it('a result typed once is never typed again: after a timeout the retry waits for the same prompt, and settles when the parent takes it', async () => {
    const p = parentSession();
    const deliver = typedResultDelivery({ confirmMs: 50 });
    const message = { localId: 'l', text: '[sub-agent a finished]\nthe answer' };
    // The parent is busy: its agent does not report the prompt within the wait.
    await expect(deliver(p.parent, message)).rejects.toMatchObject({ code: 'TIMEOUT' });
    const pastes = () => p.typed.filter((t) => t.startsWith('\x1b[200~')).length;
    expect(pastes()).toBe(1);
    // The tree tries again (its next change): nothing typed or sent a second time.
    const retry = deliver(p.parent, message);
    expect(pastes()).toBe(1);
    p.report('[sub-agent a finished]\nthe answer');
    await expect(retry).resolves.toBeUndefined();
    expect(pastes()).toBe(1);
    expect(p.sent).toEqual([]);
    expect(p.listeners.size).toBe(0);
    // Taken even before a retry asks: the retry resolves at once.
    const q = parentSession();
    const other = typedResultDelivery({ confirmMs: 50 });
    await expect(other(q.parent, message)).rejects.toMatchObject({ code: 'TIMEOUT' });
    q.report('[sub-agent a finished]\nthe answer');
    await expect(other(q.parent, message)).resolves.toBeUndefined();
    expect(q.typed.filter((t) => t.startsWith('\x1b[200~')).length).toBe(1);
    expect(q.sent).toEqual([]);
  });
});
