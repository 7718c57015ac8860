/**
 * Issue 15's "done when", with the REAL pinned Claude Code CLI against our mock Messages API: a
 * parent session spawns a sub-agent session, the person enters it, sends a message, exits, and the
 * parent continues as the same session: the same agent session id (resume token), never forked,
 * although it hibernated (its CLI stopped) while suspended; the child's result reaches it exactly
 * once, as a queued message its resumed CLI answers with the earlier history.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { createSupervisor, openSessionTree, type Session, type Supervisor } from '../../src/index.js';
import { lastUserText } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { useClaudeMockBench } from '../support/claude-mock-bench.js';

describe('session tree with the real Claude Code CLI', () => {
  let sup: Supervisor | undefined;
  const bench = useClaudeMockBench('ase-claude-tree-', async () => {
    await sup?.shutdown();
    sup = undefined;
  });

  const idle = (s: Session) => s.waitFor('status', (n) => n.phase === 'idle' || n.phase === 'hibernated', { timeoutMs: 30_000 });

  // Three Claude CLI starts in a row (parent, child, the parent resumed) and waits of up to 60 s of
  // its own: 60 s in all was too short beside the suite on a loaded 2-core machine (timed out twice at load 20).
  it('enter a sub-agent, talk to it, exit: the parent continues as the same session, its result delivered once', { timeout: 180_000 }, async () => {
    const work = join(bench.root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: bench.mock.port, root: bench.root });
    // Idle sessions stop their CLI after 400 ms: the suspended parent hibernates while the person is in the child.
    sup = createSupervisor({ dataDir: join(bench.root, 'data'), engines: [claudeEngine({ bin: claudeBinary() })], hibernateAfterMs: 400 });
    const parent = await sup.create({ agent: 'claude', workDir: work, engineOptions: { env }, sessionId: 'parent' });
    const parentTurn = await parent.run('PARENT: plan the work, remember the word kiwi', { localId: 'p1' });
    expect(parentTurn.status).toBe('completed');
    const parentToken = parent.snapshot().resumeToken!;
    expect(parentToken).toMatch(/^[0-9a-f-]{36}$/);

    const tree = await openSessionTree({ supervisor: sup, file: join(bench.root, 'tree.json'), rootId: 'parent' });
    const child = await tree.spawn('parent', { agent: 'claude', workDir: work, engineOptions: { env }, sessionId: 'child' });
    await tree.enter('child');
    expect(tree.focus).toBe('child');
    expect(tree.record().nodes['parent']).toMatchObject({ state: 'suspended', resumeTokenAtSuspend: parentToken });

    // The person drives the child.
    const childTurn = await child.run('CHILD: check the tests', { localId: 'c1' });
    expect(childTurn.text).toBe('Echo: CHILD: check the tests');
    // Meanwhile the parent hibernated: its CLI is gone, the session is not.
    if (parent.snapshot().phase !== 'hibernated') await parent.waitFor('status', (n) => n.phase === 'hibernated', { timeoutMs: 30_000 });
    expect(sup.get('parent')).toBe(parent);

    const back = await tree.exit();
    expect(back).toBe(parent);
    expect(tree.focus).toBe('parent');
    const requestsBefore = bench.mock.requests.length;
    const delivered = parent.waitFor('agent', (n) => n.event.type === 'turn_complete', { timeoutMs: 60_000 });
    await tree.complete('child');
    await delivered;
    await idle(parent).catch(() => undefined);

    // The parent continued as the same agent session: same token, and its resumed CLI sent the
    // first turn's history with the child's result.
    expect(parent.snapshot().resumeToken).toBe(parentToken);
    const resumed = bench.mock.requests.slice(requestsBefore).find((r) => r.body?.stream === true && lastUserText(r.body).includes('[sub-agent child'));
    expect(resumed, 'the parent was asked with the child result').toBeDefined();
    expect(JSON.stringify(resumed!.body.messages)).toContain('remember the word kiwi');
    expect(lastUserText(resumed!.body)).toContain('Echo: CHILD: check the tests');
    expect(resumed!.headers['x-claude-code-session-id']).toBe(parentToken);
    // Exactly once: one request of the parent's CLI carries the result as its new user turn.
    expect(bench.mock.requests.filter((r) => r.body?.stream === true && lastUserText(r.body).startsWith('[sub-agent child'))).toHaveLength(1);
    expect(tree.record().nodes['child']).toMatchObject({ state: 'completed', delivered: true });
    await sup.shutdown();
    sup = undefined;
  });
});
