/**
 * RolloutTranslator edge cases the fixture runs do not reach (a denied command, a tool without an
 * item, cached tokens, a rollout without history_mode, …). The line shapes are copied from real
 * rollout lines (reference codex.md §6.2 and the fixtures), trimmed to the fields that matter.
 */
import { describe, expect, it } from 'vitest';
import { RolloutTranslator, parseRolloutLine, type TranslatedEvent } from '../../src/engines/codex/rollout/index.js';

function run(lines: object[], path = '/x/rollout.jsonl') {
  const translator = new RolloutTranslator(path);
  const events: TranslatedEvent[] = [];
  const notes: string[] = [];
  for (const line of lines) {
    const parsed = parseRolloutLine(JSON.stringify(line));
    if (!parsed.ok) throw new Error(parsed.reason);
    const { events: out, note } = translator.translate(parsed.line);
    events.push(...out);
    if (note) notes.push(note);
  }
  return { translator, events, notes, bodies: events.map((e) => e.event) };
}

const meta = (historyMode?: string) => ({ type: 'session_meta', payload: { id: 'th-1', session_id: 'th-1', ...(historyMode ? { history_mode: historyMode } : {}) } });
const ev = (payload: object) => ({ type: 'event_msg', payload });
const item = (payload: object) => ({ type: 'response_item', payload });
const started = (turnId: string) => ev({ type: 'task_started', turn_id: turnId });
const usage = (input: number, cached: number, output: number) => ({ input_tokens: input, cached_input_tokens: cached, cache_write_input_tokens: 0, output_tokens: output, reasoning_output_tokens: 0, total_tokens: input + output });
const tokenCount = (last: object, total: object) => ev({ type: 'token_count', info: { last_token_usage: last, total_token_usage: total }, rate_limits: null });

