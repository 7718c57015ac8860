import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentEventSchema, type AgentEventBody } from '../../src/events/agent-event.js';
import { ClaudeTranslator, projectSlug } from '../../src/engines/claude/translate.js';
import { MAX_SKIPPED } from '../../src/engines/core/skipped-inputs.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = join(repoRoot, 'test', 'fixtures', 'claude', 'smoke-multi-turn-tool.jsonl');

type Json = Record<string, any>;
function cliLines(): Json[] {
  return readFileSync(fixture, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { dir: string; msg?: Json })
    .filter((e) => e.dir === 'cli->host' && e.msg)
    .map((e) => e.msg!);
}

const result = (total: number, extra: Json = {}): Json => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  stop_reason: 'end_turn',
  terminal_reason: 'completed',
  total_cost_usd: total,
  usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 },
  ...extra,
});

function run(t: ClaudeTranslator, msgs: unknown[]): AgentEventBody[] {
  return msgs.flatMap((m) => t.translate(m));
}

describe('ClaudeTranslator on the recorded real traffic', () => {
  const lines = cliLines();
  const t = new ClaudeTranslator({ configDir: '/cfg' });
  const events = run(t, lines);
  const sessionId = 'a0308261-f4a9-4701-8ea9-55dc9eb0b1d2';

  it('produces valid AgentEvent bodies in the expected order', () => {
    for (const e of events) expect(() => AgentEventSchema.parse({ ...e, gen: 1, at: 0 })).not.toThrow();
    const compact = events
      .map((e) => e.type)
      .join(',')
      .replace(/(text_delta,)+/g, 'text_delta*,');
    expect(compact).toBe(
      [
        'session_identified',
        'text_delta*,message,turn_complete',
        'text_delta*,message,turn_complete',
        'message,tool_call,tool_result',
        'text_delta*,message,turn_complete',
      ].join(','),
    );
    expect(t.skipped).toEqual([]);
  });

  it('identifies the session once, with the transcript path', () => {
    const ids = events.filter((e) => e.type === 'session_identified');
    expect(ids).toEqual([
      { type: 'session_identified', resumeToken: sessionId, transcriptPath: `/cfg/projects/${projectSlug('<ROOT>/work')}/${sessionId}.jsonl` },
    ]);
    expect(projectSlug('/tmp/x_y/work')).toBe('-tmp-x-y-work');
  });

  it('assembles text deltas into the message text', () => {
    const messages = events.filter((e) => e.type === 'message');
    const texts = ['Hello from the mock, streamed in pieces.', 'Echo: second prompt', 'File created.'];
    const textMessages = messages.filter((m) => m.blocks.some((b) => b.type === 'text'));
    expect(textMessages).toHaveLength(3);
    textMessages.forEach((m, i) => {
      const deltas = events.filter((e) => e.type === 'text_delta' && e.messageId === m.id).map((e) => (e as { text: string }).text);
      expect(deltas.join('')).toBe(texts[i]);
      expect(m.blocks).toEqual([{ type: 'text', text: texts[i] }]);
      expect(m.role).toBe('assistant');
    });
  });

  it('reports the Bash call, then its result', () => {
    const call = events.find((e) => e.type === 'tool_call');
    const res = events.find((e) => e.type === 'tool_result');
    expect(call).toMatchObject({ type: 'tool_call', callId: 'toolu_mock_46f4611b4acb476d8241a2a94b62b0dd', toolName: 'Bash', input: { command: 'touch <ROOT>/x.txt' } });
    expect(res).toEqual({
      type: 'tool_result',
      callId: 'toolu_mock_46f4611b4acb476d8241a2a94b62b0dd',
      status: 'completed',
      output: '(Bash completed with no output)',
      isError: false,
    });
    expect(events.indexOf(call!)).toBeLessThan(events.indexOf(res!));
  });

  it('reports per-turn usage and cost deltas that sum to the final total', () => {
    const done = events.filter((e) => e.type === 'turn_complete');
    expect(done.map((d) => d.status)).toEqual(['completed', 'completed', 'completed']);
    expect(done.map((d) => d.stopReason)).toEqual(['end_turn', 'end_turn', 'end_turn']);
    expect(done.map((d) => d.usage.inputTokens)).toEqual([12, 12, 24]);
    expect(done.map((d) => d.usage.outputTokens)).toEqual([10, 5, 25]);
    const costs = done.map((d) => d.usage.costUsd!);
    expect(costs[0]).toBeCloseTo(0.000248, 12);
    expect(costs[1]).toBeCloseTo(0.000148, 12);
    expect(costs[2]).toBeCloseTo(0.000596, 12);
    expect(costs.reduce((a, b) => a + b, 0)).toBeCloseTo(0.000992, 12);
  });
});

