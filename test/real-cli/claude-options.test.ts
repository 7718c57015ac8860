/**
 * Every typed claude `engineOptions` key against the REAL pinned Claude Code CLI (mock Messages API
 * on 127.0.0.1): each one must change what the CLI does, seen where the CLI shows it: the
 * `system/init` line (permission mode, tools, MCP servers, extra directories), the request it sends
 * to the model (model, system prompt, effort from `extraArgs`), and the turn itself (a rule in
 * `allowedTools` runs without a prompt, `maxTurns` ends a turn that needs more model calls,
 * `settings` is read). Unknown keys never reach the CLI: createSession refuses them.
 *
 * The CLI is found the way a user's would be when nothing names it: through discovery, here the
 * suite's ASE_CLAUDE_BIN (the pinned binary; test/support/pinned-agents.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice, type TrafficRecord } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

describe('claude engineOptions reach the real CLI', () => {
  let root: string;
  let work: string;
  let mock: AnthropicMock;
  let session: Session | undefined;
  let traffic: TrafficRecord[];
  let events: AgentEvent[];
  let prompts: SessionNotice[];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-options-'));
    work = join(root, 'work');
    mkdirSync(work);
    mock = await startAnthropicMock();
    traffic = [];
    events = [];
    prompts = [];
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function start(engineOptions: Record<string, unknown>): Promise<Session> {
    session = await createSession({
      agent: 'claude',
      engines: [claudeEngine({ onTraffic: (record) => traffic.push(record) })],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: work,
      engineOptions: { env: hermeticClaudeEnv({ port: mock.port, root }), ...engineOptions },
    });
    session.on('agent', (n) => events.push(n.event));
    // No prompt is expected in these tests; one that comes is denied at once, so the test fails fast.
    const s = session;
    s.on('permission_prompt', (n) => {
      prompts.push(n);
      s.decide(n.requestId, 'deny', { message: 'not expected in this test' });
    });
    await waitForNotice(session, agentEvent('ready'), 'ready');
    return session;
  }

  async function turn(s: Session, text: string): Promise<Extract<AgentEvent, { type: 'turn_complete' }>> {
    const done = waitForNotice(s, agentEvent('turn_complete'), 'turn_complete');
    s.send(text);
    return ((await done) as Extract<SessionNotice, { type: 'agent' }>).event as Extract<AgentEvent, { type: 'turn_complete' }>;
  }

  /** The CLI's `system/init` line of the first turn. */
  function init(): Record<string, unknown> {
    for (const r of traffic) {
      if (r.direction !== 'from_agent') continue;
      const m = JSON.parse(r.line) as { type?: string; subtype?: string };
      if (m.type === 'system' && m.subtype === 'init') return m as Record<string, unknown>;
    }
    throw new Error('no system/init line');
  }

  /** The streaming Messages requests of the conversation (not the CLI's helper calls). */
  const modelRequests = () => mock.requests.filter((r) => r.pathname === '/v1/messages' && (r.body as { stream?: boolean })?.stream === true);
  const systemText = (body: unknown) => JSON.stringify((body as { system?: unknown }).system ?? '');

  it('model, fallbackModel, permissionMode, disallowedTools, systemPrompt, appendSystemPrompt, mcpServers, addDirs and extraArgs', async () => {
    const extraDir = join(root, 'extra-dir');
    mkdirSync(extraDir);
    const s = await start({
      model: 'claude-options-test-model',
      fallbackModel: ['claude-fallback-one', 'claude-fallback-two'],
      permissionMode: 'acceptEdits',
      disallowedTools: ['WebFetch', 'NotebookEdit'],
      systemPrompt: 'SYSTEM-PROMPT-MARKER you are a test double',
      appendSystemPrompt: 'APPENDED-PROMPT-MARKER',
      mcpServers: { 'ase-probe': { command: join(root, 'no-such-mcp-server'), args: ['--stdio'] } },
      addDirs: [extraDir],
      extraArgs: ['--effort', 'low'],
    });
    mock.enqueue({ kind: 'text', text: 'ok' });
    const done = await turn(s, 'hello');
    expect(done.status).toBe('completed');

    const i = init();
    expect(i['permissionMode']).toBe('acceptEdits');
    expect(i['model']).toBe('claude-options-test-model');
    expect(i['tools']).toEqual(expect.arrayContaining(['Bash', 'Read']));
    expect(i['tools']).not.toContain('WebFetch');
    expect(i['tools']).not.toContain('NotebookEdit');
    expect((i['mcp_servers'] as { name: string }[]).map((m) => m.name)).toContain('ase-probe');
    expect(i['additional_directories']).toEqual([extraDir]);

    const [request] = modelRequests();
    expect(request).toBeDefined();
    const body = request!.body as { model?: string; output_config?: { effort?: string }; tools?: { name?: string }[] };
    expect(body.model).toBe('claude-options-test-model');
    expect(systemText(body)).toContain('SYSTEM-PROMPT-MARKER you are a test double');
    expect(systemText(body)).toContain('APPENDED-PROMPT-MARKER');
    expect(body.output_config?.effort).toBe('low');
    expect((body.tools ?? []).map((t) => t.name)).not.toContain('WebFetch');
  });

  it('allowedTools: a matching command runs without a permission prompt; settings (a JSON object) are read', async () => {
    const target = join(work, 'allowed.txt');
    const s = await start({ allowedTools: ['Bash(touch:*)'], settings: { model: 'claude-from-settings' } });
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'done' });
    const done = await turn(s, 'make the file');
    expect(done.status).toBe('completed');
    expect(prompts).toEqual([]);
    expect(existsSync(target)).toBe(true);
    expect(events.some((e) => e.type === 'tool_result' && e.status === 'completed')).toBe(true);
    expect((modelRequests()[0]!.body as { model?: string }).model).toBe('claude-from-settings');
  });

  it('maxTurns: a turn that needs more model calls ends failed with budget_exceeded', async () => {
    const target = join(work, 'max-turns.txt');
    const s = await start({ maxTurns: 1, allowedTools: ['Bash(touch:*)'], permissionMode: 'default' });
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'never asked for' });
    const done = await turn(s, 'make the file');
    expect(done.status).toBe('failed');
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', kind: 'budget_exceeded' }));
    expect(modelRequests()).toHaveLength(1);
  });

  it('unknown or malformed options are refused by createSession before any CLI starts', async () => {
    const attempt = (engineOptions: Record<string, unknown>) =>
      createSession({ agent: 'claude', store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, engineOptions }).then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(await attempt({ permisionMode: 'plan' })).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/unknown option "permisionMode" \(known: .*permissionMode/) });
    expect(await attempt({ permissionMode: 'yolo' })).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('permissionMode') });
    expect(await attempt({ env: { ANTHROPIC_API_KEY: 42 } })).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('env.ANTHROPIC_API_KEY: must be a string, got number') });
    expect(await attempt({ mcpServers: { x: { url: 'http://127.0.0.1:1' } } })).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('mcpServers.x') });
    expect(mock.requests).toEqual([]);
  });
});
