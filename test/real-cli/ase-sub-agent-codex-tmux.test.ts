/**
 * Entering and leaving a sub-agent from the terminal with our key-chord menu, on the REAL pinned
 * Codex CLI (whose UI has no `/ase:` commands), in tmux, hermetic (our mock Responses API, loopback
 * only): `ase run --mode local --sub-agents --agent codex` shows the parent's own Codex UI; the
 * model (scripted) calls the host tool `spawn_session` for a Codex child; Ctrl-] opens the menu
 * listing the child, Esc closes it and the UI repaints without it; Ctrl-] then 1 enters the child
 * (its own Codex UI, same thread), the person types to it; Ctrl-] then x goes back: the parent's
 * UI is back at once and the child's answer is typed into it, reaching the model once, on the
 * parent's thread; Ctrl-] then h hands the parent to remote control and ends the run (exit 0).
 * Nothing is left: no process, no hook directory.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, startOpenAIResponsesMock, toolOutputsSinceLastUser, type MockReply, type OpenAIResponsesMock, type RecordedRequest } from '../mocks/openai-responses-mock.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML } from '../support/headless-screen.js';
import { findProcesses } from '../support/processes.js';
import { hasTmux, openTmuxDesk, writeDeskScript, type TmuxDesk } from '../support/tmux-desk.js';

const PARENT_PROMPT = 'PARENT split the work';
const CHILD_TASK = 'CHILD TASK count the files';
const MENU_KEYS = /h hand to remote control/;

describe.runIf(hasTmux)('sub-agents entered with the chord menu (ase run --mode local --sub-agents, real Codex CLI, tmux)', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let desk: TmuxDesk | undefined;

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-codex-tree-'));
    mock = await startOpenAIResponsesMock();
  }, 300_000);

  afterAll(async () => {
    desk?.close();
    await mock?.close();
    if (!process.env['ASE_KEEP_TMP']) rmSync(root, { recursive: true, force: true });
  });

  it('Ctrl-] menu: list, close cleanly, enter the Codex child, type, back to the parent fast with the result once, hand over', { timeout: 300_000 }, async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML });
    const dataDir = join(root, 'data');
    const hostTmp = join(root, 'host-tmp');
    mkdirSync(hostTmp, { recursive: true });

    // One router for every request, whoever sends it (parent or child; Codex's title requests the mock answers itself).
    const model = (request: RecordedRequest): MockReply => {
      const text = lastUserText(request.body);
      if (text === PARENT_PROMPT) {
        if (toolOutputsSinceLastUser(request.body).length > 0) return { kind: 'text', text: 'Spawned the child.' };
        return { kind: 'tool_call', name: 'spawn_session', namespace: 'mcp__host', arguments: { agent: 'codex', prompt: CHILD_TASK } };
      }
      // The child works on its task (a slow stream, 100 s) until the person enters it (entering interrupts it).
      if (text === CHILD_TASK) return { kind: 'text', text: 'child still counting. '.repeat(20), chunks: 200, delayMs: 500 };
      return { kind: 'text', text: `Echo: ${text.split('\n')[0]} | ${text.split('\n').slice(1).join(' ')}` };
    };
    mock.enqueue(...Array.from({ length: 60 }, () => model));

    const argv = [
      process.execPath, ASE_BIN, 'run', '--mode', 'local', '--sub-agents', '--agent', 'codex', '--bin', h.bin,
      '--option', 'approvalPolicy=on-request', '--option', 'model=gpt-5.5', '--data-dir', dataDir, '--cwd', h.workDir,
      ...Object.entries(h.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ];
    desk = openTmuxDesk({ root, script: writeDeskScript(join(root, 'run.sh'), { cwd: h.workDir, argv }), cols: 110, rows: 35, env: { HOME: h.home, ASE_TEST_ROOT: root, TMPDIR: hostTmp } });
    const d = desk;
    const typeLine = async (line: string) => {
      d.type(line);
      await d.waitScreen(new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      await new Promise((resolve) => setTimeout(resolve, 300)); // a burst then Enter at once is a paste's newline
      d.press('Enter');
    };
    const treeFile = () => {
      const files = readdirSync(join(dataDir, 'trees')).filter((f) => f.endsWith('.json'));
      return JSON.parse(readFileSync(join(dataDir, 'trees', files[0]!), 'utf8')) as { rootId: string; focus: string; nodes: Record<string, { parentId?: string; state: string; delivered?: boolean }> };
    };

    // The parent's Codex UI; the model calls spawn_session through the loopback MCP server.
    await d.waitScreen(/Ask Codex|›/, { timeoutMs: 90_000 });
    await typeLine(PARENT_PROMPT);
    await d.waitScreen(/Spawned the child\./, { timeoutMs: 90_000 });
    const { rootId, nodes } = treeFile();
    const childId = Object.keys(nodes).find((id) => id !== rootId)!;
    expect(nodes[childId]).toMatchObject({ parentId: rootId, state: 'active' });
    await expect.poll(() => mock.requests.some((r) => lastUserText(r.body) === CHILD_TASK), { timeout: 60_000 }).toBe(true);

    // Ctrl-]: the menu over the UI lists the child; Esc closes it, and the UI repaints without it.
    d.press('C-]');
    await d.waitScreen(new RegExp(`1  ${childId}  codex  active[\\s\\S]*1-9 enter`));
    expect(d.screen()).not.toMatch(/x back to parent/); // the root has no parent
    d.press('x'); // refused with a note, the menu stays
    await d.waitScreen(/is the top session/);
    d.press('Escape');
    await expect.poll(() => d.screen(), { timeout: 30_000 }).not.toMatch(MENU_KEYS);
    await d.waitScreen(/Spawned the child\./);
    expect(treeFile().focus).toBe(rootId);

    // Ctrl-] 1: the child's own Codex UI, its task interrupted; the person types to it.
    d.press('C-]');
    await d.waitScreen(MENU_KEYS);
    d.press('1');
    await d.waitScreen(new RegExp(`^(?![\\s\\S]*Spawned the child)[\\s\\S]*${CHILD_TASK}`), { timeoutMs: 90_000 });
    expect(treeFile()).toMatchObject({ focus: childId, nodes: { [rootId]: { state: 'suspended' } } });
    await d.waitScreen(/Ask Codex|›/, { timeoutMs: 60_000 });
    await typeLine('CHILD hello from the desk');
    await d.waitScreen(/Echo: CHILD hello from the desk/, { timeoutMs: 60_000 });
    const childTurn = mock.requests.find((r) => lastUserText(r.body) === 'CHILD hello from the desk')!;
    expect(JSON.stringify(childTurn.body.input)).toContain(CHILD_TASK); // the child's own thread

    // Ctrl-] x: back to the parent's UI at once; the child's answer is typed into it, answered once.
    d.press('C-]');
    await d.waitScreen(/x back to parent/);
    const leftAt = performance.now();
    d.press('x');
    // The parent's UI, with the child's answer typed into it (it shows the prompt as typed).
    await d.waitScreen(new RegExp(`› \\[sub-agent ${childId}`), { timeoutMs: 60_000 });
    const backMs = performance.now() - leftAt;
    await d.waitScreen(new RegExp(`Echo: \\[sub-agent ${childId}`), { timeoutMs: 90_000 });
    const answeredMs = performance.now() - leftAt;
    const isDelivery = (r: RecordedRequest) => lastUserText(r.body).startsWith(`[sub-agent ${childId}`);
    const deliveries = mock.requests.filter(isDelivery);
    expect(deliveries).toHaveLength(1);
    expect(lastUserText(deliveries[0]!.body)).toContain('Echo: CHILD hello from the desk');
    expect(JSON.stringify(deliveries[0]!.body.input)).toContain(PARENT_PROMPT); // the parent's own thread
    expect(treeFile()).toMatchObject({ focus: rootId, nodes: { [childId]: { state: 'completed', delivered: true } } });
    console.log(`chord-menu exit to parent (codex): result typed ${Math.round(backMs)} ms, answered ${Math.round(answeredMs)} ms`);
    // No detour through remote control (which starts the agent twice): the parent's one terminal UI
    // (generation 1) took it, and the session never changed mode.
    const parentJournal = readFileSync(join(dataDir, 'transcripts', `${rootId}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { gen: number; type: string });
    expect(parentJournal.filter((e) => e.type === 'mode_changed')).toEqual([]);
    expect(new Set(parentJournal.map((e) => e.gen))).toEqual(new Set([1]));

    // Ctrl-] h: handed to remote control, the run ends.
    d.press('C-]');
    await d.waitScreen(MENU_KEYS);
    d.press('h');
    await d.waitScreen(/ase exited 0\s+icanon/, { timeoutMs: 60_000 });
    expect(mock.requests.filter(isDelivery)).toHaveLength(1);

    // Nothing left behind: no agent or host process, no hook directory.
    expect(findProcesses((p) => p.environ().includes(root) && !/\) Z /.test(p.stat()) && !p.cmdline().startsWith('sh') && !p.cmdline().startsWith('tmux'))).toEqual([]);
    expect(readdirSync(hostTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  });
});
