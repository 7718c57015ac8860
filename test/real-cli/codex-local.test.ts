/**
 * Local mode with the REAL pinned Codex CLI (0.169.0): its own terminal UI in a PTY, read through a
 * headless terminal emulator and driven by typing, against the mock Responses API (loopback only,
 * hermetic HOME/CODEX_HOME). What the engine reports comes from the hooks and the rollout, never
 * from the screen.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine } from '../../src/engines/codex/index.js';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { findRollouts, hermeticCodex, type HermeticCodex } from '../support/codex-hermetic.js';
import { realEngineContext } from '../support/engine-context.js';
import { CODEX_TUI_SEEN_TOML, HeadlessScreen } from '../support/headless-screen.js';
import { findProcesses, hookDirOf } from '../support/processes.js';

const WAIT_MS = 30_000;
const ESCALATED = { sandbox_permissions: 'require_escalated', justification: 'need it' };

describe('codex local mode (terminal UI in a PTY) with the real CLI', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let engines: AgentEngine[] = [];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-codex-local-'));
    mock = await startOpenAIResponsesMock();
  });

  afterEach(async () => {
    for (const engine of engines) await engine.stop().catch(() => undefined);
    engines = [];
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  function hermetic(): HermeticCodex {
    return hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML });
  }

  function setUp(h: HermeticCodex) {
    const screen = new HeadlessScreen();
    const events: AgentEvent[] = [];
    const engine = codexEngine({ env: h.env }).create(realEngineContext({ bin: h.bin, terminal: screen }));
    engine.onEvent((event) => events.push(event));
    engines.push(engine);
    const until = async (match: (e: AgentEvent) => boolean, what: string, timeoutMs = WAIT_MS): Promise<AgentEvent> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${what}; events: ${events.map((e) => e.type).join(',')}\n${screen.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    return { screen, events, engine, until };
  }

  async function typeTurn(screen: HeadlessScreen, text: string): Promise<void> {
    screen.type(text);
    await screen.waitFor(new RegExp(text));
    await new Promise((resolve) => setTimeout(resolve, 200));
    screen.type('\r');
  }

  it('a turn typed into the terminal UI is reported from the rollout; a resume continues the same thread; stop leaves nothing', async () => {
    const h = hermetic();
    const first = setUp(h);
    await first.engine.start({ gen: 1, mode: 'local', workDir: h.workDir, options: {}, model: 'gpt-5.5' });
    await first.until((e) => e.type === 'ready', 'ready');
    await first.screen.waitFor(/Ask Codex/);
    await typeTurn(first.screen, 'hello from the desk');
    const done = (await first.until((e) => e.type === 'turn_complete', 'turn_complete')) as Extract<AgentEvent, { type: 'turn_complete' }>;
    expect(done.status).toBe('completed');
    expect(done.usage.inputTokens).toBeGreaterThan(0);
    const identified = (await first.until((e) => e.type === 'session_identified', 'session_identified')) as Extract<AgentEvent, { type: 'session_identified' }>;
    expect(findRollouts(h.codexHome)).toEqual([identified.transcriptPath]);
    expect(identified.transcriptPath).toContain(identified.resumeToken);
    const user = first.events.find((e): e is Extract<AgentEvent, { type: 'message' }> => e.type === 'message' && e.role === 'user');
    expect(user?.blocks).toEqual([{ type: 'text', text: 'hello from the desk' }]);
    const assistant = first.events.filter((e): e is Extract<AgentEvent, { type: 'message' }> => e.type === 'message' && e.role === 'assistant');
    expect(assistant.at(-1)?.blocks).toEqual([{ type: 'text', text: 'Echo: hello from the desk' }]);
    await first.screen.waitFor(/Echo: hello from the desk/);
    expect(first.events.filter((e) => e.type === 'error')).toEqual([]);
    const pid = (first.engine as unknown as { pid: number }).pid;
    const hookDir = hookDirOf(pid, 'ase-cx-');
    expect(existsSync(join(hookDir, 'hooks.sock'))).toBe(true);
    await first.engine.stop();
    expect(first.events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
    expect(first.screen.detached).toEqual([1]);
    expect(findProcesses((p) => p.environ().includes(root) || p.pid === pid)).toEqual([]);
    expect(existsSync(hookDir)).toBe(false);

    // The next generation resumes the thread: the same id and rollout, and only the new turn is reported.
    const second = setUp(h);
    await second.engine.start({ gen: 2, mode: 'local', workDir: h.workDir, options: {}, model: 'gpt-5.5', resumeToken: identified.resumeToken });
    expect(await second.until((e) => e.type === 'session_identified', 'session_identified')).toMatchObject({ resumeToken: identified.resumeToken, transcriptPath: identified.transcriptPath });
    await second.screen.waitFor(/Echo: hello from the desk/);
    await typeTurn(second.screen, 'second from the desk');
    await second.until((e) => e.type === 'turn_complete', 'turn_complete');
    const texts = second.events.flatMap((e) => (e.type === 'message' ? e.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));
    expect(texts).toEqual(['second from the desk', 'Echo: second from the desk']);
    expect(findRollouts(h.codexHome)).toEqual([identified.transcriptPath]);
    // Named once, at start; the SessionStart hook that came with the first prompt confirmed it (no error).
    expect(second.events.filter((e) => e.type === 'session_identified').map((e) => (e as { resumeToken: string }).resumeToken)).toEqual([identified.resumeToken]);
    expect(second.events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it('a remote answer decides the prompt Codex holds for its hook', async () => {
    const h = hermetic();
    const { screen, events, engine, until } = setUp(h);
    await engine.start({ gen: 1, mode: 'local', workDir: h.workDir, options: {}, model: 'gpt-5.5' });
    await screen.waitFor(/Ask Codex/);
    const target = join(h.workDir, 'remote.txt');
    mock.enqueue(execCommandCall(`echo approved > ${target}`, ESCALATED), { kind: 'text', text: 'file written' });
    await typeTurn(screen, 'please write the file');
    const ask = (await until((e) => e.type === 'permission_request', 'permission_request')) as Extract<AgentEvent, { type: 'permission_request' }>;
    expect(ask.toolName).toBe('shell'); // Codex's hook says Bash; every codex engine says shell
    expect((ask.input as { command: string }).command).toContain('echo approved');
    await screen.waitFor(/Running hook/);
    await engine.answerPermission(ask.requestId, { behavior: 'allow' });
    await until((e) => e.type === 'turn_complete', 'turn_complete');
    expect(readFileSync(target, 'utf8')).toBe('approved\n');
    expect(events.some((e) => e.type === 'permission_cancelled')).toBe(false);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: false });
    expect(screen.text()).not.toMatch(/Running hook/);
  });

  it('a key pressed in the terminal hands the prompt to Codex\'s own dialog and withdraws the remote one', async () => {
    const h = hermetic();
    const { screen, events, engine, until } = setUp(h);
    await engine.start({ gen: 1, mode: 'local', workDir: h.workDir, options: {}, model: 'gpt-5.5' });
    await screen.waitFor(/Ask Codex/);
    const target = join(h.workDir, 'local.txt');
    mock.enqueue(execCommandCall(`echo local > ${target}`, ESCALATED), { kind: 'text', text: 'done locally' });
    await typeTurn(screen, 'write it here');
    const ask = (await until((e) => e.type === 'permission_request', 'permission_request')) as Extract<AgentEvent, { type: 'permission_request' }>;
    await screen.waitFor(/Running hook/);
    screen.type('y'); // not passed on: it only takes the prompt over
    const cancelled = await until((e) => e.type === 'permission_cancelled', 'permission_cancelled');
    expect(cancelled).toMatchObject({ requestId: ask.requestId, reason: 'answered in the local terminal' });
    const dialog = await screen.waitFor(/Press enter to confirm or esc to cancel/);
    expect(existsSync(target)).toBe(false);
    expect(dialog).toMatch(/Would you like to run the following command\?[\s\S]*echo local/);
    // Answered as a person would: 'y' once the dialog is drawn, again if a loaded machine drew it before it took keys.
    for (let tries = 0; !events.some((e) => e.type === 'turn_complete') && tries < 10; tries++) {
      if (/Press enter to confirm or esc to cancel/.test(screen.text())) screen.type('y');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await until((e) => e.type === 'turn_complete', 'turn_complete');
    expect(readFileSync(target, 'utf8')).toBe('local\n');
    // A late remote answer changes nothing (the first answer won).
    await expect(engine.answerPermission(ask.requestId, { behavior: 'deny', interrupt: false })).resolves.toBeUndefined();
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });
});
