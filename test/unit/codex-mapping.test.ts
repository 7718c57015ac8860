/**
 * The pure pieces of the Codex engines: decision mapping (both protocols), `-c` TOML encoding,
 * error classification, version gate, shell quoting, the tool-call ledger, per-turn usage, and the
 * translators' de-duplication rules on hand-made input.
 */
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PermissionDecision } from '../../src/events/engine-input.js';
import {
  AppServerTranslator,
  classifyCodexError,
  commandDecision,
  configOverrideArgs,
  fileChangeDecision,
  mcpDecision,
  mcpVersionProblem,
  McpTranslator,
  parseCodexVersion,
  tomlValue,
} from '../../src/engines/codex/index.js';
import { shellJoin, singleQuote } from '../../src/engines/transport/shell-quote.js';
import { mergeCodexOptions, type CodexEngineOptions } from '../../src/engines/codex/options.js';
import { ToolCallLedger } from '../../src/engines/codex/tool-ledger.js';
import { addTurnUsage } from '../../src/events/add-turn-usage.js';
import { turnUsageFromCodex, turnUsageOf } from '../../src/engines/codex/usage.js';

const allow: PermissionDecision = { behavior: 'allow' };
const allowSession: PermissionDecision = { behavior: 'allow', updatedPermissions: [{ any: 'rule' }] };
const deny: PermissionDecision = { behavior: 'deny', message: 'no', interrupt: false };
const denyStop: PermissionDecision = { behavior: 'deny', interrupt: true };

describe('permission decisions', () => {
  it('app-server: accept / acceptForSession / offered amendment / decline / cancel', () => {
    const amendment = { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['/bin/bash', '-lc', 'ls'] } };
    expect([allow, allowSession, { behavior: 'allow', updatedPermissions: [amendment] } as PermissionDecision, deny, denyStop].map(commandDecision)).toEqual([
      'accept',
      'acceptForSession',
      amendment,
      'decline',
      'cancel',
    ]);
    expect([allow, allowSession, deny, denyStop].map(fileChangeDecision)).toEqual(['accept', 'acceptForSession', 'decline', 'cancel']);
  });

  it('mcp-server: {decision} shapes — never a bare "denied"', () => {
    const amendment = { approved_execpolicy_amendment: { proposed_execpolicy_amendment: ['ls'] } };
    expect([allow, allowSession, { behavior: 'allow', updatedPermissions: [amendment] } as PermissionDecision, deny, { behavior: 'deny', interrupt: false } as PermissionDecision, denyStop].map(mcpDecision)).toEqual([
      'approved',
      'approved_for_session',
      amendment,
      { denied: { rejection: 'no' } },
      { denied: { rejection: 'Denied by the user' } },
      'abort',
    ]);
  });
});

