/**
 * `ase run --mode local` driven as a person would, in a real terminal (tmux on a private socket):
 * the built CLI attaches Claude Code's or Codex's own terminal UI (the real pinned CLIs, their mock
 * model APIs, loopback only), we type a prompt and read the answer off the tmux screen, press Ctrl-] to hand
 * the session to remote control, and get the shell's terminal back intact: cooked mode, echo on,
 * no alternate screen, nothing typed during the switch leaking into the shell.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML, seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses } from '../support/processes.js';
import { hasTmux } from '../support/tmux-desk.js';

describe.runIf(hasTmux)('ase run --mode local in tmux', () => {
  let root: string;
  let mock: AnthropicMock;
  let codexMock: OpenAIResponsesMock;
  let socket: string;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-local-'));
    socket = join(root, 'tmux.sock');
    mock = await startAnthropicMock();
    codexMock = await startOpenAIResponsesMock();
  });

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    await mock.close();
    await codexMock.close();
    rmSync(root, { recursive: true, force: true });
  });

  interface Agent {
    name: string;
    /** The command line args after `run --mode local` (agent, binary, options), and the env. */
    setUp(work: string): { args: string[]; env: Record<string, string>; bin: string };
    /** The terminal UI's input prompt. */
    prompt: RegExp;
  }
  const agents: Agent[] = [
    {
      name: 'claude',
      setUp: (work) => {
        const env = hermeticClaudeEnv({ port: mock.port, root: join(root, 'claude') });
        seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
        return { args: ['--agent', 'claude', '--bin', claudeBinary(), '--option', 'permissionMode=default'], env, bin: claudeBinary() };
      },
      prompt: /❯/,
    },
    {
      name: 'codex',
      setUp: (work) => {
        const h = hermeticCodex({ root: join(root, 'codex'), workDir: work, baseUrl: codexMock.providerBaseUrl, extraToml: CODEX_TUI_SEEN_TOML });
        return { args: ['--agent', 'codex', '--bin', h.bin, '--option', 'model=gpt-5.5'], env: h.env, bin: h.bin };
      },
      prompt: /Ask Codex/,
    },
  ];

  it.each(agents)('$name: type a prompt, see the answer, Ctrl-] hands over, and the shell gets its terminal back', async (agent) => {
    const work = join(root, agent.name, 'work');
    mkdirSync(work, { recursive: true });
    const { args, env, bin } = agent.setUp(work);
    const session = `ase-${agent.name}`;
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, ASE_BIN, 'run', '--mode', 'local', ...args, '--data-dir', join(root, agent.name, 'data'), '--cwd', work, ...envArgs]
      .map(quote)
      .join(' ');
    const script = join(root, agent.name, 'run.sh');
    // The shell a person types in: runs ase, then reports what it got back.
    writeFileSync(script, `cd ${quote(work)}\n${command}\necho "ase exited $?"\nstty -a | grep -o -- '-\\?icanon' | head -1\nexec sh\n`);
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', session, '-x', '100', '-y', '30', '-e', `HOME=${env.HOME}`, '-e', `ASE_TEST_ROOT=${root}`, `sh ${quote(script)}`);
    const screen = () => tmux('capture-pane', '-p', '-t', session);
    async function waitScreen(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`tmux screen never showed ${pattern}:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    await waitScreen(agent.prompt);
    tmux('send-keys', '-t', session, '-l', 'hello from tmux');
    await waitScreen(/hello from tmux/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    tmux('send-keys', '-t', session, 'Enter');
    await waitScreen(/Echo: hello from tmux/);

    // Ctrl-], then keys typed right away (during the switch): they must not reach the shell. One
    // send-keys, so they follow the key at once (two tmux calls on a loaded machine once put the
    // text a moment after the hand-over had ended, when it is the shell's).
    tmux('send-keys', '-t', session, 'C-]', 'typed-during-switch');
    const after = await waitScreen(/ase exited 0[\s\S]*icanon/, 30_000);
    expect(after).toMatch(/handed to remote control/);
    // The terminal UI's remains were cleared before the hand-over line (no overlapping lines).
    expect(after.slice(0, after.indexOf('handed to remote control'))).not.toMatch(agent.prompt);
    // Cooked mode again ("icanon", not "-icanon"), and the shell prompt works: echo on.
    expect(after).not.toMatch(/-icanon/);
    tmux('send-keys', '-t', session, '-l', 'echo shell-ok');
    tmux('send-keys', '-t', session, 'Enter');
    const shell = await waitScreen(/^shell-ok$/m);
    expect(shell).not.toMatch(/typed-during-switch.*\n.*not found/);
    expect(findProcesses((p) => p.cmdline().includes(bin) && p.environ().includes(root))).toEqual([]);
  }, 120_000);
});
