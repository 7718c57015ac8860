/**
 * The completion backstop through createSession (`verifyTurn`): the host's check runs after every
 * turn the agent completed and its verdict is a durable `turn_verified` transcript entry; a failed
 * turn is not checked; a check that throws or answers nonsense is `unverified`; an engine whose turn
 * end is only cooperative is `unverified` without the check running (the agent's claim never
 * counts alone); the verdict survives a host restart in the journal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession, engineTier, FakeEngine, fakeEngine, FileJournal, MemoryJournal, MemoryStore, type EngineFactory, type Session, type TranscriptJournal, type TurnToVerify, type VerifyTurn } from '../../src/index.js';

describe('verifyTurn', () => {
  let dir: string;
  let session: Session | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ase-verify-'))));
  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function runTurns(factory: EngineFactory, verifyTurn: VerifyTurn, turns: string[], journal: TranscriptJournal = new MemoryJournal()) {
    session = await createSession({ agent: factory.name, engines: [factory], workDir: dir, store: new MemoryStore(), journal, verifyTurn, sessionId: 'verify-1' });
    for (const localId of turns) {
      const verdict = session.waitFor('transcript', (n) => n.entry.type === 'turn_verified' && (n.entry.payload as { localId: string }).localId === localId, { timeoutMs: 1_000 });
      await session.run(`do ${localId}`, { localId });
      await verdict.catch(() => undefined);
    }
    await session.stop();
    session = undefined;
    return (await journal.read('verify-1')).filter((e) => e.type === 'turn_verified').map((e) => e.payload);
  }

  it('records the check’s verdict for each completed turn, with what the turn said', async () => {
    const asked: TurnToVerify[] = [];
    let pass = true;
    const verdicts = await runTurns(
      fakeEngine(),
      (turn) => {
        asked.push(turn);
        const verdict = { ok: pass, reason: pass ? 'tests pass' : 'tests fail: 2 of 10' };
        pass = !pass;
        return verdict;
      },
      ['t1', 't2'],
    );
    expect(verdicts).toEqual([
      { localId: 't1', verdict: 'verified', reason: 'tests pass' },
      { localId: 't2', verdict: 'unverified', reason: 'tests fail: 2 of 10' },
    ]);
    expect(asked.map((t) => [t.localId, t.agent, t.tier.tier])).toEqual([
      ['t1', 'fake', 'hooked'],
      ['t2', 'fake', 'hooked'],
    ]);
    expect(asked[0]!.workDir).toBe(dir);
  });

  it('a failed turn is not checked; a throwing or silent check is unverified', async () => {
    let calls = 0;
    const failing = fakeEngine({ turns: [[{ complete: { status: 'failed' } }], [{ text: 'ok' }], [{ text: 'ok' }]] });
    const verdicts = await runTurns(
      failing,
      async () => {
        calls++;
        if (calls === 1) throw new Error('git not found');
        return undefined as never;
      },
      ['f1', 'f2', 'f3'],
    );
    expect(calls).toBe(2);
    expect(verdicts).toEqual([
      { localId: 'f2', verdict: 'unverified', reason: 'verifyTurn failed: git not found' },
      { localId: 'f3', verdict: 'unverified', reason: 'verifyTurn returned no verdict ({ok, reason})' },
    ]);
  });

  it('an engine whose turn end is only cooperative is unverified without running the check', async () => {
    let ran = false;
    const cooperative: EngineFactory = {
      name: 'cooperative',
      capabilities: { ...FakeEngine.capabilities, tier: engineTier('delegated', { turnEnd: 'cooperative', toolUse: 'cooperative', permission: 'absent', cost: 'absent', fileChanges: 'absent' }) },
      create: (context) => new FakeEngine(context, {}),
    };
    const verdicts = await runTurns(cooperative, () => ((ran = true), { ok: true, reason: 'done, the agent says' }), ['c1']);
    expect(ran).toBe(false);
    expect(verdicts).toEqual([{ localId: 'c1', verdict: 'unverified', reason: expect.stringContaining('turn end is cooperative (tier delegated)') }]);
  });

  it('the verdict is durable: a FileJournal read by the next host still has it', async () => {
    const journalDir = join(dir, 'journal');
    await runTurns(fakeEngine(), () => ({ ok: true, reason: 'worktree clean' }), ['d1'], new FileJournal({ dir: journalDir }));
    const again = new FileJournal({ dir: journalDir });
    const entries = await again.read('verify-1');
    const verified = entries.filter((e) => e.type === 'turn_verified');
    expect(verified.map((e) => e.payload)).toEqual([{ localId: 'd1', verdict: 'verified', reason: 'worktree clean' }]);
    // After the turn's own end, never before it.
    expect(entries.findIndex((e) => e.type === 'turn_verified')).toBeGreaterThan(entries.findIndex((e) => e.type === 'turn_complete'));
    await again.close?.();
  });
});
