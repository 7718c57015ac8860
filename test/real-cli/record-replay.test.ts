/**
 * Record and replay as a user does it, against the REAL pinned agents and our mock model servers:
 * `ase run --record FILE` (and `createSession({record})`) writes a recording that parses against
 * the documented schema; `ase replay FILE` and `replayEngine(FILE)` run the real engine against a
 * stand-in that answers from it, with no model call and no agent binary, and produce the events
 * the recorded run produced. A doctored recording fails with REPLAY_MISMATCH naming the line.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AgentEventSchema,
  createSession,
  isAseError,
  readRecording,
  RecordingHeaderSchema,
  RecordingRecordSchema,
  REDACTED,
  replayEngine,
  type AgentEvent,
  type SessionNotice,
} from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startGeminiMock } from '../mocks/gemini-mock.js';
import { execCommandCall, startOpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticGemini } from '../support/acp-hermetic.js';
import { aseRun, processesMarked } from '../support/ase-run.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { testRunEnv } from '../support/orphan-check.js';

beforeAll(ensureBuiltCli, 120_000);

/**
 * What two runs of the same conversation must share: the events without their time and generation,
 * without `activity` (timing); the agent's gauges (`available_commands`, `context_usage`), which an
 * agent may send while the engine's handshake is still settling, as a set beside the ordered rest.
 */
const GAUGES = new Set(['available_commands', 'context_usage']);
const comparable = (events: AgentEvent[]) => {
  const bodies = events
    .filter((e) => e.type !== 'activity')
    .map((e) => {
      const { at: _at, gen: _gen, ...body } = e;
      return body;
    });
  return {
    ordered: bodies.filter((b) => !GAUGES.has(b.type)),
    gauges: bodies
      .filter((b) => GAUGES.has(b.type))
      .map((b) => JSON.stringify(b))
      .sort(),
  };
};

/** `ase replay FILE --json` in its own process, with nothing of the agents' on PATH or in the env. */
async function aseReplay(root: string, file: string) {
  const run = await execa(process.execPath, [ASE_BIN, 'replay', '--json', file], {
    cwd: root,
    env: { PATH: '/usr/bin:/bin', HOME: join(root, 'replay-home'), NO_COLOR: '1', ...testRunEnv() },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: 60_000,
  });
  const events = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => AgentEventSchema.parse(JSON.parse(line)));
  return { exitCode: run.exitCode, stderr: run.stderr.replace(/^session \S+\n?/, ''), events };
}

/** Every line of the file parses against the documented schema (header first, then records). */
function expectValidRecording(file: string) {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  expect(RecordingHeaderSchema.safeParse(JSON.parse(lines[0]!)).success).toBe(true);
  for (const line of lines.slice(1)) expect(RecordingRecordSchema.safeParse(JSON.parse(line)).error).toBeUndefined();
  return readRecording(file);
}

/** The recording with the first host line containing `find` rewritten (`find` → `replace`). */
function doctor(file: string, out: string, find: string, replace: string): number {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  let hostLine = 0;
  let doctored = 0;
  for (const [i, text] of lines.entries()) {
    if (i === 0) continue;
    const record = JSON.parse(text) as { kind: string; direction?: string; line?: string; gen: number };
    if (record.kind !== 'traffic' || record.direction !== 'to_agent') continue;
    hostLine++;
    if (doctored === 0 && record.line!.includes(find)) {
      lines[i] = JSON.stringify({ ...record, line: record.line!.split(find).join(replace) });
      doctored = hostLine;
    }
  }
  writeFileSync(out, `${lines.join('\n')}\n`);
  return doctored;
}

