/**
 * `ase run` with the codex and acp engines, as a user runs it: the built bin in its own process,
 * the engine picked from the default registry by name, engine options from `--option`, the agent
 * pointed at our mock with `--env`, against the REAL pinned agents.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGeminiMock } from '../mocks/gemini-mock.js';
import { execCommandCall, startOpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticGemini } from '../support/acp-hermetic.js';
import { aseRun, processesMarked } from '../support/ase-run.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { hermeticCodex } from '../support/codex-hermetic.js';

beforeAll(ensureBuiltCli, 120_000);

describe('ase run with the codex and acp engines (real agents, mock APIs)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-run-engines-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  // `ase run --yes` answers inside the permission notice, synchronously: the engine must already
  // hold the request when it reports it (a regression: the codex engines once registered it after).
  it.each([
    ['codex', '0.169.0'],
    ['codex-mcp', '0.153.4'],
  ] as const)('--agent %s: a shell command approved with --yes', async (agent, version) => {
    const mock = await startOpenAIResponsesMock();
    try {
      const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: version });
      const target = join(h.workDir, 'from-ase-run.txt');
      mock.enqueue(execCommandCall(`echo hi > ${target}`, { sandbox_permissions: 'require_escalated', justification: 'write a file' }), { kind: 'text', text: 'Done.' });
      const run = await aseRun(root, h.workDir, ['--agent', agent, '--bin', h.bin, '--yes', '--option', 'approvalPolicy=on-request', 'write the file'], h.env);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      expect(run.events.find((e) => e.type === 'permission_request')).toBeDefined();
      expect(run.events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'completed' });
      expect(run.events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
      expect(readFileSync(target, 'utf8')).toBe('hi\n');
      expect(processesMarked(root)).toEqual([]);
    } finally {
      await mock.close();
    }
  });

  it('--agent acp --option preset=gemini: a text turn', async () => {
    const mock = await startGeminiMock();
    try {
      const h = hermeticGemini({ port: mock.port, root });
      mock.enqueue({ kind: 'text', text: 'Hello from the Gemini mock.' });
      const run = await aseRun(root, h.work, ['--agent', 'acp', '--option', 'preset=gemini', 'say hello'], h.env);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      const text = run.events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
      expect(text).toBe('Hello from the Gemini mock.');
      expect(run.events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
      expect(existsSync(join(h.home, '.gemini'))).toBe(true); // the agent ran with the HOME we passed
      expect(processesMarked(root)).toEqual([]);
    } finally {
      await mock.close();
    }
  });
});
