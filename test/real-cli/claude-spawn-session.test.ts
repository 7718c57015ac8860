/**
 * Sub-agents the agent spawns itself (`subAgentTools`), with the REAL pinned Claude Code CLI as the
 * parent, hermetic: the mock model calls `spawn_session`, the child (the built-in fake engine)
 * runs its task, and its answer reaches the parent exactly once as a queued message the parent's
 * CLI is asked with. The child is a node of the parent's session tree and is listed under its parent
 * by the supervisor, as a host-spawned child is; `session_status` tells the parent about it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import { createSupervisor, findSessionTree, subAgentTools, type AgentEvent, type Supervisor } from '../../src/index.js';
import { lastUserText, type RecordedRequest } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { useClaudeMockBench } from '../support/claude-mock-bench.js';
import { startOpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticCodex } from '../support/codex-hermetic.js';

/** The text of the tool_result in the request's last user message. */
function toolResultText(request: RecordedRequest): string {
  const messages: any[] = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result'));
  const block = last?.content.find((b: any) => b.type === 'tool_result');
  const content = block?.content;
  return typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: any) => b.text ?? '').join('') : '';
}

describe('spawn_session with a real Claude parent', () => {
  let sup: Supervisor | undefined;
  const bench = useClaudeMockBench('ase-claude-spawn-', async () => {
    await sup?.shutdown();
    sup = undefined;
  });

  // The refusals run on the same parent after its child's story (one Claude Code start fewer).
  it('the agent spawns a child; the child is in the tree and the list; its result reaches the parent once; an engine that is not offered, or another session, is refused as an error result', async () => {
    const work = join(bench.root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: bench.mock.port, root: bench.root });
    const dataDir = join(bench.root, 'data');
    const supervisor = createSupervisor({ dataDir, engines: [claudeEngine({ bin: claudeBinary() })] });
    sup = supervisor;
    await supervisor.create({ agent: 'fake', workDir: work, sessionId: 'stranger' });
    const parent = await supervisor.create({ agent: 'claude', workDir: work, engineOptions: { env }, sessionId: 'parent', tools: subAgentTools({ supervisor, agents: ['fake', 'claude'] }) });
    const events: AgentEvent[] = [];
    parent.on('agent', (n) => events.push(n.event));

    bench.mock.enqueue({ kind: 'tool_use', name: 'mcp__host__spawn_session', input: { agent: 'fake', prompt: 'count the files' }, id: 'toolu_spawn1' }, (request) => ({
      kind: 'text',
      text: `Spawned: ${toolResultText(request)}`,
    }));
    const turn = await parent.run('split the work');
    expect(turn.status).toBe('completed');
    const spawned = JSON.parse(turn.text.replace(/^Spawned: /, '')) as { sessionId: string; agent: string; status: string };
    expect(spawned).toMatchObject({ agent: 'fake', status: 'started' });
    const childId = spawned.sessionId;
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ toolName: 'spawn_session', callId: 'toolu_spawn1' });

    // The child's answer arrives at the parent as a queued message: the parent's CLI is asked with it.
    const isDelivery = (r: RecordedRequest) => r.body?.stream === true && lastUserText(r.body).startsWith(`[sub-agent ${childId}`);
    await expect.poll(() => bench.mock.requests.some(isDelivery), { timeout: 60_000, interval: 100 }).toBe(true);
    // The delivery's turn may be over before the poll looks again (waitFor hears only later notices).
    if (parent.snapshot().phase !== 'idle') await parent.waitFor('status', (n) => n.phase === 'idle', { timeoutMs: 60_000 });
    const delivery = bench.mock.requests.find(isDelivery)!;
    expect(lastUserText(delivery.body)).toBe(`[sub-agent ${childId} (call toolu_spawn1) finished]\necho: count the files`);

    // A node of the parent's tree, completed and delivered; listed under its parent like a host-spawned child.
    // The tree notes the delivery right after the parent stored the message: wait for that write.
    await expect.poll(async () => (await findSessionTree({ dataDir, store: supervisor.store, sessionId: childId }))?.nodes[childId]?.delivered, { timeout: 10_000 }).toBe(true);
    const tree = await findSessionTree({ dataDir, store: supervisor.store, sessionId: childId });
    expect(tree?.rootId).toBe('parent');
    expect(tree?.nodes[childId]).toMatchObject({ parentId: 'parent', parentCallId: 'toolu_spawn1', state: 'completed', delivered: true });
    const listed = (await supervisor.list()).find((s) => s.sessionId === childId);
    expect(listed).toMatchObject({ agent: 'fake', parentId: 'parent', parentCallId: 'toolu_spawn1' });

    // session_status tells the parent where its child stands.
    bench.mock.enqueue({ kind: 'tool_use', name: 'mcp__host__session_status', input: { id: childId }, id: 'toolu_status' }, (request) => ({ kind: 'text', text: `Status: ${toolResultText(request)}` }));
    const status = await parent.run('how is it going?');
    expect(JSON.parse(status.text.replace(/^Status: /, ''))).toMatchObject({ sessionId: childId, agent: 'fake', tree: 'completed', result: 'echo: count the files' });

    // Exactly once, even after more turns.
    expect(bench.mock.requests.filter(isDelivery)).toHaveLength(1);

    // An engine that is not offered, or another session than its own child, is refused as an error result.
    const echoResult = (request: RecordedRequest) => ({ kind: 'text' as const, text: `Got: ${toolResultText(request)}` });
    bench.mock.enqueue({ kind: 'tool_use', name: 'mcp__host__spawn_session', input: { agent: 'codex', prompt: 'x' } }, echoResult);
    expect((await parent.run('spawn codex')).text).toBe('Got: agent "codex" is not offered here (offered: fake, claude)');
    bench.mock.enqueue({ kind: 'tool_use', name: 'mcp__host__session_status', input: { id: 'stranger' } }, echoResult);
    expect((await parent.run('peek')).text).toBe('Got: no sub-agent "stranger" of this session');
    expect((await supervisor.list()).filter((s) => s.parentId === 'parent').map((s) => s.sessionId)).toEqual([childId]);
  });

  it('a Claude parent spawns a Codex child (real codex app-server); its answer reaches the parent once', { timeout: 150_000 }, async () => {
    const openai = await startOpenAIResponsesMock();
    try {
      const work = join(bench.root, 'work');
      mkdirSync(work, { recursive: true });
      const env = hermeticClaudeEnv({ port: bench.mock.port, root: bench.root });
      const codex = hermeticCodex({ root: join(bench.root, 'codex'), baseUrl: openai.providerBaseUrl });
      const supervisor = createSupervisor({ dataDir: join(bench.root, 'data'), engines: [claudeEngine({ bin: claudeBinary() }), codexEngine()] });
      sup = supervisor;
      const tools = subAgentTools({ supervisor, agents: ['codex'], childOptions: () => ({ engineOptions: { bin: codex.bin, env: codex.env } }) });
      const parent = await supervisor.create({ agent: 'claude', workDir: work, engineOptions: { env }, sessionId: 'cp', tools });
      bench.mock.enqueue({ kind: 'tool_use', name: 'mcp__host__spawn_session', input: { agent: 'codex', prompt: 'review the diff', workDir: codex.workDir }, id: 'toolu_cx' }, (request) => ({
        kind: 'text',
        text: `Spawned: ${toolResultText(request)}`,
      }));
      const turn = await parent.run('get a second opinion');
      const childId = (JSON.parse(turn.text.replace(/^Spawned: /, '')) as { sessionId: string }).sessionId;
      const isDelivery = (r: RecordedRequest) => r.body?.stream === true && lastUserText(r.body).startsWith(`[sub-agent ${childId}`);
      await expect.poll(() => bench.mock.requests.some(isDelivery), { timeout: 90_000, interval: 200 }).toBe(true);
      expect(lastUserText(bench.mock.requests.find(isDelivery)!.body)).toBe(`[sub-agent ${childId} (call toolu_cx) finished]\nEcho: review the diff`);
      if (parent.snapshot().phase !== 'idle') await parent.waitFor('status', (n) => n.phase === 'idle', { timeoutMs: 60_000 });
      expect((await supervisor.list()).find((s) => s.sessionId === childId)).toMatchObject({ agent: 'codex', parentId: 'cp', parentCallId: 'toolu_cx' });
      expect(bench.mock.requests.filter(isDelivery)).toHaveLength(1);
    } finally {
      await sup?.shutdown();
      sup = undefined;
      await openai.close();
    }
    // Two real CLIs and a delivery across sessions: the timeout covers the poll above. The timeouts
    // seen here (one CI run of 2 on 2026-11-26; every run on a faster machine on 2026-11-27) were this
    // test's own: it waited for the parent's next `idle` when the delivery's turn had already ended.
  });
});
