/**
 * AcpTranslator (session/update → AgentEvent bodies) and the permission option mapping, including
 * a fast-check property over arbitrary orderings of tool-call traffic.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AcpTranslator, chooseOutcome, outcomeAllows, PermissionBroker, resolveAcpOptions, classifyRpcError, turnUsage } from '../../src/engines/acp/index.js';
import { readPermissionRequest, readSessionUpdate } from '../../src/engines/acp/messages.js';
import type { AgentEventBody } from '../../src/events/agent-event.js';

const u = (update: Record<string, unknown>) => readSessionUpdate({ sessionId: 's', update })!;
const chunk = (text: string, kind = 'agent_message_chunk') => u({ sessionUpdate: kind, content: { type: 'text', text } });

function run(t: AcpTranslator, updates: Record<string, unknown>[]): AgentEventBody[] {
  return updates.flatMap((x) => t.update(u(x)));
}

describe('AcpTranslator', () => {
  it('streams text as deltas, skips empty chunks, and assembles one message per text run', () => {
    const t = new AcpTranslator({ idPrefix: 'acp-1' });
    t.beginTurn();
    const out = [
      ...t.update(chunk('')),
      ...t.update(chunk('Hello ')),
      ...t.update(chunk('world')),
      ...run(t, [{ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'ls', kind: 'execute', status: 'pending' }]),
      ...t.update(chunk('After.')),
      ...t.endTurn({ cancelled: false }),
    ];
    expect(out).toEqual([
      { type: 'text_delta', messageId: 'acp-1-t1-m0', text: 'Hello ' },
      { type: 'text_delta', messageId: 'acp-1-t1-m0', text: 'world' },
      { type: 'message', role: 'assistant', id: 'acp-1-t1-m0', blocks: [{ type: 'text', text: 'Hello world' }] },
      { type: 'tool_call', callId: 't1', toolName: 'execute', input: {}, title: 'ls' },
      { type: 'text_delta', messageId: 'acp-1-t1-m1', text: 'After.' },
      { type: 'message', role: 'assistant', id: 'acp-1-t1-m1', blocks: [{ type: 'text', text: 'After.' }] },
    ]);
  });

  it('keeps nothing of a finished tool call but its id: a long session does not hold every input and output', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const t = new AcpTranslator({ idPrefix: 'acp-1' });
    t.beginTurn();
    const refs: WeakRef<object>[] = [];
    const feed = (id: string): void => {
      const input = { command: 'cat big', pad: 'x'.repeat(1000) };
      const output = { stdout: 'y'.repeat(1000) };
      const content = [{ type: 'content', content: { type: 'text', text: 'z'.repeat(1000) } }];
      refs.push(new WeakRef(input), new WeakRef(output), new WeakRef(content));
      run(t, [
        { sessionUpdate: 'tool_call', toolCallId: id, title: 'cat', kind: 'read', status: 'pending', rawInput: input },
        { sessionUpdate: 'tool_call_update', toolCallId: id, status: 'completed', rawOutput: output, content },
        // A later update for the finished call is absorbed, not stored either.
        { sessionUpdate: 'tool_call_update', toolCallId: id, rawOutput: { again: output }, content },
      ]);
    };
    feed('t1');
    feed('t2');
    await new Promise((r) => setTimeout(r, 0)); // WeakRefs made in this job stay alive until it ends
    gc();
    expect(refs.map((r) => r.deref() === undefined)).toEqual(refs.map(() => true));
    expect(t.openToolCalls()).toEqual([]);
    expect(t.toolName('t1')).toBe('read');
  });

  it('reports thinking as active/inactive around thought chunks and keeps the thought in the message', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    t.beginTurn();
    const out = [...t.update(chunk('hmm ', 'agent_thought_chunk')), ...t.update(chunk('yes', 'agent_thought_chunk')), ...t.update(chunk('Answer')), ...t.endTurn({ cancelled: false })];
    expect(out.map((e) => e.type)).toEqual(['thinking', 'thinking', 'text_delta', 'message']);
    expect(out[0]).toEqual({ type: 'thinking', active: true });
    expect(out[1]).toEqual({ type: 'thinking', active: false });
    expect(out[3]).toMatchObject({ blocks: [{ type: 'thinking', text: 'hmm yes' }, { type: 'text', text: 'Answer' }] });
  });

  it('uses the agent messageId when given and starts a new message when it changes', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    t.beginTurn();
    const out = [...t.update(u({ sessionUpdate: 'agent_message_chunk', messageId: 'm-a', content: { type: 'text', text: 'a' } })), ...t.update(u({ sessionUpdate: 'agent_message_chunk', messageId: 'm-b', content: { type: 'text', text: 'b' } })), ...t.endTurn({ cancelled: false })];
    expect(out.filter((e) => e.type === 'message').map((e) => (e as { id: string }).id)).toEqual(['m-a', 'm-b']);
  });

  it('upserts tool calls: an empty first input is filled in later, a repeated identical tool_call is silent, the result comes once', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    t.beginTurn();
    const out = run(t, [
      { sessionUpdate: 'tool_call', toolCallId: 'x', title: 'Terminal', kind: 'execute', status: 'pending', rawInput: {}, _meta: { claudeCode: { toolName: 'Bash' } } },
      { sessionUpdate: 'tool_call', toolCallId: 'x', title: 'touch a', kind: 'execute', status: 'pending', rawInput: { command: 'touch a' } },
      { sessionUpdate: 'tool_call', toolCallId: 'x', title: 'touch a', kind: 'execute', status: 'pending', rawInput: { command: 'touch a' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'x', rawInput: {} },
      { sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'ok' } }] },
      { sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'failed' },
    ]);
    expect(out).toEqual([
      { type: 'tool_call', callId: 'x', toolName: 'Bash', input: {}, title: 'Terminal' },
      { type: 'tool_call', callId: 'x', toolName: 'Bash', input: { command: 'touch a' }, title: 'touch a' },
      { type: 'tool_result', callId: 'x', status: 'completed', output: { content: [{ type: 'content', content: { type: 'text', text: 'ok' } }] }, isError: false },
    ]);
    expect(t.toolName('x')).toBe('Bash');
  });

  it('a denied call ends `denied` at the decision; a cancelled turn closes the other open calls as `cancelled`', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    t.beginTurn();
    run(t, [
      { sessionUpdate: 'tool_call', toolCallId: 'a', title: 'A', status: 'pending' },
      { sessionUpdate: 'tool_call', toolCallId: 'b', title: 'B', status: 'in_progress' },
    ]);
    expect(t.deny('a')).toEqual([{ type: 'tool_result', callId: 'a', status: 'denied', isError: true }]);
    expect(run(t, [{ sessionUpdate: 'tool_call_update', toolCallId: 'a', status: 'failed' }])).toEqual([]);
    expect(t.endTurn({ cancelled: true })).toEqual([{ type: 'tool_result', callId: 'b', status: 'cancelled', isError: true }]);
    // A denial of a call never seen still produces a call before its result.
    expect(t.deny('ghost').map((e) => e.type)).toEqual(['tool_call', 'tool_result']);
  });

  it('reports plan, mode, commands and usage as agent-state events, keeps session info, records unknown variants as skipped', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    const out = run(t, [
      { sessionUpdate: 'plan', entries: [{ content: 'x', priority: 'high', status: 'pending' }] },
      { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'c', description: 'd' }] },
      { sessionUpdate: 'current_mode_update', currentModeId: 'plan' },
      { sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 0.5, currency: 'USD' } },
      { sessionUpdate: 'session_info_update', title: 'T' },
      { sessionUpdate: 'something_new' },
      { sessionUpdate: 'tool_call' },
    ]);
    expect(out).toEqual([
      { type: 'plan', entries: [{ content: 'x', priority: 'high', status: 'pending' }] },
      { type: 'available_commands', commands: [{ name: 'c', description: 'd' }] },
      { type: 'agent_mode', modeId: 'plan' },
      { type: 'context_usage', usedTokens: 10, windowTokens: 100, cost: { amount: 0.5, currency: 'USD' } },
    ]);
    expect(t.info).toMatchObject({ currentModeId: 'plan', title: 'T', context: { used: 10, size: 100 }, cost: { amount: 0.5, currency: 'USD' } });
    expect(t.skipped.map((s) => s.reason)).toEqual(['unknown session/update "something_new"', 'tool_call without a toolCallId']);
  });

  it('agent-state updates: odd entries are normalised or dropped, malformed updates skipped', () => {
    const t = new AcpTranslator({ idPrefix: 'p' });
    const out = run(t, [
      { sessionUpdate: 'plan', entries: [{ content: 'a', status: 'weird' }, { status: 'pending' }, { content: 'b', status: 'completed', priority: 'urgent' }] },
      { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'web', description: 'search', input: { hint: 'query' } }, { description: 'no name' }] },
      { sessionUpdate: 'plan' },
      { sessionUpdate: 'current_mode_update', currentModeId: 3 },
      { sessionUpdate: 'usage_update', used: 'many', size: 100 },
    ]);
    expect(out).toEqual([
      { type: 'plan', entries: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'completed' }] },
      { type: 'available_commands', commands: [{ name: 'web', description: 'search', inputHint: 'query' }] },
    ]);
    expect(t.skipped.map((s) => s.reason)).toEqual(['plan without entries', 'current_mode_update without currentModeId', 'usage_update without used/size']);
  });

  it('history mode reports user chunks as user messages', () => {
    const t = new AcpTranslator({ idPrefix: 'h', includeUserMessages: true });
    const out = [...t.update(chunk('hi', 'user_message_chunk')), ...t.update(chunk('hello')), ...t.endTurn({ cancelled: false })];
    expect(out.filter((e) => e.type === 'message')).toEqual([
      { type: 'message', role: 'user', id: 'h-t0-m0', blocks: [{ type: 'text', text: 'hi' }] },
      { type: 'message', role: 'assistant', id: 'h-t0-m1', blocks: [{ type: 'text', text: 'hello' }] },
    ]);
  });

  it('property: whatever the order of tool traffic, every call is reported before its single result, and nothing throws', () => {
    const ids = ['a', 'b', 'c'];
    const step = fc.oneof(
      fc.record({ kind: fc.constant('tool_call' as const), id: fc.constantFrom(...ids), input: fc.option(fc.dictionary(fc.string({ maxLength: 3 }), fc.integer()), { nil: undefined }), status: fc.constantFrom('pending', 'in_progress', 'completed', 'failed', undefined) }),
      fc.record({ kind: fc.constant('tool_call_update' as const), id: fc.constantFrom(...ids), input: fc.constant(undefined), status: fc.constantFrom('in_progress', 'completed', 'failed', undefined) }),
      fc.record({ kind: fc.constant('permission' as const), id: fc.constantFrom(...ids), input: fc.constant(undefined), status: fc.constant(undefined) }),
      fc.record({ kind: fc.constant('deny' as const), id: fc.constantFrom(...ids), input: fc.constant(undefined), status: fc.constant(undefined) }),
      fc.record({ kind: fc.constant('text' as const), id: fc.constant(''), input: fc.constant(undefined), status: fc.constant(undefined) }),
      fc.record({ kind: fc.constant('garbage' as const), id: fc.constant(''), input: fc.anything(), status: fc.constant(undefined) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.boolean(), (steps, cancelled) => {
        const t = new AcpTranslator({ idPrefix: 'p' });
        t.beginTurn();
        const out: AgentEventBody[] = [];
        for (const s of steps) {
          if (s.kind === 'permission') out.push(...t.permissionToolCall({ toolCallId: s.id, title: `perm ${s.id}` }));
          else if (s.kind === 'deny') out.push(...t.deny(s.id));
          else if (s.kind === 'text') out.push(...t.update(chunk('x')));
          else if (s.kind === 'garbage') {
            const parsed = readSessionUpdate({ sessionId: 's', update: { sessionUpdate: 'tool_call', junk: s.input } });
            if (parsed) out.push(...t.update(parsed));
          } else {
            out.push(...t.update(u({ sessionUpdate: s.kind, toolCallId: s.id, ...(s.status !== undefined && { status: s.status }), ...(s.input !== undefined && { rawInput: s.input }) })));
          }
        }
        out.push(...t.endTurn({ cancelled }));
        for (const id of ids) {
          const results = out.filter((e) => e.type === 'tool_result' && e.callId === id);
          expect(results.length).toBeLessThanOrEqual(1);
          const firstCall = out.findIndex((e) => e.type === 'tool_call' && e.callId === id);
          const result = out.findIndex((e) => e.type === 'tool_result' && e.callId === id);
          if (result >= 0) expect(firstCall).toBeGreaterThanOrEqual(0);
          if (result >= 0) expect(firstCall).toBeLessThan(result);
          // A cancelled turn leaves no reported call open.
          if (cancelled && firstCall >= 0) expect(result).toBeGreaterThan(firstCall);
        }
      }),
      { numRuns: Number(process.env['FC_RUNS'] ?? 300) },
    );
  });
});

describe('permission options', () => {
  const claude = [
    { optionId: 'allow_always', name: 'Always Allow', kind: 'allow_always' },
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ];
  const gemini = [
    { optionId: 'proceed_always', name: 'Allow for this session', kind: 'allow_always' },
    { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
    { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
  ];

  it('maps allow/deny by kind, whatever the ids', () => {
    expect(chooseOutcome(claude, { behavior: 'allow' })).toEqual({ outcome: 'selected', optionId: 'allow' });
    expect(chooseOutcome(gemini, { behavior: 'allow' })).toEqual({ outcome: 'selected', optionId: 'proceed_once' });
    expect(chooseOutcome(gemini, { behavior: 'deny', interrupt: false })).toEqual({ outcome: 'selected', optionId: 'cancel' });
    expect(chooseOutcome(gemini, { behavior: 'deny', interrupt: true })).toEqual({ outcome: 'cancelled' });
    expect(chooseOutcome([claude[0]!], { behavior: 'deny', interrupt: false })).toEqual({ outcome: 'cancelled' });
    expect(outcomeAllows(gemini, { outcome: 'selected', optionId: 'proceed_once' })).toBe(true);
    expect(outcomeAllows(gemini, { outcome: 'selected', optionId: 'cancel' })).toBe(false);
  });

  it('never picks allow_always on its own; an explicit choice can', () => {
    expect(() => chooseOutcome([claude[0]!, claude[2]!], { behavior: 'allow' })).toThrow(expect.objectContaining({ name: 'AseError', code: 'INVALID_INPUT' }));
    expect(chooseOutcome(claude, { behavior: 'allow', updatedPermissions: [{ kind: 'allow_always' }] })).toEqual({ outcome: 'selected', optionId: 'allow_always' });
    expect(chooseOutcome(gemini, { behavior: 'allow', updatedPermissions: [{ optionId: 'proceed_always' }] })).toEqual({ outcome: 'selected', optionId: 'proceed_always' });
    expect(() => chooseOutcome(gemini, { behavior: 'allow', updatedPermissions: [{ optionId: 'nope' }] })).toThrow(/no permission option matches/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ optionId: fc.string(), name: fc.string(), kind: fc.constantFrom('allow_once', 'allow_always', 'reject_once', 'reject_always', 'other') }), { selector: (o) => o.optionId }), (options) => {
        try {
          const outcome = chooseOutcome(options, { behavior: 'allow' });
          expect(outcome.outcome === 'selected' && options.find((o) => o.optionId === outcome.optionId)?.kind).toBe('allow_once');
        } catch (error) {
          expect(error).toMatchObject({ name: 'AseError', code: 'INVALID_INPUT' });
        }
      }),
    );
  });

  it('the broker answers each request once; cancelAll and grace expiry answer `cancelled`', async () => {
    const timers = { setTimeout: (fn: () => void, ms: number) => ({ id: Number(setTimeout(fn, ms)) }), clearTimeout: (h: { id: number }) => clearTimeout(h.id) };
    const answered: string[] = [];
    const broker = new PermissionBroker({ idPrefix: 'acp-2-perm', timers, graceMs: 10, onAnswered: (p, o, why) => answered.push(`${p.requestId}:${o.outcome}:${why}`) });
    const a = broker.open('number:0', 'call-a', claude);
    const b = broker.open('string:x', 'call-b', claude);
    const c = broker.open('number:1', 'call-c', claude);
    expect([a.requestId, b.requestId, c.requestId]).toEqual(['acp-2-perm-1', 'acp-2-perm-2', 'acp-2-perm-3']);
    expect(broker.settle(a.requestId, { outcome: 'selected', optionId: 'allow' }, 'decided')).toBe(true);
    expect(broker.settle(a.requestId, { outcome: 'cancelled' }, 'again')).toBe(false);
    expect(await broker.answerFor('number:0')).toEqual({ outcome: 'selected', optionId: 'allow' });
    broker.expireLater('turn ended', [b.requestId]);
    expect(await b.answer).toEqual({ outcome: 'cancelled' });
    expect(broker.cancelAll('stop')).toEqual([c.requestId]);
    expect(answered).toEqual(['acp-2-perm-1:selected:decided', 'acp-2-perm-2:cancelled:turn ended', 'acp-2-perm-3:cancelled:stop']);
    expect(broker.pending()).toEqual([]);
  });
});

describe('PermissionBroker memory', () => {
  it('keeps nothing of a request once it is answered and its answer handed to the SDK handler', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const timers = { setTimeout: (fn: () => void, ms: number) => ({ id: Number(setTimeout(fn, ms)) }), clearTimeout: (h: { id: number }) => clearTimeout(h.id) };
    const broker = new PermissionBroker({ idPrefix: 'acp-2-perm', timers, graceMs: 10 });
    const refs: WeakRef<object>[] = [];
    const ask = (key: string, answerFirst: boolean): Promise<unknown> => {
      const input = { content: 'x'.repeat(1000) };
      const options = [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }];
      refs.push(new WeakRef(input), new WeakRef(options));
      const pending = broker.open(key, 'call', options, input);
      if (answerFirst) broker.settle(pending.requestId, { outcome: 'cancelled' }, 'decided'); // answered inside the emit
      const answer = broker.answerFor(key)!; // the SDK handler picks it up
      if (!answerFirst) broker.settle(pending.requestId, { outcome: 'cancelled' }, 'decided');
      return answer;
    };
    await ask('number:0', true);
    await ask('number:1', false);
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(refs.map((r) => r.deref() === undefined)).toEqual(refs.map(() => true));
  });
});

describe('acp helpers', () => {
  it('reads permission requests leniently', () => {
    expect(readPermissionRequest({ sessionId: 's', toolCall: { toolCallId: 't' }, options: [{ optionId: 'o', kind: 'allow_once' }, { bad: 1 }] })).toEqual({
      sessionId: 's',
      toolCall: { toolCallId: 't' },
      options: [{ optionId: 'o', kind: 'allow_once', name: 'o' }],
    });
    expect(readPermissionRequest({ sessionId: 's', options: [] })).toBeUndefined();
  });

  it('classifies JSON-RPC errors', () => {
    expect(classifyRpcError(-32000, 'Authentication required')).toEqual({ kind: 'auth', retryable: false });
    expect(classifyRpcError(-32602, 'Invalid params')).toEqual({ kind: 'protocol', retryable: false });
    expect(classifyRpcError(-32603, 'Internal error', { message: '429 Too Many Requests' })).toEqual({ kind: 'rate_limited', retryable: true });
    expect(classifyRpcError(-32603, 'stream disconnected')).toEqual({ kind: 'transient', retryable: true });
  });

  it('reads per-turn usage from `usage` or gemini `_meta.quota`', () => {
    expect(turnUsage({ stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7, cachedWriteTokens: 1 } })).toEqual({ inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 1 });
    expect(turnUsage({ _meta: { quota: { token_count: { input_tokens: 12, output_tokens: 3 } } } })).toEqual({ inputTokens: 12, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(turnUsage({ usage: { inputTokens: -1, outputTokens: 'x' } })).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it('sums the turn\'s chunk `_meta.usage` (Qwen Code) once; the prompt result\'s own usage wins; nothing counted twice', () => {
    const t = new AcpTranslator({ idPrefix: 'acp-1' });
    const usageChunk = (usage: Record<string, unknown>, kind = 'agent_message_chunk') => ({ sessionUpdate: kind, content: { type: 'text', text: '' }, _meta: { usage, durationMs: 5 } });
    run(t, [usageChunk({ inputTokens: 50, outputTokens: 1 })]); // replayed history / before any turn
    t.beginTurn();
    expect(t.takeChunkUsage()).toBeUndefined(); // what came before the turn is not its usage
    // Two model requests (a tool call, then the answer). Cached tokens are inside inputTokens;
    // thoughtTokens are inside outputTokens (OpenAI completion_tokens), never added on top.
    const out = run(t, [usageChunk({ inputTokens: 120, outputTokens: 9, totalTokens: 129, thoughtTokens: 4, cachedReadTokens: 20 }), { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hi' } }, usageChunk({ inputTokens: 140, outputTokens: 6, cachedReadTokens: 100 }, 'agent_thought_chunk')]);
    expect(out.filter((e) => e.type === 'text_delta')).toHaveLength(1); // the usage chunks are no text
    const reported = t.takeChunkUsage();
    expect(reported).toEqual({ inputTokens: 140, outputTokens: 15, cacheReadTokens: 120, cacheWriteTokens: 0 });
    expect(t.takeChunkUsage()).toBeUndefined(); // taken once
    expect(turnUsage({ stopReason: 'end_turn' }, reported)).toEqual(reported);
    // An agent that also puts usage in its prompt result is counted from the result alone.
    expect(turnUsage({ stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 4 } }, reported)).toEqual({ inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(turnUsage({ _meta: { quota: { token_count: { input_tokens: 7, output_tokens: 1 } } } }, reported)).toEqual({ inputTokens: 7, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
    // Late usage after the turn was taken belongs to no later turn.
    run(t, [usageChunk({ inputTokens: 9, outputTokens: 9 })]);
    t.beginTurn();
    expect(turnUsage({ stopReason: 'end_turn' }, t.takeChunkUsage())).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    // Bad counts read as 0; a cached count above the input never makes inputTokens negative.
    run(t, [usageChunk({ inputTokens: 'x', outputTokens: -2, cachedReadTokens: 5 }), { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '' }, _meta: { usage: 'none' } }]);
    expect(t.takeChunkUsage()).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 5, cacheWriteTokens: 0 });
  });

  it('merges factory and per-session options (per-session wins, env merged, a new preset drops the factory command)', () => {
    expect(resolveAcpOptions({ preset: 'gemini', env: { A: '1', B: '1' } }, { env: { B: '2' }, fs: { enabled: true } })).toEqual({ preset: 'gemini', env: { A: '1', B: '2' }, fs: { enabled: true } });
    expect(resolveAcpOptions({ command: '/bin/agent', args: ['--x'], bin: '/bin/x' }, { preset: 'codex-acp' })).toEqual({ preset: 'codex-acp' });
    expect(resolveAcpOptions({ passEnv: ['A'], extraArgs: ['--a'] }, { passEnv: ['B_*'], extraArgs: ['--b'], model: 'm' })).toEqual({ passEnv: ['A', 'B_*'], extraArgs: ['--a', '--b'], model: 'm' });
    expect(() => resolveAcpOptions({}, { preset: 'nope' })).toThrow(/preset must be one of gemini, codex-acp, claude-code-acp, claude-agent-acp/);
    // Unknown keys are refused, naming the known ones (they used to be ignored).
    expect(() => resolveAcpOptions({}, { unrelated: 5 })).toThrow(/acp engine options: unknown option "unrelated" \(known: .*preset.*\)/);
    expect(() => resolveAcpOptions({}, { env: { A: 1 } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('env.A: must be a string, got number') }));
  });
});
