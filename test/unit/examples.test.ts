/**
 * The examples are documentation that runs: each one's `main()` is executed here against the
 * source (vitest maps the package name to src/index.ts) and its final snapshot checked, and each is
 * run once more the way a user runs it, `node examples/<name>.mjs`, against the build. So an API
 * change that breaks an example breaks the build.
 */
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main as basicSession } from '../../examples/basic-session.mjs';
import { main as remotePermissions } from '../../examples/remote-permissions.mjs';
import { main as verifyTurnGit } from '../../examples/verify-turn-git.mjs';
import { main as replayRecording } from '../../examples/replay-recording.mjs';
import { main as supervisorExample } from '../../examples/supervisor.mjs';
import { main as remoteServer } from '../../examples/remote-server.mjs';
import { main as sessionTreeExample } from '../../examples/session-tree.mjs';
import { main as hostToolsExample } from '../../examples/host-tools.mjs';
import { ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

describe('examples', () => {
  let log: string[];

  beforeEach(() => {
    log = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      log.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('basic-session: one echoed turn, then a clean stop', async () => {
    const final = await basicSession();
    expect(final.done).toBe(true);
    expect(final.phase).toBe('stopped');
    expect(final.state).toBe('stopped');
    expect(final.mode).toBe('remote');
    expect(final.gen).toBe(1);
    expect(final.liveGen).toBeNull();
    expect(final.queue).toEqual([]);
    expect(final.requests).toEqual({});
    expect(final.usage.turns).toBe(1);
    expect(final.resumeToken).toEqual(expect.any(String));
    expect(log).toContain('agent: echo: hello');
    expect(log).toContain('turn msg-1 completed: 10 in / 20 out tokens, $0.0001');
    expect(log.some((line) => line.startsWith('stored phase=stopped'))).toBe(true);
    expect(log.some((line) => line.startsWith('error'))).toBe(false);
  });

  it('remote-permissions: the Bash request is approved with the updated input, the turn completes, the session stops', async () => {
    const final = await remotePermissions();
    expect(final.done).toBe(true);
    expect(final.phase).toBe('stopped');
    expect(final.requests).toEqual({});
    expect(Object.keys(final.completed)).toEqual(['perm-1']);
    expect(final.completed['perm-1']).toMatchObject({ status: 'approved', gen: 1 });
    expect(final.usage.turns).toBe(1);
    expect(final.usage.costUsd).toBeCloseTo(0.0042);
    expect(log).toContain('permission perm-1: approved');
    expect(log).toContain('a second answer is refused: PERMISSION_ALREADY_DECIDED');
    expect(log.some((line) => line.startsWith('tool result completed'))).toBe(true);
    expect(log).toContain('turn completed: "There are two entries." ($0.0042)');
  });

  it('supervisor: two sessions heard by one subscriber, the limit refuses a third, list shows open and stored, shutdown stops all', async () => {
    const sessions = await supervisorExample();
    expect(sessions.map((s) => [s.sessionId, s.status, s.phase, s.usage.turns])).toEqual(
      expect.arrayContaining([
        ['alpha', 'stored', 'stopped', 1],
        ['beta', 'running', 'idle', 1],
      ]),
    );
    expect(sessions).toHaveLength(2);
    // Alpha was open before the subscriber came (starting or already idle); beta was not.
    expect(log.filter((line) => line.startsWith('snapshot'))).toEqual([expect.stringMatching(/^snapshot alpha: running \((starting|idle)\)$/)]);
    expect(log).toContain('alpha says: echo: hello from alpha');
    expect(log).toContain('beta says: echo: hello from beta');
    expect(log).toContain('a third session is refused: SUPERVISOR_FULL');
    expect(log).toContain('after shutdown: 0 open');
  });

  it('host-tools: a tool answered, bad input refused before the handler, a sub-agent spawned whose answer reaches the parent once', async () => {
    const { toolResults, tree } = await hostToolsExample();
    expect(toolResults).toHaveLength(3);
    expect(toolResults[0]).toEqual([{ type: 'text', text: '{"title":"Ticket T-42: flaky test","state":"open"}' }]);
    expect(log).toContain('tool_result failed: invalid input for host tool "lookup_ticket": id: must match pattern "^T-[0-9]+$"');
    expect(log).toContain('parent turns: 2');
    const child = Object.values(tree?.nodes ?? {}).find((n) => n.parentId === 'parent');
    expect(child).toMatchObject({ state: 'completed', delivered: true, result: 'echo: fix the flaky test of T-42' });
  });

  it('session-tree: the child records its parent, the focus moves there and back, the list shows the tree', async () => {
    const sessions = await sessionTreeExample();
    expect(sessions.map((s) => [s.sessionId, s.parentId ?? null, s.parentCallId ?? null]).sort()).toEqual([
      ['parent', null, null],
      ['tests', 'parent', 'call-1'],
    ]);
    expect(log).toEqual(['spawned tests under parent', 'focus: tests, parent suspended', 'focus: parent', 'parent: running', 'tests (child of parent): running']);
  });
});

describe('examples: verify-turn-git', () => {
  it('a clean worktree is verified; a file left uncommitted makes the next turn unverified, naming it', async () => {
    const log: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void log.push(args.join(' ')));
    const entries = await verifyTurnGit();
    vi.restoreAllMocks();
    expect(entries.map((e) => e.payload)).toEqual([
      { localId: 'turn-1', verdict: 'verified', reason: 'git worktree clean: everything committed' },
      { localId: 'turn-2', verdict: 'unverified', reason: 'uncommitted changes: ?? notes.txt' },
    ]);
    expect(log).toContain('turn turn-2: unverified (uncommitted changes: ?? notes.txt)');
  });
});

describe('remote-server example', () => {
  let log: string[];
  beforeEach(() => {
    log = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void log.push(args.map(String).join(' ')));
  });
  afterEach(() => vi.restoreAllMocks());

  it('remote-server: a session over HTTP, a retried message answered the same and journaled once, a resume after seq 2', async () => {
    const transcript = (await remoteServer()) as { seq: number; type: string }[];
    expect(transcript.map((e) => e.seq)).toEqual(transcript.map((_, i) => i + 1));
    expect(transcript.filter((e) => e.type === 'user_message')).toHaveLength(1);
    expect(log).toContain('message msg-1 stored as seq 2; the retry got seq 2');
    expect(log).toContain('resumed after seq 2: 3, 4');
  });
});

describe('replay-recording', () => {
  let log: string[];
  beforeEach(() => {
    log = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void log.push(args.map(String).join(' ')));
  });
  afterEach(() => vi.restoreAllMocks());

  it('replays the recorded Claude session with no agent installed', async () => {
    const turn = await replayRecording();
    expect(turn).toMatchObject({ status: 'completed', text: 'The directory is empty.' });
    expect(log).toContain('tool call: Bash');
    expect(log).toContain('replayed: every host line matched the recording');
  });

  it('another prompt than the recorded one fails with REPLAY_MISMATCH', async () => {
    await expect(replayRecording('Delete everything.')).rejects.toMatchObject({ code: 'REPLAY_MISMATCH' });
  });
});

