/**
 * `ase run --agent claude` as a user runs it (the built bin in its own process), against the REAL
 * pinned Claude Code CLI and our mock Messages API, pointed there with `--env` exactly as
 * docs/cli.md says.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { aseRun, processesMarked } from '../support/ase-run.js';
import { ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';

beforeAll(ensureBuiltCli, 120_000);

describe('ase run --agent claude (real CLI, mock API)', () => {
  let root: string;
  let mock: AnthropicMock;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-cli-'));
    mock = await startAnthropicMock();
  });
  afterEach(async () => {
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs a tool-using turn with --yes and prints NDJSON AgentEvents', async () => {
    const work = join(root, 'work');
    mkdirSync(work);
    const target = join(work, 'from-ase-run.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'Created it.' });
    const agentEnv = hermeticClaudeEnv({ port: mock.port, root });

    const t = performance.now();
    const run = await aseRun(root, work, ['--agent', 'claude', '--bin', claudeBinary(), '--yes', 'create the file please'], agentEnv);
    const ms = Math.round(performance.now() - t);
    expect(run.stderr).toBe(''); // nothing but the session id line
    expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.exitCode).toBe(0);
    const { events } = run;
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ready', 'session_identified', 'permission_request', 'tool_call', 'tool_result', 'turn_complete']));
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'completed', isError: false });
    expect(events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(existsSync(target)).toBe(true);
    // The request reached our mock, and only our mock.
    expect(mock.requests.filter((r) => r.pathname === '/v1/messages').length).toBeGreaterThanOrEqual(2);
    expect(processesMarked(root)).toEqual([]);
    expect(existsSync(join(REPO_ROOT, 'dist', 'cli', 'bin.js'))).toBe(true);
    console.log(`[claude-cli] ase run --agent claude, tool turn: ${ms} ms end to end`);
  });
});
