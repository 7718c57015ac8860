/**
 * Codex collaborating sub-agents (`multi_agent_v2`: the `collaboration` tools) with the REAL
 * codex 0.169.0 app-server against our mock Responses API: the mock answers the parent with a
 * `spawn_agent` call (then `wait_agent`, then text) and the sub-agent with a shell command that
 * needs an approval (escalated), then text. The sub-agent runs on its own thread; the engine
 * carries that scope as `parentCallId` (the `spawn_agent` call) on the sub-agent's tool calls,
 * results, messages and its permission prompt. Recorded as
 * test/fixtures/codex/app-server-subagent-spawn.jsonl (replayed by codex-replay.test.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodexAppServerEngine } from '../../src/engines/codex/index.js';
import type { MockReply, OpenAIResponsesMock, RecordedRequest } from '../mocks/openai-responses-mock.js';
import type { HermeticCodex } from '../support/codex-hermetic.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { CodexEngineBench } from '../support/codex-engine-bench.js';

const PARENT_PROMPT = 'PARENT-PROMPT: delegate making the file to a sub-agent';

/** The mock model: answers the parent and the sub-agent by their conversation, not by arrival order. */
export function subAgentScript(target: string) {
  return (request: RecordedRequest): MockReply => {
    const input: unknown[] = Array.isArray(request.body?.input) ? request.body.input : [];
    const outputs = input.filter((i) => (i as { type?: string })?.type === 'function_call_output').length;
    if (!JSON.stringify(input).includes('PARENT-PROMPT')) {
      return outputs === 0
        ? { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `touch ${target}`, sandbox_permissions: 'require_escalated', justification: 'make the file', yield_time_ms: 10_000 } }
        : { kind: 'text', text: 'Sub-agent: file created.' };
    }
    if (outputs === 0) return { kind: 'tool_call', name: 'spawn_agent', namespace: 'collaboration', arguments: { message: 'make the file', task_name: 'maker', fork_turns: 'none' } };
    if (outputs === 1) return { kind: 'tool_call', name: 'wait_agent', namespace: 'collaboration', arguments: { timeout_ms: 20_000 } };
    return { kind: 'text', text: 'Parent: the sub-agent made the file.' };
  };
}

describe('codex sub-agents (spawn_agent) with the real codex 0.169.0 app-server', () => {
  let bench: CodexEngineBench<CodexAppServerEngine>;
  let mock: OpenAIResponsesMock;
  let root: string;
  let h: HermeticCodex;

  beforeEach(async () => {
    bench = await CodexEngineBench.open({ prefix: 'ase-codex-sub-', fixturePrefix: 'app-server', engine: 'codex', codexVersion: '0.169.0', features: { multi_agent_v2: true } });
    ({ mock, root, h } = bench);
  });
  afterEach(() => bench.close());

  it('scopes the sub-agent thread under the spawn_agent call; its approval goes through the ledger', async () => {
    const target = join(root, 'made-by-subagent.txt');
    const script = subAgentScript(target);
    for (let i = 0; i < 8; i++) mock.enqueue(script);
    const { engine, log, traffic } = bench.launch((defaults) => new CodexAppServerEngine(realEngineContext(), defaults), 1);
    await log.waitFor('ready');
    const answered: string[] = [];
    engine.onEvent((e) => {
      if (e.type !== 'permission_request') return;
      answered.push(e.requestId);
      void engine.answerPermission(e.requestId, { behavior: 'allow' });
    });
    await engine.send({ localId: 'm1', text: PARENT_PROMPT });
    const end = await log.waitFor('turn_complete', 0, () => true, 60_000);
    expect(end).toMatchObject({ status: 'completed' });
    await engine.stop();
    expect(existsSync(target)).toBe(true);
    bench.record('subagent-spawn', traffic, { decisions: answered.map(() => ({ behavior: 'allow' })) });

    const spawn = log.of('tool_call').find((c) => c.toolName.includes('spawn'));
    expect(spawn).toBeDefined();
    expect(spawn).not.toHaveProperty('parentCallId');
    const request = log.of('permission_request')[0];
    expect(request).toMatchObject({ toolName: 'shell', parentCallId: spawn!.callId });
    const subCall = log.of('tool_call').find((c) => c.callId === request!.callId);
    expect(subCall).toMatchObject({ toolName: 'shell', parentCallId: spawn!.callId });
    expect(log.of('tool_result').find((r) => r.callId === request!.callId)).toMatchObject({ status: 'completed', parentCallId: spawn!.callId });
    const subText = log.of('message').find((m) => m.blocks.some((b) => b.type === 'text' && b.text === 'Sub-agent: file created.'));
    expect(subText).toMatchObject({ parentCallId: spawn!.callId });
    const parentText = log.of('message').find((m) => m.blocks.some((b) => b.type === 'text' && b.text.startsWith('Parent:')));
    expect(parentText).toBeDefined();
    expect(parentText).not.toHaveProperty('parentCallId');
    expect(log.of('turn_complete')).toHaveLength(1); // the sub-agent's own turn ends no turn of ours
  });
});
