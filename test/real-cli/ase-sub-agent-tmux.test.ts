/**
 * The seed story of issue 21 on the REAL pinned Claude Code CLI, driven as a person would in a real
 * terminal (tmux on a private socket), hermetic (our mock Messages API, loopback only):
 * `ase run --mode local --sub-agents` shows the parent's own terminal UI; the model (scripted)
 * calls the host tool `spawn_session`, which reaches the terminal UI through the loopback MCP server
 * (local-mode host tools); the person lists the children (`/ase:children`), enters the child
 * (`/ase:enter <id>`: the child's own terminal UI, same session id), types to it, leaves
 * (`/ase:exit`), and the parent's UI continues as the same session, the child's answer delivered to
 * it exactly once. The `/ase:*` lines never reach a model. Nothing is left: no process, no hook
 * directory (and with the host process gone, no loopback port).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, startAnthropicMock, type AnthropicMock, type RecordedRequest } from '../mocks/anthropic-mock.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses } from '../support/processes.js';
import { hasTmux } from '../support/tmux-desk.js';

const PARENT_PROMPT = 'PARENT split the work';
const CHILD_TASK = 'CHILD TASK count the files';

/** Whether the request carries the result of tool call `id` (with no newer prompt: the model's next step after the tool ran). */
function answersTool(request: RecordedRequest, id: string): boolean {
  const messages: any[] = request.body?.messages ?? [];
  return messages.some((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result' && b.tool_use_id === id));
}

describe.runIf(hasTmux)('sub-agents entered from the terminal (ase run --mode local --sub-agents, real Claude CLI, tmux)', () => {
  let root: string;
  let mock: AnthropicMock;
  let socket: string;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-tree-'));
    socket = join(root, 'tmux.sock');
    mock = await startAnthropicMock();
  }, 300_000);

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    await mock.close();
    if (!process.env['ASE_KEEP_TMP']) rmSync(root, { recursive: true, force: true });
  });

  it('the agent spawns a child; the person enters it, types, exits; the parent continues as the same session with the result once', { timeout: 240_000 }, async () => {
    const work = join(root, 'work');
    const dataDir = join(root, 'data');
    const hostTmp = join(root, 'host-tmp');
    mkdirSync(work, { recursive: true });
    mkdirSync(hostTmp, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root: join(root, 'claude') });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);

    // One router for every streamed request, whoever sends it (parent or child, in either order):
    // the parent's prompt calls spawn_session; the child's task streams slowly (the person enters
    // it while it works); everything else is echoed.
    const route = (request: RecordedRequest) => {
      const text = lastUserText(request.body);
      if (text === PARENT_PROMPT) return { kind: 'tool_use' as const, id: 'toolu_spawn', name: 'mcp__host__spawn_session', input: { agent: 'claude', prompt: CHILD_TASK } };
      if (text === '' && answersTool(request, 'toolu_spawn')) return { kind: 'text' as const, text: 'Spawned the child.' };
      // The child's task must still stream when the person enters it (several screens and typed
      // lines after the spawn: ~20 s on a loaded 2-core machine, more on a worse one). 480 chunks
      // = 240 s of window; it costs nothing, as entering the child ends its headless process and
      // the mock stops writing to a closed stream.
      if (text === CHILD_TASK) return { kind: 'text' as const, text: 'child still counting', chunks: 480, delayMs: 500 };
      return { kind: 'text' as const, text: `Echo: ${text}` };
    };
    for (let i = 0; i < 40; i++) mock.enqueue(route);

    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const command = [
      process.execPath, ASE_BIN, 'run', '--mode', 'local', '--sub-agents', '--agent', 'claude', '--bin', claudeBinary(),
      '--option', 'permissionMode=default', '--data-dir', dataDir, '--cwd', work, ...envArgs,
    ].map(quote).join(' ');
    const script = join(root, 'run.sh');
    writeFileSync(script, `cd ${quote(work)}\n${command}\necho "ase exited $?"\nexec sh\n`);
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'desk', '-x', '110', '-y', '35', '-e', `HOME=${env.HOME}`, '-e', `ASE_TEST_ROOT=${root}`, '-e', `TMPDIR=${hostTmp}`, `sh ${quote(script)}`);
    const screen = () => tmux('capture-pane', '-p', '-t', 'desk');
    async function waitScreen(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) throw new Error(`tmux screen never showed ${pattern}:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    /** Types a line into the terminal UI shown, then Enter (separate keys: a paste's newline would not submit). */
    async function typeLine(line: string): Promise<void> {
      tmux('send-keys', '-t', 'desk', '-l', line);
      await waitScreen(new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      tmux('send-keys', '-t', 'desk', 'Enter');
    }
    const treeFile = () => {
      const files = readdirSync(join(dataDir, 'trees')).filter((f) => f.endsWith('.json'));
      return JSON.parse(readFileSync(join(dataDir, 'trees', files[0]!), 'utf8')) as { rootId: string; focus: string; nodes: Record<string, { parentId?: string; state: string; delivered?: boolean }> };
    };
    const stored = (id: string) => JSON.parse(readFileSync(join(dataDir, 'sessions', `${id}.json`), 'utf8')) as { state?: { resumeToken?: string }; resumeToken?: string };
    const tokenOf = (id: string) => {
      const s = stored(id);
      return s.state?.resumeToken ?? s.resumeToken;
    };

    // The parent's UI; the model calls spawn_session through the loopback MCP server, trusted (no dialog).
    await waitScreen(/❯/);
    await typeLine(PARENT_PROMPT);
    await waitScreen(/Spawned the child\./);
    const spawnRequest = mock.requests.find((r) => lastUserText(r.body) === PARENT_PROMPT)!;
    // Always loaded: the model was offered the host tool itself, not behind ToolSearch.
    expect((spawnRequest.body.tools as { name: string }[]).map((t) => t.name)).toContain('mcp__host__spawn_session');
    const before = treeFile();
    const rootId = before.rootId;
    const childId = Object.keys(before.nodes).find((id) => id !== rootId)!;
    expect(before.nodes[childId]).toMatchObject({ parentId: rootId, state: 'active' });
    const parentToken = tokenOf(rootId);
    expect(parentToken).toMatch(/^[0-9a-f-]{36}$/);

    // Commands that cannot be done are answered with a line, and change nothing.
    await typeLine('/ase:exit');
    await waitScreen(/is the top session/);
    await typeLine('/ase:enter no-such-child');
    await waitScreen(/not a sub-agent session of/);
    expect(treeFile().focus).toBe(rootId);

    // List the children, then enter the child while it still works.
    await typeLine('/ase:children');
    await waitScreen(new RegExp(`${childId}\\s+claude\\s+active`));
    // The child's agent session is known (its CLI started on the task) before the person enters it.
    await expect.poll(() => tokenOf(childId), { timeout: 60_000, interval: 100 }).toMatch(/^[0-9a-f-]{36}$/);
    const childToken = tokenOf(childId);
    await typeLine(`/ase:enter ${childId}`);
    // (The UI's answer, "entering sub-agent session …", may be replaced by the child's UI before a poll sees it.)
    // The child's own terminal UI (the parent's lines are gone), resumed as the same session.
    await waitScreen(new RegExp(`^(?![\\s\\S]*${PARENT_PROMPT})[\\s\\S]*Claude Code[\\s\\S]*❯`), 90_000);
    expect(treeFile()).toMatchObject({ focus: childId, nodes: { [rootId]: { state: 'suspended' } } });
    await typeLine('CHILD hello from the desk');
    await waitScreen(/Echo: CHILD hello from the desk/);
    const childTurn = mock.requests.find((r) => lastUserText(r.body) === 'CHILD hello from the desk')!;
    // Its history is the child's own: the task it was spawned with.
    expect(JSON.stringify(childTurn.body.messages)).toContain(CHILD_TASK);
    expect(tokenOf(childId)).toBe(childToken);

    // Back to the parent's UI: the same session, the child's answer delivered to it once.
    const exitAt = performance.now();
    await typeLine('/ase:exit');
    const isDelivery = (r: RecordedRequest) => r.body?.stream === true && lastUserText(r.body).startsWith(`[sub-agent ${childId}`);
    await waitScreen(/Echo: \[sub-agent/, 90_000);
    console.log(`/ase:exit to the parent's answer to the result (claude): ${Math.round(performance.now() - exitAt)} ms`);
    const deliveries = mock.requests.filter(isDelivery);
    expect(deliveries).toHaveLength(1);
    expect(lastUserText(deliveries[0]!.body)).toContain('Echo: CHILD hello from the desk');
    // Its history is the parent's: the same agent session continued, not a new one.
    expect(JSON.stringify(deliveries[0]!.body.messages)).toContain(PARENT_PROMPT);
    expect(tokenOf(rootId)).toBe(parentToken);
    expect(treeFile()).toMatchObject({ focus: rootId, nodes: { [childId]: { state: 'completed', delivered: true } } });
    // No /ase line ever reached a model.
    expect(mock.requests.some((r) => JSON.stringify(r.body?.messages ?? []).includes('/ase:'))).toBe(false);

    // The parent goes on as usual; Ctrl-] then h (the chord menu) hands it over and ends the desk.
    await typeLine('PARENT after the child');
    await waitScreen(/Echo: PARENT after the child/);
    expect(mock.requests.filter(isDelivery)).toHaveLength(1);
    tmux('send-keys', '-t', 'desk', 'C-]');
    await waitScreen(/h hand to remote control/);
    tmux('send-keys', '-t', 'desk', 'h');
    await waitScreen(/ase exited 0/, 60_000);

    // Nothing left behind: no agent or host process, no hook directory.
    expect(findProcesses((p) => p.environ().includes(root) && !/\) Z /.test(p.stat()) && !p.cmdline().startsWith('sh') && !p.cmdline().startsWith('tmux'))).toEqual([]);
    expect(readdirSync(hostTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  });
});
