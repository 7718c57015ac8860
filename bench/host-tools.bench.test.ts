/**
 * 12. Host tools: the round trip of one host tool call on the REAL pinned Claude Code CLI, hermetic
 * (our mock Messages API on 127.0.0.1, scripted to call `mcp__host__stamp` once per turn).
 *
 * Per call, three instants on this process's monotonic clock: the session's `tool_call` notice
 * (the CLI printed the model's tool_use, the engine translated it), the handler entered (the CLI
 * sent `tools/call` over the control protocol, the input was checked), and the mock receiving the
 * model request that carries the tool's result (the answer went back through `mcp_message`, the
 * CLI built its next request). The agent's call → handler → result seen by the model.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { claudeEngine } from '../src/engines/claude/index.js';
import { defineTool, type HostTool } from '../src/engines/core/host-tools.js';
import { MemoryJournal } from '../src/effects/journal/memory-journal.js';
import { MemoryStore } from '../src/effects/store/memory-store.js';
import { createSession } from '../src/session/create-session.js';
import { startAnthropicMock, type AnthropicMock } from '../test/mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../test/support/claude-hermetic.js';
import { ms, writeSection } from './support/report.js';

const WARMUP = 3;
const CALLS = 60;

/** Nearest-rank percentile of sorted samples. */
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))} (min ${ms(sorted[0]!)}, max ${ms(sorted.at(-1)!)})`;
};

describe('host tools', () => {
  let root: string;
  let mock: AnthropicMock;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ase-bench-host-tools-'));
    mock = await startAnthropicMock();
  });
  afterAll(async () => {
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('claude: agent call → handler → result seen by the model', async () => {
    const work = path.join(root, 'work');
    mkdirSync(work, { recursive: true });
    const marks = new Map<string, { call?: number; handler?: number; seen?: number }>();
    const mark = (callId: string) => marks.get(callId) ?? (marks.set(callId, {}), marks.get(callId)!);
    /** The library's own part: a `tools/call` line read from the CLI → its `mcp_response` line written (by control request id). */
    const served = new Map<string, { read?: number; written?: number }>();
    const onTraffic = ({ direction, line }: { direction: string; line: string }) => {
      if (direction === 'from_agent' && line.includes('"mcp_message"') && line.includes('"tools/call"')) {
        served.set((JSON.parse(line) as { request_id: string }).request_id, { read: performance.now() });
      } else if (direction === 'to_agent' && line.includes('"mcp_response"')) {
        const entry = served.get((JSON.parse(line) as { response: { request_id: string } }).response.request_id);
        if (entry) entry.written = performance.now();
      }
    };
    const stamp = defineTool({
      name: 'stamp',
      description: 'Returns a stamp',
      inputSchema: z.object({ n: z.number() }),
      handler: ({ n }, ctx) => {
        mark(ctx.callId).handler = performance.now();
        return `stamp ${n}`;
      },
    });
    const session = await createSession({
      agent: 'claude',
      workDir: work,
      dataDir: path.join(root, 'data'),
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      engines: [claudeEngine({ bin: claudeBinary() })],
      engineOptions: { env: hermeticClaudeEnv({ port: mock.port, root }), onTraffic },
      tools: [stamp as HostTool<never>],
    });
    session.on('agent', ({ event }) => {
      if (event.type === 'tool_call') mark(event.callId).call = performance.now();
    });
    try {
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const callId = `toolu_bench_${i}`;
        mock.enqueue({ kind: 'tool_use', name: 'mcp__host__stamp', input: { n: i }, id: callId }, (request) => {
          mark(callId).seen = performance.now();
          const carried = JSON.stringify(request.body?.messages ?? []).includes(`stamp ${i}`);
          return { kind: 'text', text: carried ? 'ok' : 'missing' };
        });
        const turn = await session.run(`stamp ${i}`);
        expect(turn.text).toBe('ok');
      }
    } finally {
      await session.stop();
    }
    const measured = [...marks.entries()].filter(([id]) => Number(id.split('_').at(-1)) >= WARMUP).map(([, m]) => m);
    expect(measured).toHaveLength(CALLS);
    const toHandler = measured.map((m) => m.handler! - m.call!);
    const back = measured.map((m) => m.seen! - m.handler!);
    const total = measured.map((m) => m.seen! - m.call!);
    const library = [...served.values()].slice(WARMUP).map((s) => s.written! - s.read!);
    expect(library).toHaveLength(CALLS);
    const load = os.loadavg()[0]!.toFixed(1);
    writeSection(inject('benchResultsDir'), {
      id: 'host-tools',
      order: 12,
      title: '12. Host tools: one call on the real Claude Code CLI',
      method:
        `The claude engine on the pinned Claude Code CLI against the instant mock Messages API (127.0.0.1), one session with one host tool; each turn the mock has the model call it once (${WARMUP} warm-up turns, then ${CALLS} measured). ` +
        "Instants on this process's monotonic clock: the session's `tool_call` notice, the handler entered, the mock receiving the model request that carries the result; and, from the engine's traffic tap, the `tools/call` line read and its `mcp_response` line written. " +
        `Load average at the end: ${load} on ${os.cpus().length} cores (the CLI's own share of the round trip grows with it).`,
      rows: [
        {
          measurement: 'Agent call → result seen by the model (`tool_call` notice → the next model request carries the result)',
          result: summary(total),
          meaning: 'What a host tool adds to the agent turn: the in-process MCP server costs no port and no process, the rest is the CLI building its next request.',
        },
        {
          measurement: '… of which call → handler (the CLI sends `tools/call` as `mcp_message`; input checked)',
          result: summary(toHandler),
          meaning: 'How soon your handler runs after the model asked: the control protocol round and the input validation.',
        },
        {
          measurement: "The library's part: `tools/call` read from the CLI → `mcp_response` written (routing, input check, handler, answer)",
          result: summary(library),
          meaning: 'What the host side costs per call; everything else in the round trip is the agent CLI.',
        },
        {
          measurement: '… of which handler answer → the model request carrying it',
          result: summary(back),
          meaning: "The answer's way back through the CLI (the `tool_result`, then its next API request).",
        },
      ],
    });
  }, 600_000);
});
