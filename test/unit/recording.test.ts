/**
 * The recording file (docs/recording.md) without any agent: what TrafficRecorder writes parses
 * against the documented schema, secrets stay out of the header, a file that is not a recording is
 * RECORDING_INVALID, and the replay script checks host lines (mapping the ids the host mints, a
 * redacted value matching anything) and answers with the recorded agent lines in order.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordingFactory, TrafficRecorder } from '../../src/engines/core/recorder.js';
import { ReplayScript } from '../../src/engines/core/replay-agent.js';
import { isAseError } from '../../src/errors.js';
import {
  fakeEngine,
  parseRecording,
  readRecording,
  recordedGenerations,
  RecordingHeaderSchema,
  RecordingRecordSchema,
  REDACTED,
  type RecordedGeneration,
} from '../../src/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ase-recording-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const header = {
  agent: 'claude',
  workDir: '/work/project',
  engineOptions: {
    model: 'sonnet',
    env: { ANTHROPIC_API_KEY: 'sk-secret', HOME: '/home/me', CLAUDE_CONFIG_DIR: '/home/me/.claude', ANTHROPIC_BASE_URL: 'https://user:pw@gateway' },
    mcpServers: { web: { command: 'mcp-web', env: { TOKEN: 't0k3n' } }, api: { type: 'http', url: 'https://x', headers: { Authorization: 'Bearer b' } } },
    authenticate: { methodId: 'api-key', apiKey: 'k' },
    onTraffic: () => undefined,
  },
  argv: ['run', '--agent', 'claude', '--env', 'ANTHROPIC_API_KEY=sk-secret', '--env=HOME=/home/me', '--option', 'apiToken=abc', '--option', 'model=sonnet', 'hi'],
};

describe('TrafficRecorder', () => {
  it('writes a header and records that parse against the documented schema, 0600, with secrets redacted', () => {
    const file = join(dir, 'r.jsonl');
    const recorder = new TrafficRecorder(file, header);
    recorder.start(1, 1000);
    recorder.tap(1)({ at: 1001, direction: 'to_agent', line: '{"type":"user"}' });
    recorder.tap(1)({ at: 1002, direction: 'from_agent', line: 'not json at all' });
    recorder.exit({ type: 'exited', gen: 1, at: 1003, code: 0, signal: null }, '2.1.330');
    recorder.close();
    recorder.start(2, 2000); // after close: dropped

    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const head = RecordingHeaderSchema.parse(JSON.parse(lines[0]!));
    for (const line of lines.slice(1)) RecordingRecordSchema.parse(JSON.parse(line));
    expect(head.engineOptions).toEqual({
      model: 'sonnet',
      env: { ANTHROPIC_API_KEY: REDACTED, HOME: '/home/me', CLAUDE_CONFIG_DIR: '/home/me/.claude', ANTHROPIC_BASE_URL: REDACTED },
      mcpServers: { web: { command: 'mcp-web', env: { TOKEN: REDACTED } }, api: { type: 'http', url: 'https://x', headers: { Authorization: REDACTED } } },
      authenticate: { methodId: 'api-key', apiKey: REDACTED },
    });
    expect(head.argv).toEqual(['run', '--agent', 'claude', '--env', `ANTHROPIC_API_KEY=${REDACTED}`, '--env=HOME=/home/me', '--option', `apiToken=${REDACTED}`, '--option', 'model=sonnet', 'hi']);
    for (const secret of ['sk-secret', 't0k3n', 'Bearer b', 'user:pw', 'abc']) expect(lines[0]).not.toContain(secret);

    const recording = readRecording(file);
    expect(recordedGenerations(recording)).toEqual([
      {
        gen: 1,
        traffic: [
          { kind: 'traffic', at: 1001, gen: 1, direction: 'to_agent', line: '{"type":"user"}' },
          { kind: 'traffic', at: 1002, gen: 1, direction: 'from_agent', line: 'not json at all' },
        ],
        exit: { code: 0, signal: null },
        agentVersion: '2.1.330',
      },
    ]);
  });

  it('writes to a handle, and refuses an engine with no traffic to record', () => {
    const chunks: string[] = [];
    const recorder = new TrafficRecorder({ write: (c: string) => chunks.push(c) }, header);
    expect(chunks).toHaveLength(1);
    expect(() => recordingFactory(fakeEngine(), recorder)).toThrow(/fake engine has no traffic to record/);
  });
});

describe('reading a recording', () => {
  const valid = (records: string[]) => [JSON.stringify({ format: 'ase-recording', version: 1, agent: 'codex', engineOptions: {}, workDir: '/w', aseVersion: '0.1.0', argv: [], startedAt: 'x' }), ...records].join('\n');

  it.each([
    ['an empty file', '', /:1: empty file/],
    ['another JSONL file', '{"type":"user"}\n', /:1: not an ase-recording header/],
    ['a newer version', '{"format":"ase-recording","version":2}\n', /:1: ase-recording version 2 \(this library reads version 1\)/],
    ['a header without its agent', '{"format":"ase-recording","version":1}\n', /:1: agent: /],
    ['a torn record', valid(['{"kind":"start","at":1,"gen":1}', '{"kind":"traffic","at":2,']), /:3: not JSON/],
    ['a record of an unknown kind', valid(['{"kind":"note","at":1,"gen":1}']), /:2: kind: /],
  ])('%s is RECORDING_INVALID naming the line', (_what, text, message) => {
    let error: unknown;
    try {
      parseRecording(text, 'f.jsonl');
    } catch (e) {
      error = e;
    }
    expect(isAseError(error, 'RECORDING_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(message);
  });

  it('a file that cannot be read is RECORDING_INVALID too', () => {
    expect(() => readRecording(join(dir, 'missing.jsonl'))).toThrow(/cannot be read \(ENOENT\)/);
    writeFileSync(join(dir, 'ok.jsonl'), `${valid([])}\n`);
    expect(readRecording(join(dir, 'ok.jsonl')).records).toEqual([]);
  });
});

describe('ReplayScript', () => {
  const generation = (traffic: [direction: 'to_agent' | 'from_agent', line: string][], exit?: RecordedGeneration['exit']): RecordedGeneration => ({
    gen: 3,
    traffic: traffic.map(([direction, line], i) => ({ kind: 'traffic', at: i, gen: 3, direction, line })),
    ...(exit && { exit }),
  });

  it('answers each matching host line with the agent lines that followed it, mapping the ids the host minted', () => {
    const script = new ReplayScript(
      generation([
        ['from_agent', '{"hello":true}'],
        ['to_agent', '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"cwd":"/recorded/work"}}'],
        ['from_agent', '{"jsonrpc":"2.0","id":0,"result":{}}'],
        ['from_agent', '{"jsonrpc":"2.0","method":"note","params":{"path":"/recorded/work/a"}}'],
        ['to_agent', '{"type":"control_request","request_id":"r-1","request":{"subtype":"interrupt"}}'],
        ['from_agent', '{"type":"control_response","response":{"request_id":"r-1","subtype":"success"}}'],
        ['to_agent', 'plain text'],
        ['from_agent', 'bye'],
      ]),
      [['/recorded/work', '/here']],
    );
    expect(script.opening()).toEqual(['{"hello":true}']);
    expect(script.hostLine('{"jsonrpc":"2.0","method":"initialize","params":{"cwd":"/here"},"id":7}')).toEqual([
      '{"jsonrpc":"2.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","method":"note","params":{"path":"/here/a"}}',
    ]);
    expect(script.hostLine('{"type":"control_request","request_id":"mine-9","request":{"subtype":"interrupt"}}')).toEqual([
      '{"type":"control_response","response":{"request_id":"mine-9","subtype":"success"}}',
    ]);
    expect(script.hostLine('plain text')).toEqual(['bye']);
    expect(script.endOfInput()).toEqual([]);
    expect(script.finished).toBe(true);
    expect(script.exit).toEqual({ code: 0, signal: null });
  });

  it('a redacted value the host wrote matches whatever was recorded there', () => {
    const script = new ReplayScript(generation([['to_agent', '{"method":"session/new","id":1,"params":{"mcpServers":[{"env":[{"name":"TOKEN","value":"t0k3n"}]}]}}']]));
    expect(script.hostLine(`{"method":"session/new","id":1,"params":{"mcpServers":[{"env":[{"name":"TOKEN","value":"${REDACTED}"}]}]}}`)).toEqual([]);
  });

  it.each([
    ['a different line', ['{"type":"user","text":"b"}'], /host line 1: the line differs from the recording\n {2}recorded: \{"type":"user","text":"a"\}\n {2}written: {2}\{"type":"user","text":"b"\}/],
    ['a line too many', ['{"type":"user","text":"a"}', '{"type":"user","text":"again"}'], /host line 2: the recording has nothing more here, not a host line\n  written:  \{"type":"user","text":"again"\}/],
  ])('%s is REPLAY_MISMATCH naming the line', (_what, lines, message) => {
    const script = new ReplayScript(generation([['to_agent', '{"type":"user","text":"a"}'], ['from_agent', '{"ok":1}']]));
    let error: unknown;
    try {
      for (const line of lines) script.hostLine(line);
    } catch (e) {
      error = e;
    }
    expect(isAseError(error, 'REPLAY_MISMATCH')).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(script.mismatch).toBe(error);
    expect((error as { details: { gen: number } }).details.gen).toBe(3);
  });

  it('stdin ending before the recorded host lines is REPLAY_MISMATCH; the recorded exit is kept', () => {
    const script = new ReplayScript(generation([['to_agent', '{"a":1}'], ['to_agent', '{"b":2}']], { code: 1, signal: null }));
    script.hostLine('{"a":1}');
    expect(() => script.endOfInput()).toThrow(/stdin ended with 1 recorded host line\(s\) still to come/);
    expect(script.exit).toEqual({ code: 1, signal: null });
  });
});