describe('-c config overrides', () => {
  it('encodes every value as an explicit TOML literal', () => {
    expect(configOverrideArgs({ 'features.plugins': false, model: 'gpt-5.5', 'x.n': 3, list: ['a', 1], table: { 'a b': true, c: 'd' }, skipped: undefined })).toEqual([
      '-c', 'features.plugins=false',
      '-c', 'model="gpt-5.5"',
      '-c', 'x.n=3',
      '-c', 'list=["a", 1]',
      '-c', 'table={"a b" = true, c = "d"}',
    ]);
    expect(() => configOverrideArgs({ 'a=b': 1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(tomlValue('tab\tdel\u007fquote"')).toBe('"tab\\tdel\\u007fquote\\""');
    expect(() => tomlValue(null)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => tomlValue(Number.NaN)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });

  it('property: strings become TOML basic strings that decode to the same text (no raw control characters)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('\u007f', '\u0000', '\u001f', '"', '\\', '\n', '\t', 'é', '😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }), (s) => {
        const encoded = tomlValue(s);
        expect(encoded.startsWith('"') && encoded.endsWith('"')).toBe(true);
        // TOML forbids raw control characters (other than tab) in basic strings.
        expect(/[\u0000-\u0008\u000a-\u001f\u007f]/.test(encoded)).toBe(false);
        // TOML basic-string escapes are a superset of what JSON.stringify emits.
        expect(JSON.parse(encoded)).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('version gate and errors', () => {
  it('parses `codex --version`', () => {
    expect(parseCodexVersion('codex-cli 0.153.4\n')).toBe('0.153.4');
    expect(parseCodexVersion('codex-cli 0.170.0-alpha.1')).toBe('0.170.0-alpha.1');
    expect(parseCodexVersion('something else')).toBeUndefined();
  });

  it('codex-mcp runs only on 0.153.4 (0.153.x with allowUntestedVersion; never on ≥ 0.154)', () => {
    expect(mcpVersionProblem('0.153.4')).toBeUndefined();
    expect(mcpVersionProblem('0.153.2')).toMatch(/not the supported version 0\.153\.4/);
    expect(mcpVersionProblem('0.153.2', true)).toBeUndefined();
    expect(mcpVersionProblem('0.154.0', true)).toMatch(/no `mcp-server`/);
    expect(mcpVersionProblem('0.169.0')).toMatch(/no `mcp-server`/);
    expect(mcpVersionProblem('1.0.0', true)).toMatch(/no `mcp-server`/);
  });

  it('classifies Codex error codes of both protocols', () => {
    expect(classifyCodexError('unauthorized')).toEqual({ kind: 'auth', retryable: false });
    expect(classifyCodexError('usage_limit_exceeded')).toEqual({ kind: 'budget_exceeded', retryable: false });
    expect(classifyCodexError('rateLimitExceeded')).toEqual({ kind: 'rate_limited', retryable: true });
    expect(classifyCodexError({ responseStreamDisconnected: { httpStatusCode: null } })).toEqual({ kind: 'transient', retryable: true });
    expect(classifyCodexError({ http_connection_failed: { http_status_code: 401 } })).toEqual({ kind: 'auth', retryable: false });
    expect(classifyCodexError({ httpConnectionFailed: { httpStatusCode: 429 } })).toEqual({ kind: 'rate_limited', retryable: true });
    expect(classifyCodexError('other')).toEqual({ kind: 'fatal', retryable: false });
    expect(classifyCodexError(undefined)).toEqual({ kind: 'fatal', retryable: false });
  });

  it('refuses malformed or unknown engineOptions with INVALID_OPTIONS and merges env/config key by key', () => {
    expect(() => mergeCodexOptions('codex', {}, { approvalPolicy: 'sometimes' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => mergeCodexOptions('codex', {}, { unknown: true })).toThrow(/codex engine options: unknown option "unknown" \(known: approvalPolicy, baseInstructions, bin, config, developerInstructions, env, envAllow, extraArgs/);
    expect(() => mergeCodexOptions('codex', {}, { env: { A: 1 } })).toThrow(/env\.A: must be a string, got number/);
    // mcp-server's approval-policy has no 'untrusted'; app-server's has.
    expect(() => mergeCodexOptions('codex-mcp', {}, { approvalPolicy: 'untrusted' })).toThrow(/approvalPolicy: mcp-server accepts approvalPolicy 'on-request' or 'never'/);
    expect(mergeCodexOptions<CodexEngineOptions>('codex', {}, { approvalPolicy: 'untrusted' }).approvalPolicy).toBe('untrusted');
    expect(() => mergeCodexOptions('codex', {}, { onSessionNotFound: 'new-thread' })).toThrow(/unknown option "onSessionNotFound"/);
    expect(mergeCodexOptions('codex', { env: { A: '1' }, config: { x: 1 }, model: 'm', passEnv: ['X'] }, { env: { B: '2' }, config: { y: 2 }, passEnv: ['Y_*'] })).toMatchObject({
      env: { A: '1', B: '2' },
      config: { x: 1, y: 2 },
      model: 'm',
      passEnv: ['X', 'Y_*'],
    });
  });
});

describe('shellJoin', () => {
  it('property: bash splits the joined command back into the same argv', () => {
    const arg = fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '$', '\\', '*', ';', '\n', 'é', '-', '=', '/'), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 4 }), (argv) => {
        const out = spawnSync('/bin/bash', ['-c', `printf '%s\\0' ${shellJoin(argv)}`], { encoding: 'utf8' });
        expect(out.stdout.split('\0').slice(0, -1)).toEqual(argv);
      }),
      { numRuns: 60 },
    );
    expect(shellJoin(['/bin/bash', '-lc', 'echo hi > out.txt'])).toBe("/bin/bash -lc 'echo hi > out.txt'");
    // The forms the codex engines reported before the one rule moved to transport/shell-quote.ts, and the
    // acp terminals' and hooks' quoting it now shares: bare safe words, '' for an empty one, é quoted.
    expect(shellJoin(['', 'a_Z9@%+=:,./-', "it's", 'é', '$x'])).toBe(`'' a_Z9@%+=:,./- 'it'\\''s' 'é' '$x'`);
    expect(singleQuote('plain')).toBe(`'plain'`);
    expect(singleQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('ToolCallLedger', () => {
  it('property: each call reported once, a result only once and after its call, open calls closed at turn end', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('call' as const), id: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ op: fc.constant('result' as const), id: fc.constantFrom('a', 'b', 'c'), ok: fc.boolean() }),
      fc.record({ op: fc.constant('deny' as const), id: fc.constantFrom('a', 'b', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const ledger = new ToolCallLedger();
        const out = ops.flatMap((o) => {
          if (o.op === 'call') return ledger.call({ callId: o.id, toolName: 'shell', input: {} });
          if (o.op === 'deny') {
            ledger.noteDenied(o.id);
            return [];
          }
          return ledger.result({ callId: o.id, status: o.ok ? 'completed' : 'failed', isError: !o.ok });
        });
        out.push(...ledger.closeTurn());
        for (const id of new Set(out.map((e) => (e as { callId: string }).callId))) {
          const mine = out.filter((e) => (e as { callId: string }).callId === id);
          expect(mine.map((e) => e.type)).toEqual(['tool_call', 'tool_result']);
        }
        const denied = new Set<string>(ops.filter((o) => o.op === 'deny').map((o) => o.id));
        for (const r of out) if (r.type === 'tool_result' && r.status === 'denied') expect(denied.has(r.callId)).toBe(true);
        expect(ledger.closeTurn()).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('per-turn usage', () => {
  it('splits cached tokens out of input and sums requests', () => {
    const a = turnUsageOf({ inputTokens: 120, cachedInputTokens: 20, outputTokens: 7, cacheWriteInputTokens: 3 });
    expect(a).toEqual({ inputTokens: 100, outputTokens: 7, cacheReadTokens: 20, cacheWriteTokens: 3 });
    expect(addTurnUsage(a, turnUsageOf({ inputTokens: 100, cachedInputTokens: 0, outputTokens: 1 }))).toEqual({ inputTokens: 200, outputTokens: 8, cacheReadTokens: 20, cacheWriteTokens: 3 });
  });

  it('the snake_case reports (MCP token_count, rollout lines) follow the same convention as app-server camelCase', () => {
    const count = fc.oneof(fc.nat(), fc.constant(undefined), fc.constant(-5), fc.constant(Number.NaN));
    fc.assert(
      fc.property(count, count, count, count, (input, cached, write, output) => {
        const snake = turnUsageFromCodex({ input_tokens: input, cached_input_tokens: cached, cache_write_input_tokens: write, output_tokens: output });
        const camel = turnUsageOf({ inputTokens: input as number, cachedInputTokens: cached as number, cacheWriteInputTokens: write as number, outputTokens: output as number });
        expect(snake).toEqual(camel);
        for (const value of Object.values(snake)) expect(value).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('app-server: sums `last` over the turn and ignores `total`; other threads and retried errors are not ours', () => {
    const t = new AppServerTranslator();
    t.setThread('T');
    t.beginTurn();
    t.adoptTurnId('U');
    const usage = (last: number, total: number) => ({
      threadId: 'T',
      turnId: 'U',
      tokenUsage: {
        last: { inputTokens: last, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 1, totalTokens: 0, reasoningOutputTokens: 0 },
        total: { inputTokens: total, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 9, totalTokens: 0, reasoningOutputTokens: 0 },
      },
    });
    expect(t.translate('thread/tokenUsage/updated', usage(100, 900))).toEqual([]);
    t.translate('thread/tokenUsage/updated', usage(50, 950));
    t.translate('thread/tokenUsage/updated', { ...usage(1000, 1000), threadId: 'OTHER' });
    expect(t.translate('error', { threadId: 'T', turnId: 'U', willRetry: true, error: { message: 'retrying', codexErrorInfo: null } })).toEqual([]);
    const turn = { id: 'U', status: 'completed', error: null };
    expect(t.translate('turn/completed', { threadId: 'OTHER', turn })).toEqual([]);
    expect(t.translate('turn/completed', { threadId: 'T', turn }).at(-1)).toEqual({
      type: 'turn_complete',
      status: 'completed',
      stopReason: 'completed',
      usage: { inputTokens: 150, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    expect(t.turnRunning).toBe(false);
  });
});

describe('app-server plans', () => {
  it('turn/plan/updated becomes a plan event (inProgress → in_progress); another thread\'s or a malformed one is skipped', () => {
    const t = new AppServerTranslator();
    t.setThread('T');
    t.beginTurn();
    t.adoptTurnId('U');
    const plan = [
      { step: 'read the tests', status: 'completed' },
      { step: 'fix the bug', status: 'inProgress' },
      { step: 'run the suite', status: 'pending' },
    ];
    expect(t.translate('turn/plan/updated', { threadId: 'T', turnId: 'U', explanation: 'three steps', plan })).toEqual([
      {
        type: 'plan',
        explanation: 'three steps',
        entries: [
          { content: 'read the tests', status: 'completed' },
          { content: 'fix the bug', status: 'in_progress' },
          { content: 'run the suite', status: 'pending' },
        ],
      },
    ]);
    expect(t.translate('turn/plan/updated', { threadId: 'T', turnId: 'U', explanation: null, plan: [] })).toEqual([{ type: 'plan', entries: [] }]);
    expect(t.translate('turn/plan/updated', { threadId: 'OTHER', turnId: 'U', explanation: null, plan })).toEqual([]);
    expect(t.translate('turn/plan/updated', { threadId: 'T', turnId: 'U', plan: [{ step: 'x', status: 'someday' }] })).toEqual([]);
    expect(t.skipped.map((s) => s.reason)).toEqual(['other thread or turn', 'malformed turn/plan/updated']);
  });
});

describe('a failed turn is not billed for the request before it', () => {
  // Recorded on both live protocols (test/fixtures/codex/rollout/*.traffic.jsonl): when a turn
  // fails, Codex re-sends the previous usage snapshot unchanged (same thread total, `last` = the
  // previous turn's request).
  const breakdown = (input: number, output: number) => ({ inputTokens: input, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: output, totalTokens: input + output, reasoningOutputTokens: 0 });
  const snake = (input: number, output: number) => ({ input_tokens: input, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: output, reasoning_output_tokens: 0, total_tokens: input + output });

  it('app-server: the repeated thread/tokenUsage/updated of the failed turn counts nothing', () => {
    const t = new AppServerTranslator();
    t.setThread('T');
    const usages: unknown[] = [];
    for (const [turnId, failed] of [['U1', false], ['U2', true]] as const) {
      t.beginTurn();
      t.adoptTurnId(turnId);
      t.translate('thread/tokenUsage/updated', { threadId: 'T', turnId, tokenUsage: { last: breakdown(100, 5), total: breakdown(600, 62) } });
      const turn = { id: turnId, status: failed ? 'failed' : 'completed', error: failed ? { message: 'mock exploded', codexErrorInfo: 'other', additionalDetails: null } : null };
      usages.push(t.translate('turn/completed', { threadId: 'T', turn }).find((e) => e.type === 'turn_complete'));
    }
    expect(usages).toEqual([
      expect.objectContaining({ status: 'completed', usage: { inputTokens: 100, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
      expect.objectContaining({ status: 'failed', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
    ]);
  });

  it('mcp-server: the repeated token_count of the failed turn counts nothing', () => {
    const t = new McpTranslator();
    const tokenCount = { type: 'token_count', info: { last_token_usage: snake(100, 5), total_token_usage: snake(600, 62) } };
    t.beginTurn();
    t.translate(tokenCount);
    const first = t.translate({ type: 'task_complete', last_agent_message: 'ok' } as { type: string }).find((e) => e.type === 'turn_complete');
    t.beginTurn();
    t.translate(tokenCount);
    const second = t.endTurn('failed', 'error', { message: 'mock exploded' }).find((e) => e.type === 'turn_complete');
    expect(first).toMatchObject({ usage: { inputTokens: 100, outputTokens: 5 } });
    expect(second).toMatchObject({ status: 'failed', usage: { inputTokens: 0, outputTokens: 0 } });
  });
});

describe('AppServerTranslator turn identity', () => {
  it('does not take a replayed usage report of the previous turn (thread/resume) for the new turn', () => {
    const t = new AppServerTranslator();
    t.setThread('T');
    t.beginTurn();
    const usage = (turnId: string, input: number) => ({
      threadId: 'T',
      turnId,
      tokenUsage: {
        last: { inputTokens: input, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 1, totalTokens: 0, reasoningOutputTokens: 0 },
        total: { inputTokens: input, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 1, totalTokens: 0, reasoningOutputTokens: 0 },
      },
    });
    // Arrives after turn/start was sent, before its response: the id is the OLD turn's.
    t.translate('thread/tokenUsage/updated', usage('OLD', 999));
    t.translate('turn/started', { threadId: 'T', turn: { id: 'NEW', status: 'inProgress', error: null } });
    t.adoptTurnId('NEW'); // the turn/start response, later: no effect
    expect(t.turnId).toBe('NEW');
    const item = { type: 'agentMessage', id: 'm', text: 'hi', phase: null };
    expect(t.translate('item/completed', { threadId: 'T', turnId: 'NEW', item })).toEqual([{ type: 'message', role: 'assistant', id: 'm', blocks: [{ type: 'text', text: 'hi' }] }]);
    expect(t.translate('item/completed', { threadId: 'T', turnId: 'OLD', item: { ...item, id: 'old' } })).toEqual([]);
    t.translate('thread/tokenUsage/updated', usage('NEW', 100));
    const end = t.translate('turn/completed', { threadId: 'T', turn: { id: 'NEW', status: 'completed', error: null } });
    expect(end.at(-1)).toMatchObject({ type: 'turn_complete', usage: { inputTokens: 100 } });
  });

  it('counts usage reported for the new turn before its id was known', () => {
    const t = new AppServerTranslator();
    t.setThread('T');
    t.beginTurn();
    const last = { inputTokens: 40, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 2, totalTokens: 0, reasoningOutputTokens: 0 };
    t.translate('thread/tokenUsage/updated', { threadId: 'T', turnId: 'NEW', tokenUsage: { last, total: last } });
    t.adoptTurnId('NEW');
    const end = t.translate('turn/completed', { threadId: 'T', turn: { id: 'NEW', status: 'completed', error: null } });
    expect(end.at(-1)).toMatchObject({ usage: { inputTokens: 40, outputTokens: 2 } });
  });
});

describe('McpTranslator de-duplication', () => {
  it('reports each item once although mcp-server repeats it in three forms', () => {
    const t = new McpTranslator();
    t.beginTurn();
    const item = { type: 'AgentMessage', id: 'msg_1', content: [{ type: 'Text', text: 'hi' }] };
    const out = [
      { type: 'agent_message_content_delta', item_id: 'msg_1', delta: 'h' },
      { type: 'agent_message_content_delta', item_id: 'msg_1', delta: 'i' },
      { type: 'item_completed', turn_id: 'u', item },
      { type: 'agent_message', message: 'hi', phase: null },
      { type: 'raw_response_item', item: { type: 'message', role: 'assistant', content: [] } },
      // a straggler delivered by the second listener after the message completed
      { type: 'agent_message_content_delta', item_id: 'msg_1', delta: 'i' },
      { type: 'user_message', message: 'x' },
      { type: 'agent_reasoning', text: 'y' },
      { type: 'token_count', info: { last_token_usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 2 }, total_token_usage: { input_tokens: 99, cached_input_tokens: 0, output_tokens: 9 } } },
      { type: 'task_complete', turn_id: 'u', last_agent_message: 'hi' },
    ].flatMap((m) => t.translate(m));
    expect(out).toEqual([
      { type: 'text_delta', messageId: 'msg_1', text: 'h' },
      { type: 'text_delta', messageId: 'msg_1', text: 'i' },
      { type: 'message', role: 'assistant', id: 'msg_1', blocks: [{ type: 'text', text: 'hi' }] },
      { type: 'turn_complete', status: 'completed', stopReason: 'task_complete', usage: { inputTokens: 6, outputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: 0 } },
    ]);
  });

  it('exec approval + begin + item_* + end become one tool_call and one tool_result', () => {
    const t = new McpTranslator();
    t.beginTurn();
    const base = { call_id: 'c1', command: ['/bin/bash', '-lc', 'ls'], cwd: '/w' };
    const out = [
      { type: 'exec_approval_request', ...base, reason: 'r' },
      { type: 'item_started', turn_id: 'u', item: { type: 'CommandExecution', id: 'c1' } },
      { type: 'exec_command_begin', ...base, cwd: 'file:///w' },
      { type: 'item_completed', turn_id: 'u', item: { type: 'CommandExecution', id: 'c1' } },
      { type: 'exec_command_end', ...base, cwd: 'file:///w', exit_code: 2, aggregated_output: 'nope', status: 'failed' },
    ].flatMap((m) => t.translate(m));
    expect(out).toEqual([
      { type: 'tool_call', callId: 'c1', toolName: 'shell', input: { command: "/bin/bash -lc ls", cwd: '/w' }, title: '/bin/bash -lc ls' },
      { type: 'tool_result', callId: 'c1', status: 'failed', output: { output: 'nope', exitCode: 2, durationMs: null }, isError: true },
    ]);
  });
});
