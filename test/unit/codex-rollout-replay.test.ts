/**
 * Replays the REAL rollout fixtures (test/fixtures/codex/rollout/, recorded from codex 0.153.4
 * `mcp-server` = legacy dialect and codex 0.169.0 `app-server` = paginated dialect by
 * test/real-cli/codex-rollout.test.ts) through the rollout reader, without any binary.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnUsage } from '../../src/events/agent-event.js';
import { dedupeKeyString, EventDeduper, readRolloutBytes, turnUsageFromCodex, type TailedEvent } from '../../src/engines/codex/rollout/index.js';
import { liveKeysFromAppServer, liveKeysFromMcp } from '../support/codex-live-keys.js';
import { SCENARIO_TEXTS } from '../support/codex-rollout-scenarios.js';
import type { TrafficEntry } from '../support/jsonrpc-child.js';

const dir = join(import.meta.dirname, '..', 'fixtures', 'codex', 'rollout');

const FIXTURES = {
  legacy: { name: 'legacy-mcp-server-0.153.4', liveKeys: liveKeysFromMcp },
  paginated: { name: 'paginated-app-server-0.169.0', liveKeys: liveKeysFromAppServer },
} as const;

function load(dialect: keyof typeof FIXTURES) {
  const { name } = FIXTURES[dialect];
  const path = join(dir, `${name}.rollout.jsonl`);
  const bytes = readFileSync(path);
  const rawLines = bytes
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
  const traffic: TrafficEntry[] = readFileSync(join(dir, `${name}.traffic.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
  return { path, bytes, rawLines, traffic, snapshot: readRolloutBytes(path, bytes) };
}

/** A compact, readable signature of an event. */
function signature(e: TailedEvent): string {
  const event = e.event;
  switch (event.type) {
    case 'session_identified':
      return 'session';
    case 'message':
      return event.blocks.map((b) => `${event.role}:${b.type}:${'text' in b ? b.text : ''}`).join('|');
    case 'tool_call':
      return `call:${event.toolName}`;
    case 'tool_result':
      return `result:${event.status}`;
    case 'error':
      return `error:${event.kind}:${event.message}`;
    case 'turn_complete':
      return `turn:${event.status}`;
    default:
      return event.type;
  }
}

const expectedSignatures = (hello: string) => [
  'session',
  'user:text:say hello',
  `assistant:thinking:${SCENARIO_TEXTS.reasoning}`,
  `assistant:text:${hello}`,
  'turn:completed',
  'user:text:use tools',
  'call:shell',
  'result:completed',
  'call:shell',
  'result:failed',
  'call:apply_patch',
  'result:completed',
  `assistant:text:${SCENARIO_TEXTS.toolsDone}`,
  'turn:completed',
  'user:text:stall',
  'turn:cancelled',
  'user:text:after abort',
  'assistant:text:Echo: after abort',
  'turn:completed',
  'user:text:fail',
  `error:fatal:stream disconnected before completion: ${SCENARIO_TEXTS.failMessage}`,
  'turn:failed',
];

/** Per-turn usage from an independent source in the same file: the `token_usage_record` lines (one per model response). */
function usageFromRecords(rawLines: any[]): Map<string, TurnUsage> {
  const byTurn = new Map<string, TurnUsage>();
  for (const line of rawLines) {
    if (line.type !== 'token_usage_record') continue;
    const u = turnUsageFromCodex(line.payload.usage);
    const prev = byTurn.get(line.payload.turn_id) ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    byTurn.set(line.payload.turn_id, {
      inputTokens: prev.inputTokens + u.inputTokens,
      outputTokens: prev.outputTokens + u.outputTokens,
      cacheReadTokens: prev.cacheReadTokens + u.cacheReadTokens,
      cacheWriteTokens: prev.cacheWriteTokens + u.cacheWriteTokens,
    });
  }
  return byTurn;
}

