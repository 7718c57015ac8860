/**
 * The `codex-exec` translator without the binary: the recorded real `codex exec --json` stream of
 * two turns (test/fixtures/codex/exec-two-turns.jsonl, written by test/real-cli/codex-exec-engine)
 * read turn by turn as the engine does, and the stream's edge cases: a failed turn, an item left
 * open, a process that died, malformed lines, the error kinds read from exec's text-only errors.
 */
import { describe, expect, it } from 'vitest';
import { CodexExecTranslator, classifyExecError } from '../../src/engines/codex/index.js';
import { usageSince } from '../../src/engines/codex/exec/thread-usage.js';
import { loadFixture } from '../support/codex-engine-kit.js';

/** The recorded stdout lines, split into turns (each exec process starts with `thread.started`). */
function recordedTurns(): unknown[][] {
  const turns: unknown[][] = [];
  for (const { dir, msg } of loadFixture('exec-two-turns').entries) {
    if (dir !== 'in') continue;
    if ((msg as { type?: string }).type === 'thread.started') turns.push([]);
    turns.at(-1)!.push(msg);
  }
  return turns;
}

describe('CodexExecTranslator', () => {
  it('replays two recorded turns: one session id, the answers, per-turn usage though exec resume reports thread totals', () => {
    const [first, second] = recordedTurns();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    const t1 = new CodexExecTranslator('t1.1');
    const events1 = first!.flatMap((line) => t1.translate(line));
    expect(t1.turnEnded).toBe(true);
    expect(events1.map((e) => e.type)).toEqual(['session_identified', 'message', 'turn_complete']);
    expect(events1[1]).toMatchObject({ role: 'assistant', id: 't1.1-item_0', blocks: [{ type: 'text', text: 'one' }] });
    expect(events1[2]).toMatchObject({ status: 'completed', usage: { inputTokens: 100 } });

    const t2 = new CodexExecTranslator('t1.2', t1.threadTotal);
    const events2 = second!.flatMap((line) => t2.translate(line));
    expect(events2[0]).toEqual(events1[0]); // the same thread, resumed
    expect(events2.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed', usage: { inputTokens: 100 } });
    expect(t2.threadTotal!['input_tokens']).toBe(200);
    // Without the baseline the thread total would be reported as the turn's.
    const naive = new CodexExecTranslator('x');
    expect(second!.flatMap((line) => naive.translate(line)).at(-1)).toMatchObject({ usage: { inputTokens: 200 } });
    expect([...t1.skipped, ...t2.skipped]).toEqual([]);
  });

  it('tool items become one call and one result; an item left open is cancelled at the turn end', () => {
    const t = new CodexExecTranslator('t2.1');
    const cmd = { id: 'item_1', type: 'command_execution', command: "bash -lc 'echo hi'", aggregated_output: '', exit_code: null, status: 'in_progress' };
    const out = [
      ...t.translate({ type: 'item.started', item: cmd }),
      ...t.translate({ type: 'item.completed', item: { ...cmd, aggregated_output: 'hi\n', exit_code: 0, status: 'completed' } }),
      ...t.translate({ type: 'item.started', item: { id: 'item_2', type: 'file_change', changes: [{ path: 'a', kind: 'add' }], status: 'in_progress' } }),
      ...t.translate({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 2 } }),
    ];
    expect(out.map((e) => [e.type, 'callId' in e ? e.callId : '', 'status' in e ? e.status : ''])).toEqual([
      ['tool_call', 't2.1-item_1', ''],
      ['tool_result', 't2.1-item_1', 'completed'],
      ['tool_call', 't2.1-item_2', ''],
      ['tool_result', 't2.1-item_2', 'cancelled'],
      ['turn_complete', '', 'completed'],
    ]);
    expect(out.at(-1)).toMatchObject({ usage: { inputTokens: 6, cacheReadTokens: 4, outputTokens: 2 } });
  });

  it('a failed turn reports one error with its kind; a dead process ends the turn once', () => {
    const t = new CodexExecTranslator('t3.1');
    const out = [...t.translate({ type: 'error', message: 'unexpected status 429 Too Many Requests' }), ...t.translate({ type: 'turn.failed', error: { message: 'unexpected status 429 Too Many Requests' } })];
    expect(out.map((e) => e.type)).toEqual(['error', 'turn_complete']);
    expect(out[0]).toMatchObject({ kind: 'rate_limited', retryable: true });
    expect(t.endWithoutResult('failed', 'exited')).toEqual([]);

    const dead = new CodexExecTranslator('t3.2');
    dead.translate({ type: 'thread.started', thread_id: 'abc' });
    expect(dead.endWithoutResult('failed', 'codex-exec: the turn process exited with code 1').map((e) => e.type)).toEqual(['error', 'turn_complete']);
    const aborted = new CodexExecTranslator('t3.3');
    expect(aborted.endWithoutResult('cancelled', 'aborted')).toEqual([expect.objectContaining({ type: 'turn_complete', status: 'cancelled' })]);
  });

  it('skips malformed and unknown lines, and warnings as error items, without events', () => {
    const t = new CodexExecTranslator('t4.1');
    expect(t.translate({ type: 'mystery' })).toEqual([]);
    expect(t.translate('not an object')).toEqual([]);
    expect(t.translate({ type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Model metadata not found' } })).toEqual([]);
    expect(t.skipped).toHaveLength(3);
  });

  it('reads error kinds from the wording of exec errors', () => {
    expect(classifyExecError('unexpected status 401 Unauthorized').kind).toBe('auth');
    expect(classifyExecError('We’re currently experiencing high demand').kind).toBe('transient');
    expect(classifyExecError('stream disconnected before completion: boom').kind).toBe('transient');
    expect(classifyExecError('something else').kind).toBe('fatal');
  });

  it('usage since a baseline: a smaller total means the counter restarted', () => {
    expect(usageSince({ input_tokens: 300, output_tokens: 9 }, { input_tokens: 200, output_tokens: 6 })).toMatchObject({ input_tokens: 100, output_tokens: 3 });
    expect(usageSince({ input_tokens: 50 }, { input_tokens: 200 })).toEqual({ input_tokens: 50 });
  });
});