describe('RolloutTranslator', () => {
  it('a rollout without history_mode is legacy; one with "paginated" is paginated', () => {
    expect(run([meta()]).translator.dialect).toBe('legacy');
    expect(run([meta('legacy')]).translator.dialect).toBe('legacy');
    expect(run([meta('paginated')]).translator.dialect).toBe('paginated');
  });

  it('per-turn usage: sums last_token_usage, splits cached input out, ignores info:null and repeated snapshots', () => {
    const { bodies } = run([
      meta('paginated'),
      started('t1'),
      tokenCount(usage(100, 40, 10), usage(100, 40, 10)),
      ev({ type: 'token_count', info: null, rate_limits: {} }),
      tokenCount(usage(200, 150, 5), usage(300, 190, 15)),
      tokenCount(usage(200, 150, 5), usage(300, 190, 15)), // repeat: same totals
      ev({ type: 'task_complete', turn_id: 't1', last_agent_message: null }),
      started('t2'),
      tokenCount(usage(50, 0, 1), usage(350, 190, 16)),
      ev({ type: 'task_complete', turn_id: 't2' }),
    ]);
    expect(bodies).toEqual([
      { type: 'session_identified', resumeToken: 'th-1', transcriptPath: '/x/rollout.jsonl' },
      { type: 'turn_complete', status: 'completed', usage: { inputTokens: 110, cacheReadTokens: 190, outputTokens: 15, cacheWriteTokens: 0 } },
      { type: 'turn_complete', status: 'completed', usage: { inputTokens: 50, cacheReadTokens: 0, outputTokens: 1, cacheWriteTokens: 0 } },
    ]);
  });

  it('first result per call wins; a call output alone (no item) is the result', () => {
    const { bodies } = run([
      meta('paginated'),
      started('t1'),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"rm -rf /x","sandbox_permissions":"require_escalated"}', call_id: 'call_a' }),
      ev({ type: 'item_completed', thread_id: 'th-1', turn_id: 't1', item: { type: 'CommandExecution', id: 'call_a', status: 'declined', aggregated_output: '', exit_code: null } }),
      item({ type: 'function_call_output', call_id: 'call_a', output: 'exec_command failed: CreateProcess { message: "Rejected(\\"User declined\\")" }' }),
      item({ type: 'function_call', name: 'update_plan', arguments: '{"plan":[]}', call_id: 'call_b' }),
      item({ type: 'function_call_output', call_id: 'call_b', output: 'Plan updated' }),
      item({ type: 'function_call', name: 'weird', arguments: 'not json', call_id: 'call_c' }),
      item({ type: 'function_call_output', call_id: 'call_c', output: { content: 'boom', success: false } }),
    ]);
    expect(bodies.slice(1)).toEqual([
      { type: 'tool_call', callId: 'call_a', toolName: 'shell', input: { command: 'rm -rf /x', sandbox_permissions: 'require_escalated' }, title: 'rm -rf /x' },
      { type: 'tool_result', callId: 'call_a', status: 'denied', output: '', isError: true },
      { type: 'tool_call', callId: 'call_b', toolName: 'update_plan', input: { plan: [] } },
      { type: 'tool_result', callId: 'call_b', status: 'completed', output: 'Plan updated', isError: false },
      { type: 'tool_call', callId: 'call_c', toolName: 'weird', input: 'not json' },
      { type: 'tool_result', callId: 'call_c', status: 'failed', output: 'boom', isError: true },
    ]);
  });

  it('legacy: a rejected command shows only in the call output text → denied; patch_apply_end is the patch result', () => {
    const { bodies } = run([
      meta(),
      started('t1'),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"touch x"}', call_id: 'call_1' }),
      item({ type: 'function_call_output', call_id: 'call_1', output: 'exec_command failed: CreateProcess { message: "Rejected(\\"User declined\\")" }' }),
      item({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch', call_id: 'call_2' }),
      ev({ type: 'patch_apply_end', call_id: 'call_2', turn_id: 't1', stdout: '', stderr: 'approval request failed', success: false, status: 'failed' }),
      item({ type: 'custom_tool_call_output', call_id: 'call_2', output: 'Exit code: 1' }),
    ]);
    expect(bodies.filter((b) => b.type === 'tool_result')).toEqual([
      { type: 'tool_result', callId: 'call_1', status: 'denied', output: expect.stringContaining('Rejected'), isError: true },
      { type: 'tool_result', callId: 'call_2', status: 'failed', output: 'approval request failed', isError: true },
    ]);
  });

  it('legacy: user messages get synthetic per-turn ids; agent_message events are ignored in favour of the response item', () => {
    const { events } = run([
      meta(),
      started('t1'),
      ev({ type: 'user_message', message: 'first' }),
      ev({ type: 'user_message', message: 'second' }),
      ev({ type: 'agent_message', message: 'hi', phase: null }),
      item({ type: 'message', role: 'user', id: 'msg_injected', content: [{ type: 'input_text', text: '<environment_context>…</environment_context>' }] }),
      item({ type: 'message', role: 'assistant', id: 'msg_9', content: [{ type: 'output_text', text: 'hi' }] }),
      ev({ type: 'turn_aborted', turn_id: 't1', reason: 'interrupted' }),
      ev({ type: 'user_message', message: 'outside a turn' }),
    ]);
    expect(events.slice(1).map((e) => [e.key.kind, e.key.turnId, e.key.itemId, e.event.type === 'message' ? e.event.blocks : e.event])).toEqual([
      ['message', 't1', 't1#user0', [{ type: 'text', text: 'first' }]],
      ['message', 't1', 't1#user1', [{ type: 'text', text: 'second' }]],
      ['message', 't1', 'msg_9', [{ type: 'text', text: 'hi' }]],
      ['turn_complete', 't1', 't1', { type: 'turn_complete', status: 'cancelled', stopReason: 'interrupted', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } }],
      ['message', '', '#user0', [{ type: 'text', text: 'outside a turn' }]],
    ]);
  });

  it('paginated: response_item messages are ignored (item_completed carries them); user_message events too', () => {
    const { bodies } = run([
      meta('paginated'),
      started('t1'),
      ev({ type: 'user_message', message: 'dup' }),
      item({ type: 'message', role: 'assistant', id: 'msg_1', content: [{ type: 'output_text', text: 'dup' }] }),
      item({ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'dup' }] }),
      ev({ type: 'item_completed', thread_id: 'th-1', turn_id: 't1', item: { type: 'AgentMessage', id: 'msg_1', content: [{ type: 'Text', text: 'a' }, { type: 'Text', text: 'b' }] } }),
      ev({ type: 'item_completed', thread_id: 'th-1', turn_id: 't1', item: { type: 'Reasoning', id: 'rs_2', summary_text: [], raw_content: [] } }),
    ]);
    expect(bodies.slice(1)).toEqual([{ type: 'message', role: 'assistant', id: 'msg_1', blocks: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }]);
  });

  it('a failed turn reports its error once (event_msg error and task_complete.error), classified by codex_error_info', () => {
    const { bodies } = run([
      meta('paginated'),
      started('t1'),
      ev({ type: 'error', message: 'unexpected status 401 Unauthorized', codex_error_info: 'unauthorized' }),
      ev({ type: 'task_complete', turn_id: 't1', last_agent_message: null, error: { message: 'unexpected status 401 Unauthorized', codex_error_info: 'unauthorized' } }),
      started('t2'),
      ev({ type: 'task_complete', turn_id: 't2', error: { message: 'busy', codex_error_info: { http_connection_failed: { http_status_code: 503 } } } }),
    ]);
    expect(bodies.slice(1).map((b) => (b.type === 'error' ? [b.kind, b.retryable, b.message] : [b.type, 'status' in b ? b.status : '']))).toEqual([
      ['auth', false, 'unexpected status 401 Unauthorized'],
      ['turn_complete', 'failed'],
      ['transient', true, 'busy'],
      ['turn_complete', 'failed'],
    ]);
  });

  it('an HTTP status in codex_error_info decides the kind, as in the live engines (shapes codex 0.169.0 wrote for a 401 and a 429)', () => {
    const failed = (turnId: string, message: string, info: unknown) => [started(turnId), ev({ type: 'task_complete', turn_id: turnId, last_agent_message: null, error: { message, codex_error_info: info } })];
    const { bodies } = run([
      meta('paginated'),
      ...failed('t1', 'unexpected status 401 Unauthorized: mock 401', { http_connection_failed: { http_status_code: 401 } }),
      ...failed('t2', 'exceeded retry limit, last status: 429 Too Many Requests', { response_too_many_failed_attempts: { http_status_code: 429 } }),
      ...failed('t3', 'We’re currently experiencing high demand', 'internal_server_error'),
    ]);
    expect(bodies.filter((b) => b.type === 'error').map((b) => (b.type === 'error' ? [b.kind, b.retryable] : []))).toEqual([
      ['auth', false],
      ['rate_limited', true],
      ['transient', true],
    ]);
  });

  it('notes (never throws on) unknown lines, lines before session_meta, and items without ids', () => {
    const { events, notes } = run([
      started('t0'),
      meta('paginated'),
      { type: 'brand_new_line', payload: {} },
      ev({ type: 'brand_new_event' }),
      item({ type: 'brand_new_item' }),
      item({ type: 'function_call', name: 'x', arguments: '{}' }),
      ev({ type: 'item_completed', item: { type: 'UserMessage' } }),
      ev({ type: 'item_completed', item: { type: 'WebSearch', id: 'ws_1' } }),
      { type: 'turn_context', payload: { turn_id: 't1' } },
      { type: 'world_state', payload: {} },
      meta('paginated'),
      { type: 'session_meta', payload: { id: 'other' } },
    ]);
    expect(events.map((e) => e.event.type)).toEqual(['session_identified']);
    expect(notes).toEqual([
      'event_msg before session_meta',
      'unknown line type brand_new_line',
      'unhandled event_msg brand_new_event',
      'unhandled response_item brand_new_item',
      'function_call without call_id/name',
      'item_completed without item id',
      'unhandled item_completed WebSearch',
      'second session_meta (other)',
    ]);
  });
});