describe.each(Object.keys(FIXTURES) as Array<keyof typeof FIXTURES>)('rollout fixture replay: %s dialect', (dialect) => {
  const { path, rawLines, traffic, snapshot } = load(dialect);
  const events = snapshot.events;

  it('detects the dialect and thread from session_meta, with no diagnostics', () => {
    expect(snapshot.dialect).toBe(dialect);
    expect(rawLines[0].payload.history_mode).toBe(dialect);
    expect(snapshot.threadId).toBe(rawLines[0].payload.id);
    expect(snapshot.diagnostics).toEqual([]);
    expect(events[0]!.event).toEqual({ type: 'session_identified', resumeToken: rawLines[0].payload.id, transcriptPath: path });
  });

  it('maps the five turns to the expected AgentEvents, in order', () => {
    expect(events.map(signature)).toEqual(expectedSignatures(SCENARIO_TEXTS.hello[dialect]));
  });

  it('tool results pair with their calls; inputs and outputs are the real ones', () => {
    const calls = events.filter((e) => e.event.type === 'tool_call');
    const results = events.filter((e) => e.event.type === 'tool_result');
    expect(results.map((r) => r.key.itemId)).toEqual(calls.map((c) => c.key.itemId));
    const [ok, failing, patch] = calls.map((c) => c.event as Extract<TailedEvent['event'], { type: 'tool_call' }>);
    expect(calls.map((c) => (c.event as Extract<TailedEvent['event'], { type: 'tool_call' }>).toolName)).toEqual(['shell', 'shell', 'apply_patch']);
    expect(ok!.input).toMatchObject({ command: SCENARIO_TEXTS.okCommand });
    expect(ok!.title).toBe(SCENARIO_TEXTS.okCommand);
    expect(failing!.input).toMatchObject({ command: SCENARIO_TEXTS.failingCommand });
    expect(patch!.input).toBe(SCENARIO_TEXTS.patch);
    const [okResult, failingResult, patchResult] = results.map((r) => r.event as Extract<TailedEvent['event'], { type: 'tool_result' }>);
    expect(okResult).toMatchObject({ status: 'completed', isError: false });
    expect(String(okResult!.output)).toContain('hi\n');
    expect(failingResult).toMatchObject({ status: 'failed', isError: true });
    expect(String(failingResult!.output)).toContain('No such file or directory');
    expect(patchResult).toMatchObject({ status: 'completed', isError: false });
    expect(String(patchResult!.output)).toContain('A hello.txt');
  });

  it('keys: message ids are the Responses item ids, turn ids are the task_started ones', () => {
    const turnIds = rawLines.filter((l) => l.payload?.type === 'task_started').map((l) => l.payload.turn_id);
    const ends = events.filter((e) => e.event.type === 'turn_complete');
    expect(ends.map((e) => e.key.itemId)).toEqual(turnIds);
    // every event after session_meta belongs to the turn whose task_started precedes it
    let turn = '';
    for (const event of events.slice(1)) {
      const started = rawLines.slice(0, event.line + 1).filter((l) => l.payload?.type === 'task_started');
      turn = started[started.length - 1]?.payload.turn_id ?? turn;
      expect(event.key.turnId, signature(event)).toBe(turn);
    }
    const assistantIds = rawLines.filter((l) => l.type === 'response_item' && l.payload.type === 'message' && l.payload.role === 'assistant').map((l) => l.payload.id);
    const reasoningIds = rawLines.filter((l) => l.type === 'response_item' && l.payload.type === 'reasoning').map((l) => l.payload.id);
    const messageIds = events.filter((e) => e.event.type === 'message' && e.event.role === 'assistant').map((e) => e.key.itemId);
    expect(messageIds.sort()).toEqual([...assistantIds, ...reasoningIds].sort());
    for (const e of events.filter((x) => x.event.type === 'message')) expect(e.key.itemId).toBe((e.event as { id: string }).id);
  });

  it('per-turn usage (token_count last_token_usage, repeats ignored) equals the token_usage_record sum', () => {
    const records = usageFromRecords(rawLines);
    const zero = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const ends = events.filter((e) => e.event.type === 'turn_complete');
    expect(ends).toHaveLength(5);
    for (const end of ends) expect((end.event as { usage: TurnUsage }).usage, end.key.itemId).toEqual(records.get(end.key.itemId) ?? zero);
    // the mock reports 100 input tokens per response: 1 response in turn 1, 4 in the tool turn
    expect(ends.map((e) => (e.event as { usage: TurnUsage }).usage.inputTokens)).toEqual([100, 400, 0, 100, 0]);
    // the failed turn re-writes the previous snapshot (a token_count with unchanged totals): not counted
    const failedTurn = ends[4]!.key.itemId;
    const startOfFailed = rawLines.findIndex((l) => l.payload?.turn_id === failedTurn && l.payload?.type === 'task_started');
    expect(rawLines.slice(startOfFailed).some((l) => l.payload?.type === 'token_count' && l.payload.info?.last_token_usage?.input_tokens > 0)).toBe(true);
  });

  it('the recorded live stream has exactly the same dedupe keys; the deduper suppresses every tailed copy', () => {
    const live = FIXTURES[dialect].liveKeys(traffic);
    expect(live.keys.map(dedupeKeyString).sort()).toEqual(events.map((e) => dedupeKeyString(e.key)).sort());
    const deduper = new EventDeduper<TailedEvent>({ graceMs: 0 });
    for (const key of live.keys) expect(deduper.offerLive(key)).toBe(true);
    const leaked: TailedEvent[] = [];
    for (const event of events) deduper.offerTailed(event.key, event, (e) => leaked.push(e));
    expect(leaked).toEqual([]);
    expect(deduper.suppressed).toBe(events.length);
  });
});
