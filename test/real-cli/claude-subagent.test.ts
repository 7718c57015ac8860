/**
 * Claude Code's Task tool runs a sub-agent inside the CLI and tags its traffic with
 * `parent_tool_use_id`. With the REAL pinned CLI against our mock Messages API (the mock answers
 * the parent with a Task call, the sub-agent with a Bash call and then text), the engine carries
 * that scope as `parentCallId` on the sub-agent's messages, tool calls, tool results and its
 * permission prompt, which goes through the session's one ledger like any other. The traffic is
 * recorded as test/fixtures/claude/engine/subagent-task.jsonl (replayed by claude-replay.test.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock, type MockResponse, type RecordedRequest } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { FixtureRecorder } from '../support/engine-fixture.js';
import { claudeFixtureVars } from '../support/claude-fixture.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

const fixtureDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'claude', 'engine');

const PARENT_PROMPT = 'delegate the file to a sub-agent';

describe('claude sub-agents (Task) with the real CLI', () => {
  let root: string;
  let mock: AnthropicMock;
  let session: Session | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-subagent-'));
    mock = await startAnthropicMock();
  });
  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('scopes the sub-agent traffic under the Task call; its permission prompt goes through the ledger', async () => {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    // A foreground Task: its tool result is the sub-agent's final answer (2.1.330 backgrounds it by default).
    const env = { ...hermeticClaudeEnv({ port: mock.port, root }), CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1' };
    const recorder = new FixtureRecorder(claudeFixtureVars(root));
    const events: AgentEvent[] = [];
    const journal = new MemoryJournal();
    session = await createSession({
      agent: 'claude',
      engines: [recorder.wrap(claudeEngine({ onTraffic: recorder.tap }))],
      store: new MemoryStore(),
      journal,
      workDir: work,
      bin: claudeBinary(),
      engineOptions: { env },
    });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');

    const target = join(root, 'made-by-subagent.txt');
    const taskId = 'toolu_task_parent_1';
    // The parent and the sub-agent share the mock: answer by conversation, not by arrival order.
    const script = (request: RecordedRequest): MockResponse => {
      const messages = JSON.stringify(request.body?.messages ?? []);
      const answered = messages.includes('"tool_result"');
      if (!messages.includes(PARENT_PROMPT)) {
        return answered ? { kind: 'text', text: 'Sub-agent: file created.' } : { kind: 'tool_use', id: 'toolu_sub_bash_1', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } };
      }
      return answered ? { kind: 'text', text: 'Parent: the sub-agent made the file.' } : { kind: 'tool_use', id: taskId, name: 'Task', input: { description: 'Make a file', prompt: 'Create the file for me', subagent_type: 'general-purpose' } };
    };
    mock.enqueue(script, script, script, script);
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'sub-agent permission prompt');
    const done = waitForNotice(session, agentEvent('turn_complete'), 'turn complete');
    session.send(PARENT_PROMPT);
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(p.toolName).toBe('Bash');
    expect(p.parentCallId).toBe(taskId); // the prompt names the Task call whose sub-agent asks
    session.decide(p.requestId, 'allow');
    const end = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(end.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(existsSync(target)).toBe(true);
    const sessionId = session.id;
    await session.stop();
    session = undefined;
    const path = join(fixtureDir, 'subagent-task.jsonl');
    if (process.env.UPDATE_CLAUDE_FIXTURES === '1' || !existsSync(path)) recorder.write(path);

    const task = events.find((e) => e.type === 'tool_call' && e.callId === taskId);
    expect(task).toMatchObject({ toolName: 'Task' });
    expect(task).not.toHaveProperty('parentCallId');
    const request = events.find((e) => e.type === 'permission_request');
    expect(request).toMatchObject({ toolName: 'Bash', callId: 'toolu_sub_bash_1', parentCallId: taskId });
    expect(events.find((e) => e.type === 'tool_call' && e.callId === 'toolu_sub_bash_1')).toMatchObject({ parentCallId: taskId });
    expect(events.find((e) => e.type === 'tool_result' && e.callId === 'toolu_sub_bash_1')).toMatchObject({ status: 'completed', parentCallId: taskId });
    const subMessage = events.find((e) => e.type === 'message' && e.blocks.some((b) => b.type === 'tool_use' && b.callId === 'toolu_sub_bash_1'));
    expect(subMessage).toMatchObject({ parentCallId: taskId });
    const parentText = events.find((e) => e.type === 'message' && e.blocks.some((b) => b.type === 'text' && b.text.startsWith('Parent:')));
    expect(parentText).toBeDefined();
    expect(parentText).not.toHaveProperty('parentCallId');
    // The ledger: one request, scoped, decided like any other; the transcript keeps the scope.
    const ledger = (await journal.read(sessionId)).filter((e) => e.type.startsWith('permission_'));
    expect(ledger.map((e) => e.type)).toEqual(['permission_request', 'permission_resolved']);
    expect(ledger[0]!.payload).toMatchObject({ toolName: 'Bash', callId: 'toolu_sub_bash_1', parentCallId: taskId });
    expect(ledger[1]!.payload).toMatchObject({ status: 'approved' });
    // A foreground Task's result is the sub-agent's final answer.
    const taskResult = events.find((e) => e.type === 'tool_result' && e.callId === taskId);
    expect(taskResult).toMatchObject({ status: 'completed' });
    expect(taskResult).not.toHaveProperty('parentCallId');
    expect(JSON.stringify((taskResult as { output?: unknown }).output)).toContain('Sub-agent: file created.');
  });
});
