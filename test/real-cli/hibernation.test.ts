/**
 * Hibernation with the real, pinned agent CLIs against the mock model APIs, through a supervisor
 * over a temp data dir: after a turn the idle session stops its agent (the process is gone, the
 * supervisor lists it `hibernated`); the next send starts the agent again resuming the same agent
 * session (Claude Code `--resume`, codex app-server `thread/resume`) with the first turn's history.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, type ClaudeEngine } from '../../src/engines/claude/index.js';
import { codexEngine, type CodexAppServerEngine } from '../../src/engines/codex/index.js';
import { createSupervisor, type AgentEvent, type SessionNotice, type Supervisor } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { capturing } from '../support/capturing-factory.js';
import { hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { hermeticCodex } from '../support/codex-hermetic.js';

const HIBERNATE_MS = 1_500;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('claude: an idle session hibernates and the next send resumes it', () => {
  let root: string;
  let work: string;
  let mock: AnthropicMock;
  let supervisor: Supervisor | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-hibernate-'));
    work = join(root, 'work');
    mkdirSync(work);
    mock = await startAnthropicMock();
  });

  afterEach(async () => {
    await supervisor?.shutdown();
    supervisor = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stops the CLI after hibernateAfterMs idle, then resumes the same agent session on send', async () => {
    const dataDir = join(root, 'data');
    const { factory, engines } = capturing<ClaudeEngine>(claudeEngine());
    supervisor = createSupervisor({ dataDir, engines: [factory], hibernateAfterMs: HIBERNATE_MS, defaults: { engineOptions: { env: hermeticClaudeEnv({ port: mock.port, root }) } } });
    const notices: SessionNotice[] = [];
    const session = await supervisor.create({ agent: 'claude', workDir: work, onNotice: (n) => notices.push(n) });
    const events = () => notices.flatMap((n) => (n.type === 'agent' ? [n.event] : ([] as AgentEvent[])));

    const first = await session.run('remember the word apricot');
    expect(first.status).toBe('completed');
    const token = session.snapshot().resumeToken;
    expect(token).toEqual(expect.any(String));
    const pid = engines[0]!.pid!;
    expect(alive(pid)).toBe(true);

    // Idle: the agent is stopped; the session waits without it.
    await session.waitFor('status', (n) => n.phase === 'hibernated', { timeoutMs: HIBERNATE_MS + 20_000 });
    await session.waitFor('agent', (n) => n.event.type === 'exited' && n.event.gen === 1, { timeoutMs: 20_000 });
    expect(session.snapshot()).toMatchObject({ phase: 'hibernated', state: { hibernated: 'asleep' }, liveGen: null, resumeToken: token });
    await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
    await expect.poll(() => readdirSync(join(dataDir, 'processes')).filter((f) => f.endsWith('.json')), { timeout: 10_000 }).toEqual([]);
    expect((await supervisor.list()).find((i) => i.sessionId === session.id)).toMatchObject({ status: 'hibernated', phase: 'hibernated' });
    // Clients saw nothing of it but the status (and the exit of the agent's process).
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);

    // The next send wakes it: a new CLI process resumes the same agent session with its history.
    const second = await session.run('which word did I ask you to remember?');
    expect(second.status).toBe('completed');
    expect(engines).toHaveLength(2);
    expect(engines[1]!.pid).not.toBe(pid);
    const identified = events().filter((e) => e.type === 'session_identified');
    expect(identified.at(-1)).toMatchObject({ gen: 2, resumeToken: token });
    expect(session.snapshot()).toMatchObject({ phase: 'idle', gen: 2, resumeToken: token, usage: { turns: 2 } });
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);
    const conversation = mock.requests.filter((r) => r.pathname === '/v1/messages' && (r.body as { stream?: boolean })?.stream === true).at(-1);
    expect(JSON.stringify((conversation?.body as { messages: unknown[] }).messages)).toContain('remember the word apricot');
  }, 120_000);
});

describe('codex: an idle session hibernates and the next send resumes its thread', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let supervisor: Supervisor | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-codex-hibernate-'));
    mock = await startOpenAIResponsesMock();
  });

  afterEach(async () => {
    await supervisor?.shutdown();
    supervisor = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stops codex app-server after hibernateAfterMs idle, then resumes the same thread on send', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: '0.169.0' });
    const { factory, engines } = capturing<CodexAppServerEngine>(codexEngine());
    supervisor = createSupervisor({ dataDir: join(root, 'data'), engines: [factory], hibernateAfterMs: HIBERNATE_MS, defaults: { engineOptions: { bin: h.bin, env: h.env } } });
    const notices: SessionNotice[] = [];
    const session = await supervisor.create({ agent: 'codex', workDir: h.workDir, onNotice: (n) => notices.push(n) });

    expect((await session.run('remember the word apricot')).status).toBe('completed');
    const token = session.snapshot().resumeToken;
    expect(token).toEqual(expect.any(String));
    const pid = engines[0]!.pid!;
    expect(alive(pid)).toBe(true);

    await session.waitFor('status', (n) => n.phase === 'hibernated', { timeoutMs: HIBERNATE_MS + 20_000 });
    await expect.poll(() => session.snapshot().liveGen, { timeout: 20_000 }).toBeNull();
    await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
    expect((await supervisor.list()).find((i) => i.sessionId === session.id)?.status).toBe('hibernated');

    expect((await session.run('which word did I ask you to remember?')).status).toBe('completed');
    expect(engines).toHaveLength(2);
    const identified = notices.flatMap((n) => (n.type === 'agent' && n.event.type === 'session_identified' ? [n.event] : []));
    expect(identified.at(-1)).toMatchObject({ gen: 2, resumeToken: token });
    expect(session.snapshot()).toMatchObject({ gen: 2, resumeToken: token, usage: { turns: 2 } });
    expect(notices.filter((n) => n.type === 'error')).toEqual([]);
    expect(JSON.stringify(mock.responsesRequests().at(-1)?.body)).toContain('remember the word apricot');
  }, 180_000);
});
