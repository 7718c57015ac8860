/**
 * The `claude-print` engine (driven tier) with the REAL pinned Claude Code 2.1.330 (`claude -p
 * --output-format stream-json`, one process per turn, `--session-id` then `--resume`) against our
 * mock Messages API, hermetic environment: the kit's conformance checks (agent-session-engine/testing), and resume by id through
 * a session after a new engine generation.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_PRINT_CAPABILITIES, ClaudePrintEngine, claudePrintEngine } from '../../src/engines/claude/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { engineConformance, registerWithVitest } from '../../src/testing.js';
import { expectWellOrdered } from '../support/well-ordered.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { processesUnder } from '../support/processes.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

describe('claude-print engine (driven) with the real Claude Code CLI', () => {
  let mock: AnthropicMock;
  let root: string;
  let work: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    mock = await startAnthropicMock();
    root = mkdtempSync(join(tmpdir(), 'ase-claude-print-'));
    work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    env = hermeticClaudeEnv({ port: mock.port, root });
  });
  afterEach(async () => {
    await mock.close();
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  // The kit's conformance checks (agent-session-engine/testing), each on a fresh engine; the mock
  // and env are made per test (beforeEach), so the factory reads them when a check creates its engine.
  // Its `start` and `resume` checks are asserted by the resume test below, on its two engine
  // generations (three Claude Code runs fewer).
  const factory: EngineFactory = { name: 'claude-print', capabilities: CLAUDE_PRINT_CAPABILITIES, create: (context) => new ClaudePrintEngine(context, { bin: claudeBinary(), env }) };
  registerWithVitest(
    engineConformance(factory, {
      workDir: () => work,
      driver: () => ({
        text: (text) => void mock.enqueue({ kind: 'text', text }),
        // Read-only Bash (`echo …`) runs without a prompt.
        tool: (command, then) => void mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command, description: 'echo' } }, { kind: 'text', text: then }),
        failure: () => void mock.enqueue({ kind: 'error', status: 500, message: 'mock exploded' }),
        stall: () => {
          const before = mock.requests.filter((r) => r.body?.stream === true).length;
          mock.enqueue({ kind: 'text', text: 'a very slow answer that is aborted long before it ends', chunks: 60, delayMs: 500 });
          const stalled = (async () => {
            while (mock.requests.filter((r) => r.body?.stream === true).length <= before) await new Promise((r) => setTimeout(r, 20));
          })();
          return { stalled };
        },
      }),
      leftovers: () => processesUnder(root),
      skip: ['start', 'resume'],
    }),
    { describe, it },
  );

  it('resumes the session by id after a host restart (a new engine generation), through createSession', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const open = () => createSession({ agent: 'claude-print', engines: [claudePrintEngine({ bin: claudeBinary() })], store, journal, workDir: work, engineOptions: { env }, sessionId: 'print-1' });
    let session = await open();
    const firstEvents: AgentEvent[] = [];
    session.on('agent', (n) => firstEvents.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    mock.enqueue({ kind: 'text', text: 'one' });
    let done = waitForNotice(session, agentEvent('turn_complete'), 'turn 1');
    session.send('remember the word banana');
    const first = (await done) as { event: { status: string; usage: { costUsd?: number } } };
    expect(first.event.status).toBe('completed');
    expect(first.event.usage.costUsd).toBeGreaterThan(0);
    const id = session.snapshot().resumeToken!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(firstEvents.filter((e) => e.type === 'session_identified')).toHaveLength(1); // once, in the first turn
    await session.stop();
    expectWellOrdered(firstEvents, 1, 1);

    session = await open();
    const secondEvents: AgentEvent[] = [];
    session.on('agent', (n) => secondEvents.push(n.event));
    try {
      await waitForNotice(session, agentEvent('ready'), 'ready again');
      done = waitForNotice(session, agentEvent('turn_complete'), 'turn 2');
      session.send('which word?');
      expect(((await done) as { event: { status: string } }).event.status).toBe('completed');
      // The CLI resumed the same session: the request carries the first turn's words.
      expect(JSON.stringify(mock.requests.at(-1)!.body.messages)).toContain('banana');
      expect(session.snapshot().resumeToken).toBe(id);
      // No fork: every session the new generation names is the first one.
      expect(secondEvents.filter((e) => e.type === 'session_identified').map((e) => (e as { resumeToken: string }).resumeToken).filter((t) => t !== id)).toEqual([]);
    } finally {
      await session.stop();
    }
    expectWellOrdered(secondEvents, 2, 1);
  });
});