describe('ClaudeTranslator diagnostics', () => {
  it('keeps only the newest skipped lines (a long session of junk cannot grow it without bound)', () => {
    const t = new ClaudeTranslator();
    for (let i = 0; i < MAX_SKIPPED + 100; i++) t.translateLine(`junk ${i}`);
    expect(t.skipped).toHaveLength(MAX_SKIPPED);
    expect(t.skipped.at(-1)?.raw).toBe(`junk ${MAX_SKIPPED + 99}`);
    expect(t.skipped[0]?.raw).toBe('junk 100');
  });
});

describe('ClaudeTranslator hand-written cases', () => {
  it('maps API error results to typed errors and a failed turn', () => {
    const cases: [Json, string, boolean][] = [
      [{ api_error_status: 401 }, 'auth', false],
      [{ api_error_status: 403 }, 'auth', false],
      [{ api_error_status: 429 }, 'rate_limited', true],
      [{ api_error_status: 529 }, 'transient', true],
      [{ api_error_status: 500 }, 'transient', true],
      [{ api_error_status: 400 }, 'fatal', false],
      [{ subtype: 'error_max_turns', terminal_reason: 'max_turns', errors: ['Reached maximum number of turns (1)'] }, 'budget_exceeded', false],
      [{ subtype: 'error_max_budget_usd', errors: ['budget'] }, 'budget_exceeded', false],
    ];
    for (const [extra, kind, retryable] of cases) {
      const t = new ClaudeTranslator();
      const out = t.translate(result(0.01, { is_error: true, terminal_reason: 'api_error', result: 'API Error: boom', ...extra }));
      expect(out[0]).toMatchObject({ type: 'error', kind, retryable });
      expect((out[0] as { message: string }).message.length).toBeGreaterThan(0);
      expect(out[1]).toMatchObject({ type: 'turn_complete', status: 'failed' });
    }
  });

  it('maps "Not logged in" (no status; the synthetic assistant line says authentication_failed) to auth', () => {
    // As recorded (not-logged-in.jsonl): no request is made, so the result has no api_error_status.
    const t = new ClaudeTranslator();
    const synthetic = { type: 'assistant', message: { id: 'x', model: '<synthetic>', content: [{ type: 'text', text: 'Not logged in · Please run /login' }] }, error: 'authentication_failed', is_api_error_message: true };
    const failed = result(0, { is_error: true, terminal_reason: 'api_error', api_error_status: null, result: 'Not logged in · Please run /login' });
    const out = [...t.translate(synthetic), ...t.translate(failed)];
    expect(out.find((e) => e.type === 'error')).toMatchObject({ kind: 'auth', retryable: false, message: 'Not logged in · Please run /login' });
    // The note is per turn: a later failure without that line is not auth.
    expect(t.translate(failed)[0]).toMatchObject({ type: 'error', kind: 'fatal' });
  });

  it('maps an interrupted turn to cancelled without an error', () => {
    const t = new ClaudeTranslator();
    const out = t.translate(result(0, { subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_streaming' }));
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ type: 'turn_complete', status: 'cancelled' });
  });

  it('skips unknown message types and non-JSON lines without throwing', () => {
    const t = new ClaudeTranslator();
    expect(t.translate({ type: 'brand_new_thing', x: 1 })).toEqual([]);
    expect(t.translate(42)).toEqual([]);
    expect(t.translate({ type: 'assistant', message: 'nope' })).toEqual([]);
    expect(t.translateLine('this is not json')).toEqual([]);
    expect(t.translateLine('   ')).toEqual([]);
    expect(t.skipped).toHaveLength(4);
  });

  it('checks stream_event lines at the edge: a malformed one is skipped with the schema\'s reason, a well-formed one is used as sent', () => {
    const t = new ClaudeTranslator();
    const malformed = [
      { type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 5 } } },
      { type: 'stream_event', event: { type: 'content_block_delta', index: '0', delta: { type: 'text_delta', text: 'x' } } },
      { type: 'stream_event', event: 'content_block_delta' },
      { type: 'stream_event', event: { type: 'message_start', message: { id: 7 } } },
      { type: 'stream_event', event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } }, api_message_id: 3 },
      { type: 'stream_event', event: { type: 'content_block_delta', delta: [] } },
    ];
    for (const line of malformed) expect(t.translate(line), JSON.stringify(line)).toEqual([]);
    expect(t.skipped).toHaveLength(malformed.length);
    expect(t.skipped.every((s) => /^malformed stream_event/.test(s.reason))).toBe(true);
    const ok = { type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' }, extra: [1] }, api_message_id: 'msg_1', parent_tool_use_id: null, uuid: 'u' };
    expect(t.translate(ok)).toEqual([{ type: 'text_delta', messageId: 'msg_1', text: 'hi' }]);
  });

  it('treats total_cost_usd as cumulative across 3 results', () => {
    const t = new ClaudeTranslator();
    const costs = [0.1, 0.25, 0.45].map((total) => {
      const out = t.translate(result(total));
      return (out.at(-1) as { usage: { costUsd: number } }).usage.costUsd;
    });
    expect(costs[0]).toBeCloseTo(0.1, 12);
    expect(costs[1]).toBeCloseTo(0.15, 12);
    expect(costs[2]).toBeCloseTo(0.2, 12);
  });

  it('a resumed process bills only its own turn: total_cost_usd there starts from the resumed session total', () => {
    // Recorded (resume.jsonl): the first result of a `--resume`d CLI reports total_cost_usd
    // 0.000396 = the earlier process's turn (0.000228) + this turn (0.000168); the CLI restores the
    // session's cost total from its transcript. Only model_usage_since_last_result is this turn.
    const recorded = readFileSync(join(repoRoot, 'test', 'fixtures', 'claude', 'engine', 'resume.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { dir: string; msg?: Json })
      .find((r) => r.dir === 'from_agent' && r.msg?.type === 'result')!.msg!;
    expect(recorded.total_cost_usd).toBeCloseTo(0.000396, 12);
    const t = new ClaudeTranslator();
    const done = t.translate(recorded).at(-1) as { type: string; usage: { costUsd: number } };
    expect(done.type).toBe('turn_complete');
    expect(done.usage.costUsd).toBeCloseTo(0.000168, 12);
    // A later turn of the same process: since-last-result again (the total only grows by it).
    const next = t.translate({ ...recorded, total_cost_usd: 0.000396 + 0.0002, model_usage_since_last_result: { m: { costUSD: 0.0002 } } }).at(-1) as { usage: { costUsd: number } };
    expect(next.usage.costUsd).toBeCloseTo(0.0002, 12);
    // Without the field (older CLIs): the delta of total_cost_usd, as before.
    const { model_usage_since_last_result: _dropped, ...bare } = recorded;
    const older = t.translate({ ...bare, total_cost_usd: 0.000596 + 0.0001 }).at(-1) as { usage: { costUsd: number } };
    expect(older.usage.costUsd).toBeCloseTo(0.0001, 12);
  });

  it('emits session_identified again only when the id changes; thinking once per block', () => {
    const t = new ClaudeTranslator();
    const init = (id: string) => ({ type: 'system', subtype: 'init', session_id: id, cwd: '/w' });
    expect(t.translate(init('a'))).toHaveLength(1);
    expect(t.translate(init('a'))).toEqual([]);
    expect(t.translate(init('b'))).toEqual([{ type: 'session_identified', resumeToken: 'b' }]);
    const delta = { type: 'stream_event', api_message_id: 'm', event: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } } };
    expect(t.translate(delta)).toEqual([{ type: 'thinking', active: true }]);
    expect(t.translate(delta)).toEqual([]);
    expect(t.translate({ type: 'stream_event', api_message_id: 'm', event: { type: 'content_block_stop', index: 0 } })).toEqual([{ type: 'thinking', active: false }]);
  });

  it('marks denied tool results', () => {
    const t = new ClaudeTranslator();
    const user = (id: string, meta?: Json) => ({
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'no', is_error: true }] },
      ...(meta && { tool_result_meta: [meta] }),
    });
    expect(t.translate(user('a', { id: 'a', non_execution_kind: 'user-rejected' }))[0]).toMatchObject({ status: 'denied', isError: true });
    expect(t.translate(user('b'))[0]).toMatchObject({ status: 'failed' });
    t.noteDenied('c');
    expect(t.translate(user('c'))[0]).toMatchObject({ status: 'denied' });
  });

  it('property: per-turn costs sum to the final cumulative total', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 5, noNaN: true }), { minLength: 1, maxLength: 30 }), (increments) => {
        const t = new ClaudeTranslator();
        let total = 0;
        let sum = 0;
        for (const inc of increments) {
          total += inc;
          const done = t.translate(result(total)).at(-1) as { type: string; usage: { costUsd: number } };
          expect(done.type).toBe('turn_complete');
          expect(done.usage.costUsd).toBeGreaterThanOrEqual(0);
          sum += done.usage.costUsd;
        }
        expect(Math.abs(sum - total)).toBeLessThanOrEqual(1e-9 * Math.max(1, total));
      }),
    );
  });
});