describe('record and replay (real agents, mock APIs)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-record-replay-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  describe('claude', () => {
    let mock: AnthropicMock;
    beforeEach(async () => {
      mock = await startAnthropicMock();
    });
    afterEach(async () => {
      await mock.close();
    });

    it('ase run --record, then ase replay: the same events, no model call; a doctored recording fails naming the line', async () => {
      const work = join(root, 'work');
      mkdirSync(work);
      const target = join(work, 'recorded.txt');
      const file = join(root, 'claude.jsonl');
      mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'Created it.' });
      const agentEnv = hermeticClaudeEnv({ port: mock.port, root });
      const run = await aseRun(root, work, ['--agent', 'claude', '--bin', claudeBinary(), '--yes', '--record', file, 'create the file please'], agentEnv);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);

      const recording = expectValidRecording(file);
      expect(recording.header).toMatchObject({ agent: 'claude', workDir: work, argv: expect.arrayContaining(['run', '--record', file, 'create the file please']) });
      // Values of --env are secrets as far as the header knows (names kept, values gone), but for places.
      const env = recording.header.engineOptions['env'] as Record<string, string>;
      expect(env['ANTHROPIC_API_KEY']).toBe(REDACTED);
      expect(env['ANTHROPIC_BASE_URL']).toBe(REDACTED);
      expect(env['CLAUDE_CONFIG_DIR']).toBe(agentEnv['CLAUDE_CONFIG_DIR']);
      expect(recording.header.argv.filter((a) => a.startsWith('ANTHROPIC_BASE_URL='))).toEqual([`ANTHROPIC_BASE_URL=${REDACTED}`]);
      const kinds = recording.records.map((r) => (r.kind === 'traffic' ? r.direction : r.kind));
      expect(kinds[0]).toBe('start');
      expect(kinds.at(-1)).toBe('exit');
      expect(kinds).toContain('to_agent');
      expect(kinds).toContain('from_agent');
      expect(recording.records.find((r) => r.kind === 'exit')).toMatchObject({ code: 0, agentVersion: '2.1.330' });

      const calls = mock.requests.length;
      rmSync(target);
      const replay = await aseReplay(root, file);
      expect(replay.stderr).toBe('');
      expect(replay.exitCode).toBe(0);
      expect(comparable(replay.events)).toEqual(comparable(run.events));
      expect(mock.requests.length).toBe(calls); // the stand-in answered, not the model
      expect(() => readFileSync(target)).toThrow(); // and no tool ran: the result came from the recording

      const bad = join(root, 'doctored.jsonl');
      const line = doctor(file, bad, 'create the file please', 'delete the file please');
      expect(line).toBeGreaterThan(0);
      const failed = await aseReplay(root, bad);
      expect(failed.exitCode).toBe(1);
      expect(failed.stderr).toContain(`REPLAY_MISMATCH: replay of generation 1: host line ${line}: the line differs from the recording`);
      expect(failed.stderr).toContain('delete the file please');
      expect(processesMarked(root)).toEqual([]);
    });

    it('createSession({record}) then replayEngine(file): the same events; another prompt rejects with a typed REPLAY_MISMATCH', async () => {
      const work = join(root, 'work');
      mkdirSync(work);
      const file = join(root, 'api.jsonl');
      mock.enqueue({ kind: 'text', text: 'Hello from the mock.' });
      const engineOptions = { bin: claudeBinary(), env: hermeticClaudeEnv({ port: mock.port, root }) };
      const collect = (into: AgentEvent[]) => (n: SessionNotice) => n.type === 'agent' && into.push(n.event);

      const recorded: AgentEvent[] = [];
      const live = await createSession({ agent: 'claude', workDir: work, dataDir: join(root, 'data'), engineOptions, record: file, onNotice: collect(recorded) });
      const result = await live.run('say hello');
      await live.stop();
      expect(result.status).toBe('completed');
      const recording = expectValidRecording(file);
      expect(recording.header.argv).toEqual([]);

      const calls = mock.requests.length;
      const engine = replayEngine(file);
      const replayed: AgentEvent[] = [];
      // No bin, no env: the recorded options (redacted) and the stand-in are all the engine needs.
      const again = await createSession({ agent: engine.name, workDir: work, dataDir: join(root, 'data2'), engines: [engine], onNotice: collect(replayed) });
      const second = await again.run('say hello');
      await again.stop();
      expect(second).toMatchObject({ status: 'completed', text: result.text });
      engine.assertReplayed();
      expect(comparable(replayed)).toEqual(comparable(recorded));
      expect(mock.requests.length).toBe(calls);

      // Driven otherwise than recorded (another prompt): the first differing host line is a typed error.
      const doctoredEngine = replayEngine(file);
      const other = await createSession({ agent: doctoredEngine.name, workDir: work, dataDir: join(root, 'data3'), engines: [doctoredEngine] });
      await other.run('say goodbye').catch(() => undefined);
      await other.stop();
      const error = doctoredEngine.mismatch;
      expect(isAseError(error, 'REPLAY_MISMATCH')).toBe(true);
      expect(error?.details).toMatchObject({ gen: 1, line: expect.any(Number) });
      expect(String((error?.details as { got?: string }).got)).toContain('say goodbye');
      expect(() => doctoredEngine.assertReplayed()).toThrow(error);
      expect(processesMarked(root)).toEqual([]);
    });
  });

  it('acp (gemini): ase run --record, then ase replay: the same events, agent-state events included', async () => {
    const mock = await startGeminiMock();
    try {
      const h = hermeticGemini({ port: mock.port, root });
      const file = join(root, 'gemini.jsonl');
      mock.enqueue({ kind: 'text', text: 'Hello from the Gemini mock.' });
      const run = await aseRun(root, h.work, ['--agent', 'acp', '--option', 'preset=gemini', '--record', file, 'say hello'], h.env);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      const recording = expectValidRecording(file);
      expect(recording.header).toMatchObject({ agent: 'acp', engineOptions: expect.objectContaining({ preset: 'gemini' }) });
      // The agent's state updates reach clients as AgentEvents (gemini announces its commands).
      const stateEvents = run.events.filter((e) => ['plan', 'agent_mode', 'available_commands', 'context_usage'].includes(e.type));
      const stateUpdates = recording.records.filter((r) => r.kind === 'traffic' && /"sessionUpdate":"(plan|current_mode_update|available_commands_update|usage_update)"/.test(r.line));
      expect(stateEvents.length).toBe(stateUpdates.length);

      const calls = mock.requests.length;
      const replay = await aseReplay(root, file);
      expect(replay.stderr).toBe('');
      expect(replay.exitCode).toBe(0);
      expect(comparable(replay.events)).toEqual(comparable(run.events));
      expect(mock.requests.length).toBe(calls);
      expect(processesMarked(root)).toEqual([]);
    } finally {
      await mock.close();
    }
  });

  it.each([
    ['codex', '0.169.0', '"turn/start"'],
    ['codex-mcp', '0.153.4', '"tools/call"'],
  ] as const)('%s: ase run --record, then ase replay: the same events, no model call, no binary run', async (agent, version, turnMethod) => {
    const mock = await startOpenAIResponsesMock();
    try {
      const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: version });
      const target = join(h.workDir, 'from-replay.txt');
      const file = join(root, `${agent}.jsonl`);
      mock.enqueue(execCommandCall(`echo hi > ${target}`, { sandbox_permissions: 'require_escalated', justification: 'write a file' }), { kind: 'text', text: 'Done.' });
      const run = await aseRun(root, h.workDir, ['--agent', agent, '--bin', h.bin, '--yes', '--option', 'approvalPolicy=on-request', '--record', file, 'write the file'], h.env);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      const recording = expectValidRecording(file);
      expect(recording.header).toMatchObject({ agent, engineOptions: expect.objectContaining({ approvalPolicy: 'on-request' }) });
      expect(recording.records.filter((r) => r.kind === 'traffic' && r.direction === 'to_agent' && r.line.includes(turnMethod))).toHaveLength(1);
      expect(recording.records.find((r) => r.kind === 'exit')).toMatchObject({ agentVersion: version });

      const calls = mock.requests.length;
      rmSync(target);
      const replay = await aseReplay(root, file);
      expect(replay.stderr).toBe('');
      expect(replay.exitCode).toBe(0);
      expect(comparable(replay.events)).toEqual(comparable(run.events));
      expect(replay.events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'completed' });
      expect(mock.requests.length).toBe(calls);
      expect(() => readFileSync(target)).toThrow();

      const bad = join(root, 'doctored.jsonl');
      expect(doctor(file, bad, 'write the file', 'write another file')).toBeGreaterThan(0);
      const failed = await aseReplay(root, bad);
      expect(failed.exitCode).toBe(1);
      expect(failed.stderr).toMatch(/REPLAY_MISMATCH: replay of generation 1: host line \d+: the line differs from the recording/);
      expect(processesMarked(root)).toEqual([]);
    } finally {
      await mock.close();
    }
  });
});
