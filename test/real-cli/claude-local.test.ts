/**
 * Local mode with the REAL pinned Claude Code CLI: its own terminal UI in a PTY, read through a
 * headless terminal emulator and driven by typing, against the mock Messages API (loopback only,
 * hermetic HOME/CLAUDE_CONFIG_DIR). What the engine reports comes from the hooks and the
 * transcript, never from the screen.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { realEngineContext } from '../support/engine-context.js';
import { HeadlessScreen, seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses, hookDirOf } from '../support/processes.js';

const WAIT_MS = 30_000;

describe('claude local mode (terminal UI in a PTY) with the real CLI', () => {
  let root: string;
  let mock: AnthropicMock;
  let engine: AgentEngine | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-local-'));
    mock = await startAnthropicMock();
  });

  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    engine = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  function setUp() {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
    const screen = new HeadlessScreen();
    const events: AgentEvent[] = [];
    const started = claudeEngine({ env }).create(realEngineContext({ bin: claudeBinary(), terminal: screen }));
    started.onEvent((event) => events.push(event));
    engine = started;
    const until = async (match: (e: AgentEvent) => boolean, what: string, timeoutMs = WAIT_MS): Promise<AgentEvent> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${what}; events: ${events.map((e) => e.type).join(',')}\n${screen.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    return { work, env, screen, events, engine: started, until };
  }

  it('a turn typed into the terminal UI is reported as AgentEvents with the API message ids; a remote answer approves the dialog shown in the terminal UI (first answer wins); an answer typed in the terminal first withdraws the remote prompt; stop leaves nothing', async () => {
    const { work, screen, events, engine, until } = setUp();
    await engine.start({ gen: 1, mode: 'local', workDir: work, options: {}, permissionMode: 'default' });
    const identified = (await until((e) => e.type === 'session_identified', 'session_identified')) as Extract<AgentEvent, { type: 'session_identified' }>;
    await until((e) => e.type === 'ready', 'ready');
    expect(identified.transcriptPath).toContain(identified.resumeToken);
    await screen.waitFor(/❯/);

    screen.type('hello from the desk');
    await screen.waitFor(/hello from the desk/);
    screen.type('\r');
    await until((e) => e.type === 'turn_complete', 'turn_complete');
    await screen.waitFor(/Echo: hello from the desk/);

    // The prompt comes from the transcript tail, which may trail the Stop hook's turn end.
    const user = await until((e) => e.type === 'message' && e.role === 'user', 'the typed prompt as a user message');
    expect(user).toMatchObject({ blocks: [{ type: 'text', text: 'hello from the desk' }] });
    const assistant = events.filter((e): e is Extract<AgentEvent, { type: 'message' }> => e.type === 'message' && e.role === 'assistant');
    expect(assistant.at(-1)?.blocks).toEqual([{ type: 'text', text: 'Echo: hello from the desk' }]);
    // The same id the API (and so the remote engine) gave the message.
    expect(assistant.at(-1)?.id).toMatch(/^msg_/);
    expect(events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(events.filter((e) => e.type === 'error')).toEqual([]);

    // The same terminal UI's next turns (one Claude Code start for the file's stories, was three).
    // A remote answer approves the dialog shown in the terminal UI (first answer wins).
    let from = events.length;
    const next = (match: (e: AgentEvent) => boolean, what: string) => until((e) => match(e) && events.indexOf(e) >= from, what);
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo approved > remote.txt', description: 'write a file' } }, { kind: 'text', text: 'file written' });
    screen.type('please write the file');
    await screen.waitFor(/please write the file/);
    screen.type('\r');
    const ask = (await next((e) => e.type === 'permission_request', 'permission_request')) as Extract<AgentEvent, { type: 'permission_request' }>;
    expect(ask).toMatchObject({ toolName: 'Bash', input: { command: 'echo approved > remote.txt' } });
    await screen.waitFor(/Do you want to proceed\?/);

    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    await next((e) => e.type === 'turn_complete', 'turn_complete');
    expect(readFileSync(join(work, 'remote.txt'), 'utf8')).toBe('approved\n');
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'completed', isError: false });
    expect(events.some((e) => e.type === 'permission_cancelled')).toBe(false);
    await screen.waitFor(/file written/);
    expect(screen.text()).not.toMatch(/Do you want to proceed\?/);

    // The next turn: an answer typed in the terminal first withdraws the remote prompt.
    from = events.length;
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo local > local.txt', description: 'write a file' } }, { kind: 'text', text: 'done locally' });
    screen.type('write it here');
    await screen.waitFor(/write it here/);
    screen.type('\r');
    const local = (await next((e) => e.type === 'permission_request', 'permission_request')) as Extract<AgentEvent, { type: 'permission_request' }>;
    await screen.waitFor(/Do you want to proceed\?/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    screen.type('\r');
    const cancelled = await next((e) => e.type === 'permission_cancelled', 'permission_cancelled');
    expect(cancelled).toMatchObject({ requestId: local.requestId, reason: 'answered in the local terminal' });
    await next((e) => e.type === 'turn_complete', 'turn_complete');
    expect(readFileSync(join(work, 'local.txt'), 'utf8')).toBe('local\n');
    // A late remote answer changes nothing (the first answer won).
    await expect(engine.answerPermission(local.requestId, { behavior: 'deny', interrupt: false })).resolves.toBeUndefined();

    const pid = (engine as unknown as { engine: { terminal: { pid: number } } }).engine.terminal.pid;
    const hookDir = hookDirOf(pid, 'ase-cl-');
    expect(existsSync(join(hookDir, 'hooks.sock'))).toBe(true);
    await engine.stop();
    expect(events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
    expect(screen.detached).toEqual([1]);
    expect(findProcesses((p) => p.environ().includes(root) || p.pid === pid)).toEqual([]);
    // The private hook directory is gone with it.
    expect(existsSync(hookDir)).toBe(false);
  });
});