describe('examples under plain node', () => {
  beforeAll(ensureBuiltCli, 120_000);

  it.each([
    ['basic-session.mjs', ['agent: echo: hello', 'usage: 1 turn(s), 10 in / 20 out, $0.0001']],
    ['remote-permissions.mjs', ['permission perm-1: approved', 'done: phase=stopped, 1 turn(s), $0.0042']],
    ['verify-turn-git.mjs', ['turn turn-1: verified (git worktree clean: everything committed)', 'turn turn-2: unverified (uncommitted changes: ?? notes.txt)']],
    ['replay-recording.mjs', ['turn completed: The directory is empty.', 'replayed: every host line matched the recording']],
    ['supervisor.mjs', ['beta says: echo: hello from beta', 'a third session is refused: SUPERVISOR_FULL', 'after shutdown: 0 open']],
    ['session-tree.mjs', ['spawned tests under parent', 'focus: tests, parent suspended', 'tests (child of parent): running']],
    ['host-tools.mjs', ['tool_call lookup_ticket {"id":"T-42"}', 'parent turns: 2']],
    ['remote-server.mjs', ['message msg-1 stored as seq 2; the retry got seq 2', 'resumed after seq 2: 3, 4', 'user messages in the journal: 1']],
  ])('node examples/%s imports agent-session-engine by name and runs to the end', async (file, expected) => {
    // Its own cwd is the repository: `agent-session-engine` resolves to the package itself (its exports → dist).
    const result = await execa(process.execPath, [path.join('examples', file)], { cwd: REPO_ROOT, reject: false, timeout: 30_000 });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    for (const line of expected) expect(result.stdout.split('\n')).toContain(line);
  });
});

describe('examples: chat (the README`s chat in fifteen lines)', () => {
  beforeAll(ensureBuiltCli, 120_000);

  it('node examples/chat.mjs fake: streamed text, a y/n per tool request answered inline (allow, then deny), ends on EOF', async () => {
    const source = await import('node:fs/promises').then((fs) => fs.readFile(path.join(REPO_ROOT, 'examples', 'chat.mjs'), 'utf8'));
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
    // The README shows it as it is.
    expect(await import('node:fs/promises').then((fs) => fs.readFile(path.join(REPO_ROOT, 'README.md'), 'utf8'))).toContain(source.trimEnd());
    const dataDir = await import('node:fs/promises').then((fs) => fs.mkdtemp(path.join(os.tmpdir(), 'ase-chat-')));
    const ask = (n: number, then: string) => [{ text: `Checking ${n}. ` }, { ask: { toolName: 'Bash', input: { command: `ls ${n}` } }, onAllow: [{ text: `${then} ran.` }, { complete: {} }], onDeny: [{ text: `${then} skipped.` }, { complete: {} }] }];
    const script = { turns: [ask(1, 'First'), ask(2, 'Second')] };
    try {
      const result = await execa(process.execPath, [path.join('examples', 'chat.mjs'), 'fake', JSON.stringify({ script })], {
        cwd: REPO_ROOT,
        env: { ASE_DATA_DIR: dataDir },
        input: 'list the files\ny\nand again\nn\n',
        reject: false,
        timeout: 30_000,
      });
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain('> Checking 1. \nAllow Bash {"command":"ls 1"}? (y/n) First ran.\n[completed]');
      expect(result.stdout).toContain('> Checking 2. \nAllow Bash {"command":"ls 2"}? (y/n) Second skipped.\n[completed]');
    } finally {
      await import('node:fs/promises').then((fs) => fs.rm(dataDir, { recursive: true, force: true }));
    }
  });
});
