/**
 * 11. Host tools on Codex and the ACP agents: one host tool call, round trip, on the REAL pinned
 * CLIs (codex 0.169.0 app-server with dynamicTools and with the loopback MCP server, codex-exec,
 * gemini-cli 0.61.0, codex-acp 0.16.0, claude-code-acp 0.16.2) against our instant mock models on
 * 127.0.0.1. Two clocks per call: the mock model's (it handed out the call → the agent's next
 * request carries the result: everything the agent, the engine and the handler add), and the
 * engine's (`tool_call` event → `tool_result` event).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { AcpEngine, type AcpEngineOptions } from '../src/engines/acp/index.js';
import { CodexAppServerEngine, CodexExecEngine } from '../src/engines/codex/index.js';
import type { AgentEngine } from '../src/engines/core/engine.js';
import type { AgentEvent } from '../src/events/agent-event.js';
import { startAnthropicMock } from '../test/mocks/anthropic-mock.js';
import { startGeminiMock } from '../test/mocks/gemini-mock.js';
import { startOpenAIResponsesMock, toolOutputsSinceLastUser } from '../test/mocks/openai-responses-mock.js';
import { hermeticClaudeCodeAcp, hermeticGemini, isMainClaudeRequest } from '../test/support/acp-hermetic.js';
import { hermeticCodex } from '../test/support/codex-hermetic.js';
import { realEngineContext } from '../test/support/engine-context.js';
import { hostToolKit, RoundTrips } from '../test/support/host-tools-kit.js';
import { ms, writeSection, type Row } from './support/report.js';

const TURNS = 4;
const CALLS_PER_TURN = 10;

interface Measured {
  label: string;
  model: number[];
  engine: number[];
}

function nearestRank(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? NaN;
}

/** Scripted model: each of the turn's requests but the last hands out the next call (`call(i)`), the last answers text. */
type Enqueue = (scripts: (() => unknown)[]) => void;

async function measure(label: string, engine: AgentEngine, workDir: string, enqueue: Enqueue, call: (i: number) => unknown, text: () => unknown): Promise<Measured> {
  const rt = new RoundTrips();
  const opened = new Map<string, number>();
  const engineSamples: number[] = [];
  let turnDone: (() => void) | undefined;
  let ready: (() => void) | undefined;
  const readyP = new Promise<void>((r) => (ready = r));
  engine.onEvent((e: AgentEvent) => {
    if (e.type === 'ready') ready?.();
    if (e.type === 'tool_call' && !opened.has(e.callId)) opened.set(e.callId, performance.now());
    if (e.type === 'tool_result' && opened.has(e.callId)) engineSamples.push(performance.now() - opened.get(e.callId)!);
    if (e.type === 'tool_result' && e.status !== 'completed') console.log(`[bench ${label}] tool_result ${e.status}: ${JSON.stringify(e.output).slice(0, 500)}`);
    if (e.type === 'turn_complete') turnDone?.();
  });
  await engine.start({ gen: 1, mode: 'remote', workDir, options: {} });
  await readyP;
  let n = 0;
  for (let t = 0; t < TURNS; t++) {
    const scripts: (() => unknown)[] = [];
    for (let i = 0; i < CALLS_PER_TURN; i++) {
      const k = n++;
      scripts.push(() => {
        rt.received();
        rt.sent();
        return call(k);
      });
    }
    scripts.push(() => {
      rt.received();
      return text();
    });
    enqueue(scripts);
    const done = new Promise<void>((r) => (turnDone = r));
    await engine.send({ localId: `b${t}`, text: `look up ${CALLS_PER_TURN} tickets` });
    await done;
  }
  await engine.stop();
  return { label, model: rt.samples, engine: engineSamples };
}

