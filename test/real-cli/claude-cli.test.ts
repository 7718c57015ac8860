/**
 * `ase run --agent claude` as a user runs it (the built bin in its own process), against the REAL
 * pinned Claude Code CLI and our mock Messages API, pointed there with `--env` exactly as
 * docs/cli.md says.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentEventSchema, type AgentEvent } from '../../src/events/agent-event.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { ASE_BIN, ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { testRunEnv } from '../support/orphan-check.js';
import { findProcesses } from '../support/processes.js';

beforeAll(ensureBuiltCli, 120_000);

/** pids whose environment mentions `marker` (the ase process and the CLI it started). */
function processesMarked(marker: string): number[] {
  return findProcesses((proc) => proc.environ().includes(marker));
}

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
    const agentEnv = { ...hermeticClaudeEnv({ port: mock.port, root }), ...testRunEnv() };
    const args = ['run', '--agent', 'claude', '--bin', claudeBinary(), '--yes', '--json', '--data-dir', join(root, 'data')];
    for (const [key, value] of Object.entries(agentEnv)) args.push('--env', `${key}=${value}`);
    args.push('create the file please');

    const t = performance.now();
    const run = await execa(process.execPath, [ASE_BIN, ...args], {
      cwd: work,
      // The ase process itself: a throwaway HOME, nothing of ours (the CLI gets only the allow-list + --env).
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(root, 'ase-home'), NO_COLOR: '1', ...testRunEnv() },
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: 60_000,
    });
    const ms = Math.round(performance.now() - t);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const events: AgentEvent[] = run.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => AgentEventSchema.parse(JSON.parse(line)));
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
