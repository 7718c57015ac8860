/**
 * `session.setModel()` / `session.setPermissionMode()` against the REAL pinned Claude Code CLI
 * (mock Messages API on 127.0.0.1), seen where the CLI shows them: the `model` of the requests it
 * sends to the model server, and the `permissionMode` of its `system/init` line.
 * - A change reaches the running CLI (`set_model` / `set_permission_mode` control requests): the
 *   next turn uses it; `null` goes back to the engineOptions value.
 * - Mid-turn: the running turn's next model request uses the new model.
 * - Kept across a crash: the CLI is SIGKILLed, the next message starts a new one (`--resume`) with
 *   the stored choice on its command line.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, type ClaudeEngine } from '../../src/engines/claude/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice, type TrafficRecord } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { capturing } from '../support/capturing-factory.js';
import { hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

describe('claude: setModel / setPermissionMode reach the real CLI', () => {
  let root: string;
  let work: string;
  let mock: AnthropicMock;
  let session: Session | undefined;
  let traffic: TrafficRecord[];
  let events: AgentEvent[];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-settings-'));
    work = join(root, 'work');
    mkdirSync(work);
    mock = await startAnthropicMock();
    traffic = [];
    events = [];
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function start(engineOptions: Record<string, unknown> = {}) {
    const { factory, engines } = capturing<ClaudeEngine>(claudeEngine({ onTraffic: (record) => traffic.push(record) }));
    const s = await createSession({
      agent: 'claude',
      engines: [factory],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: work,
      engineOptions: { env: hermeticClaudeEnv({ port: mock.port, root }), model: 'claude-start-model', ...engineOptions },
    });
    session = s;
    s.on('agent', (n) => events.push(n.event));
    s.on('permission_prompt', (n) => void s.decide(n.requestId, 'deny', { message: 'not expected in this test' }));
    await waitForNotice(s, agentEvent('ready'), 'ready');
    return { s, engines };
  }

  async function turn(s: Session, text: string): Promise<Extract<AgentEvent, { type: 'turn_complete' }>> {
    const done = waitForNotice(s, agentEvent('turn_complete'), `turn_complete of "${text}"`);
    void s.send(text);
    return ((await done) as Extract<SessionNotice, { type: 'agent' }>).event as Extract<AgentEvent, { type: 'turn_complete' }>;
  }

  /** The streaming Messages requests of the conversation (not the set_model probe). */
  const modelRequests = () => mock.requests.filter((r) => r.pathname === '/v1/messages' && (r.body as { stream?: boolean })?.stream === true);
  const modelOf = (r: { body: unknown } | undefined) => (r?.body as { model?: string } | undefined)?.model;
  /** The CLI's `system/init` lines (one per turn), newest last. */
  const inits = () =>
    traffic
      .filter((r) => r.direction === 'from_agent')
      .map((r) => JSON.parse(r.line) as Record<string, unknown>)
      .filter((m) => m['type'] === 'system' && m['subtype'] === 'init');
  /** Resolves once the CLI answered the control request `subtype` (the change is applied). */
  async function applied(subtype: 'set_model' | 'set_permission_mode', from: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const sent = traffic.slice(from).find((r) => r.direction === 'to_agent' && r.line.includes(`"subtype":"${subtype}"`));
      const id = sent ? (JSON.parse(sent.line) as { request_id: string }).request_id : undefined;
      if (id && traffic.some((r) => r.direction === 'from_agent' && r.line.includes('"control_response"') && r.line.includes(`"${id}"`))) return;
      if (Date.now() > deadline) throw new Error(`no answer to ${subtype}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('the next turn uses the new model and permission mode; null goes back to engineOptions', async () => {
    const { s } = await start({ permissionMode: 'default' });
    mock.enqueue({ kind: 'text', text: 'one' });
    expect((await turn(s, 'first')).status).toBe('completed');
    expect(modelOf(modelRequests().at(-1))).toBe('claude-start-model');
    expect(inits().at(-1)?.['permissionMode']).toBe('default');

    let mark = traffic.length;
    await s.setModel('claude-runtime-model');
    await s.setPermissionMode('plan');
    expect(s.snapshot()).toMatchObject({ model: 'claude-runtime-model', permissionMode: 'plan' });
    await applied('set_model', mark);
    await applied('set_permission_mode', mark);
    // The CLI probes a new model with a non-streaming request before it answers.
    expect(mock.requests.some((r) => (r.body as { stream?: boolean })?.stream !== true && modelOf(r) === 'claude-runtime-model')).toBe(true);
    mock.enqueue({ kind: 'text', text: 'two' });
    expect((await turn(s, 'second')).status).toBe('completed');
    expect(modelOf(modelRequests().at(-1))).toBe('claude-runtime-model');
    expect(inits().at(-1)?.['permissionMode']).toBe('plan');

    mark = traffic.length;
    await s.setModel(null);
    await s.setPermissionMode(null);
    await applied('set_model', mark);
    await applied('set_permission_mode', mark);
    mock.enqueue({ kind: 'text', text: 'three' });
    expect((await turn(s, 'third')).status).toBe('completed');
    expect(modelOf(modelRequests().at(-1))).toBe('claude-start-model');
    expect(inits().at(-1)?.['permissionMode']).toBe('default');
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it('mid-turn: the running turn’s next model request uses the new model', async () => {
    const { s } = await start({ allowedTools: ['Bash(sleep:*)'] });
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'sleep 2', description: 'Wait a little' } }, { kind: 'text', text: 'done waiting' });
    const done = waitForNotice(s, agentEvent('turn_complete'), 'turn_complete');
    const toolRuns = waitForNotice(s, agentEvent('tool_call'), 'tool_call');
    void s.send('wait, then answer');
    await toolRuns;
    const mark = traffic.length;
    await s.setModel('claude-mid-turn-model');
    await applied('set_model', mark);
    expect(((await done) as Extract<SessionNotice, { type: 'agent' }>).event).toMatchObject({ status: 'completed' });
    const models = modelRequests().map(modelOf);
    expect(models).toEqual(['claude-start-model', 'claude-mid-turn-model']);
  });

  // Three stories on one CLI (two starts fewer): a refused mode changes nothing, the first message
  // after setModel/setPermissionMode resolved runs with them, and they outlive a crash.
  it('a permission mode the CLI does not have is refused before anything is stored; a message sent right after setModel resolves runs on the new model; kept across a crash: the restarted CLI runs with the stored choice', async () => {
    const { s, engines } = await start();
    await expect(s.setPermissionMode('yolo')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('acceptEdits') });
    expect(s.snapshot()).not.toHaveProperty('permissionMode');
    expect(traffic.some((r) => r.line.includes('set_permission_mode'))).toBe(false);

    await s.setModel('claude-runtime-model');
    await s.setPermissionMode('acceptEdits');
    mock.enqueue({ kind: 'text', text: 'one' });
    expect((await turn(s, 'first')).status).toBe('completed');
    expect(modelRequests().map(modelOf)).toEqual(['claude-runtime-model']);
    expect(inits().at(-1)?.['permissionMode']).toBe('acceptEdits');

    const exited = waitForNotice(s, agentEvent('exited'), 'exited after the kill');
    process.kill(engines[0]!.pid!, 'SIGKILL');
    await exited;
    // The claude engine reports a dead CLI as a fatal error (the session is `failed`); the next
    // message starts a new CLI, resuming the agent session.
    mock.enqueue({ kind: 'text', text: 'two' });
    expect((await turn(s, 'second')).status).toBe('completed');
    expect(engines).toHaveLength(2);
    expect(s.snapshot().gen).toBe(2);
    expect(modelOf(modelRequests().at(-1))).toBe('claude-runtime-model');
    expect(inits().at(-1)).toMatchObject({ permissionMode: 'acceptEdits', model: 'claude-runtime-model' });
  });
});