describe('host tools on codex and the ACP agents', () => {
  it('measures one host tool call, round trip, per agent', async () => {
    const results: Measured[] = [];
    const root = mkdtempSync(join(tmpdir(), 'ase-bench-ht-'));
    try {
      // ------------------------------------------------------------------ codex (3 ways)
      for (const variant of ['dynamic', 'mcp', 'exec'] as const) {
        const mock = await startOpenAIResponsesMock();
        const h = hermeticCodex({ root: join(root, `codex-${variant}`), baseUrl: mock.providerBaseUrl, approvalPolicy: 'never' });
        const kit = hostToolKit();
        const ctx = realEngineContext({ hostTools: kit.toolbox });
        const engine =
          variant === 'exec'
            ? new CodexExecEngine(ctx, { bin: h.bin, env: h.env, approvalPolicy: 'never' })
            : new CodexAppServerEngine(ctx, { bin: h.bin, env: h.env, approvalPolicy: 'never', hostTools: variant });
        const ns = variant === 'dynamic' ? {} : { namespace: 'mcp__host' };
        results.push(
          await measure(
            variant === 'dynamic' ? 'codex app-server, dynamicTools' : variant === 'mcp' ? 'codex app-server, loopback MCP (hostTools: mcp)' : 'codex-exec, loopback MCP',
            engine,
            h.workDir,
            (scripts) => mock.enqueue(...(scripts as never[])),
            (i) => ({ kind: 'tool_call', name: 'lookup_ticket', arguments: { id: `T-${i}` }, ...ns }),
            () => ({ kind: 'text', text: 'done' }),
          ),
        );
        const seen = mock.responsesRequests().map((r) => toolOutputsSinceLastUser(r.body).length);
        expect(kit.calls.length, `${variant}: calls; outputs per request ${seen.join(',')}; ids ${kit.calls.map((c) => (c.args as { id: string }).id).join(',')}`).toBe(TURNS * CALLS_PER_TURN);
        await mock.close();
      }
      // ------------------------------------------------------------------ ACP agents
      if (process.env['ASE_BENCH_CODEX_ONLY'] === '1') return;
      const acp = async (label: string, options: AcpEngineOptions, work: string, kit: ReturnType<typeof hostToolKit>, enqueue: Enqueue, call: (i: number) => unknown, text: () => unknown) => {
        const engine = new AcpEngine(realEngineContext({ hostTools: kit.toolbox }), options);
        results.push(await measure(label, engine, work, enqueue, call, text));
        expect(kit.calls.length).toBe(TURNS * CALLS_PER_TURN);
      };
      {
        const mock = await startGeminiMock();
        const h = hermeticGemini({ port: mock.port, root: join(root, 'gemini') });
        await acp('gemini-cli 0.61.0 (ACP, http)', { preset: 'gemini', env: h.env }, h.work, hostToolKit(), (s) => mock.enqueue(...(s as never[])), (i) => ({ kind: 'function_call', name: 'mcp_host_lookup_ticket', args: { id: `T-${i}` } }), () => ({ kind: 'text', text: 'done' }));
        await mock.close();
      }
      {
        const mock = await startOpenAIResponsesMock();
        const h = hermeticCodex({ root: join(root, 'codex-acp'), baseUrl: mock.providerBaseUrl, target: 'codex-acp', approvalPolicy: 'on-request' });
        await acp('codex-acp 0.16.0 (ACP, http)', { preset: 'codex-acp', env: h.env }, h.workDir, hostToolKit(), (s) => mock.enqueue(...(s as never[])), (i) => ({ kind: 'tool_call', name: 'lookup_ticket', namespace: 'mcp__host', arguments: { id: `T-${i}` } }), () => ({ kind: 'text', text: 'done' }));
        await mock.close();
      }
      {
        const mock = await startAnthropicMock({ consumesQueue: isMainClaudeRequest });
        const h = hermeticClaudeCodeAcp({ port: mock.port, root: join(root, 'claude-code-acp') });
        await acp('claude-code-acp 0.16.2 (ACP, http)', { preset: 'claude-code-acp', env: h.env }, h.work, hostToolKit(), (s) => mock.enqueue(...(s as never[])), (i) => ({ kind: 'tool_use', name: 'mcp__host__lookup_ticket', input: { id: `T-${i}` } }), () => ({ kind: 'text', text: 'done' }));
        await mock.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }

    const rows: Row[] = results.map((r) => ({
      measurement: r.label,
      result: `model round trip p50 ${ms(nearestRank(r.model, 50))}, p99 ${ms(nearestRank(r.model, 99))}; tool_call → tool_result p50 ${ms(nearestRank(r.engine, 50))}, p99 ${ms(nearestRank(r.engine, 99))} (${r.model.length} calls)`,
      meaning: MEANING[r.label] ?? '',
    }));
    writeSection(inject('benchResultsDir'), {
      id: 'host-tools-agents',
      order: 11,
      title: '11. Host tools on Codex and the ACP agents: one call on the real CLIs',
      method:
        `One lookup_ticket host tool (a handler that answers from a table, well under 1 ms), ${TURNS} turns of ${CALLS_PER_TURN} calls each per agent (the mock model hands out the next call as soon as the previous result arrives, with a new id each time), on the real pinned CLIs against the instant mock models on 127.0.0.1, hermetic HOME / CODEX_HOME. ` +
        'Model round trip: from the mock handing out the call to the agent\'s next request carrying the result (the agent parsing the call, asking our engine, the handler, the agent sending the result back: everything but a real model). tool_call → tool_result: the same call between the engine\'s two events. p99 of 40 samples is close to the maximum.',
      rows,
    });
  }, 600_000);
});

const MEANING: Record<string, string> = {
  'codex app-server, dynamicTools': 'The default for Codex: the call is a JSON-RPC request on the pipe the engine already has, no port, no approval.',
  'codex app-server, loopback MCP (hostTools: mcp)': 'The fallback: the same call over HTTP to the loopback server; a real model also pays a tool_search round trip first (the tools are deferred).',
  'codex-exec, loopback MCP': 'Each turn is a new process that connects to the engine\'s loopback server at start-up; a call costs the same as on app-server.',
  'gemini-cli 0.61.0 (ACP, http)': 'Includes gemini\'s permission request for the MCP tool, which the engine answers at once (host tools are trusted).',
  'codex-acp 0.16.0 (ACP, http)': 'Includes codex-acp\'s approval request (answered by the engine at once) and its own wait after the approval.',
  'claude-code-acp 0.16.2 (ACP, http)': 'Includes the permission request the engine answers at once; Claude Code\'s own overhead per tool call dominates.',
};
