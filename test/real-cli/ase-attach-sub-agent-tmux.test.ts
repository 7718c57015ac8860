/**
 * `ase attach`'s sub-agent menu (issue 21, Deliver 3) on Claude Code, driven as a person would in
 * a real terminal (tmux on a private socket): `ase serve` hosts a Claude parent in local mode
 * (`ase run --mode local`, which goes through the server and attaches as its desk) and a Claude
 * sub-agent spawned into its tree by a remote client (`POST /api/sessions {parentId}`; `ase serve`
 * offers its sessions no `spawn_session`). At the desk: Ctrl-] lists the child, 1 enters it (the
 * child's own terminal UI, same session id), a line is typed to it, Ctrl-] x goes back to the
 * parent's UI, which takes the child's answer once (typed into it) and answers it, as the same
 * agent session; Ctrl-] h hands over and ends the desk. Then: no agent process, no hook directory.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startAseServe, type AseServeProcess } from '../support/ase-serve-process.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { seedClaudeTuiConfig } from '../support/headless-screen.js';
import { findProcesses, waitUntil } from '../support/processes.js';
import { hasTmux, openTmuxDesk, writeDeskScript, type TmuxDesk } from '../support/tmux-desk.js';

describe.runIf(hasTmux)('ase attach: enter a sub-agent of a session ase serve hosts, and back (claude, tmux)', () => {
  let root: string;
  let mock: AnthropicMock;
  let desk: TmuxDesk | undefined;
  let server: AseServeProcess | undefined;

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'ase-tmux-attach-tree-'));
    mock = await startAnthropicMock();
  }, 240_000);

  afterAll(async () => {
    desk?.close();
    await server?.stop('SIGKILL').catch(() => undefined);
    await mock?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('Ctrl-] 1 enters the child (its own UI), a line to it, Ctrl-] x back: the parent takes its answer once as the same session; nothing left behind', async () => {
    const work = join(root, 'work');
    const data = join(root, 'data');
    const hookTmp = join(root, 'tmp');
    mkdirSync(work, { recursive: true });
    mkdirSync(hookTmp, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root: join(root, 'claude') });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
    const claudeProcesses = () => findProcesses((p) => !/\) Z /.test(p.stat()) && p.cmdline().includes(claudeBinary()) && p.environ().includes(root));

    server = await startAseServe({ dataDir: data, env: { TMPDIR: hookTmp } });
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const run = [process.execPath, ASE_BIN, 'run', '--mode', 'local', '--agent', 'claude', '--bin', claudeBinary(), '--data-dir', data, '--cwd', work, ...envArgs];
    desk = openTmuxDesk({ root, script: writeDeskScript(join(root, 'run.sh'), { cwd: work, argv: run }), env: { HOME: env.HOME! }, context: () => server!.output() });
    const typeLine = async (text: string) => {
      desk!.type(text);
      await desk!.waitScreen(new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      desk!.press('Enter');
    };
    const api = (method: string, route: string, body?: unknown) => server!.api(method, route, body);
    const stored = (id: string) => (JSON.parse(readFileSync(join(data, 'sessions', `${id}.json`), 'utf8')) as { state: { resumeToken?: string } }).state.resumeToken;

    // The parent's UI, one turn in it.
    await desk.waitScreen(/❯/, { timeoutMs: 90_000 });
    const parentId = ((await api('GET', '/api/sessions')).body.sessions as { sessionId: string }[])[0]!.sessionId;
    await typeLine('PARENT first');
    await desk.waitScreen(/Echo: PARENT first/, { timeoutMs: 60_000 });
    const parentToken = stored(parentId);
    expect(parentToken).toMatch(/^[0-9a-f-]{36}$/);

    // A sub-agent in its tree, on the same agent and mock.
    const created = await api('POST', '/api/sessions', { agent: 'claude', workDir: work, parentId, engineOptions: { env, bin: claudeBinary() } });
    expect(created.status).toBe(201);
    const childId = created.body.sessionId as string;

    // Ctrl-] lists it; 1 enters it: its own terminal UI (the parent's lines gone), the tree's focus on it.
    desk.press('C-]');
    await desk.waitScreen(new RegExp(`1\\s+${childId}\\s+claude\\s+active`));
    desk.type('1');
    await desk.waitScreen(/^(?![\s\S]*PARENT first)[\s\S]*Claude Code[\s\S]*❯/, { timeoutMs: 90_000 });
    expect((await api('GET', `/api/sessions/${parentId}/tree`)).body).toMatchObject({ focus: childId, nodes: { [parentId]: { state: 'suspended' } } });
    await typeLine('CHILD hello');
    await desk.waitScreen(/Echo: CHILD hello/, { timeoutMs: 60_000 });

    // Ctrl-] x: back to the parent's UI; the child's answer typed into it, once; the parent answers it.
    desk.press('C-]');
    await desk.waitScreen(/x back to parent/);
    desk.type('x');
    const isDelivery = (r: { body: any }) => r.body?.stream === true && lastUserText(r.body).startsWith(`[sub-agent ${childId}`);
    await desk.waitScreen(/Echo: \[sub-agent/, { timeoutMs: 90_000 });
    const deliveries = mock.requests.filter(isDelivery);
    expect(deliveries).toHaveLength(1);
    expect(lastUserText(deliveries[0]!.body)).toContain('Echo: CHILD hello');
    // The parent's own agent session, continued: its history has its first turn.
    expect(JSON.stringify(deliveries[0]!.body.messages)).toContain('PARENT first');
    expect(stored(parentId)).toBe(parentToken);
    await expect.poll(async () => (await api('GET', `/api/sessions/${parentId}/tree`)).body, { timeout: 30_000 }).toMatchObject({ focus: parentId, nodes: { [childId]: { state: 'completed', delivered: true } } });
    // The completed child's agent is stopped.
    await expect.poll(async () => (await api('GET', `/api/sessions/${childId}`)).body, { timeout: 30_000 }).toMatchObject({ live: false });

    // The parent goes on; Ctrl-] h hands it over and ends the desk, the terminal canonical again.
    await typeLine('PARENT after the child');
    await desk.waitScreen(/Echo: PARENT after the child/, { timeoutMs: 60_000 });
    expect(mock.requests.filter(isDelivery)).toHaveLength(1);
    desk.press('C-]');
    await desk.waitScreen(/h hand to remote control/);
    desk.type('h');
    await desk.waitScreen(/ase exited 0[\s\S]*icanon/, { timeoutMs: 60_000 });

    // Nothing left behind once the server stops: no agent, no hook directory.
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(await waitUntil(() => claudeProcesses().length === 0, 30_000)).toBe(true);
    expect(readdirSync(hookTmp).filter((name) => name.startsWith('ase-'))).toEqual([]);
  }, 480_000);
});
