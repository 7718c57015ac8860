/**
 * Host tools (`createSession({tools})`) on the REAL pinned Claude Code CLI, hermetic: our mock
 * Messages API is scripted to make the model call `mcp__host__<tool>`, and its next request shows
 * what the model received. The CLI reaches the tool through the engine's in-process MCP server
 * (control protocol `mcp_message`, no port). Covers: a call answered (the mock sees the result),
 * the tool offered to the model directly (alwaysLoad, not deferred behind ToolSearch), the events
 * named after the tool, a thrown handler, input refused before the handler, abort mid-call,
 * `requiresPermission` through the ledger, and nothing left running.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claudeEngine, claudePrintEngine } from '../../src/engines/claude/index.js';
import { createSession, defineTool, MemoryJournal, MemoryStore, type AgentEvent, type HostTool, type Session } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock, type RecordedRequest } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { processesUnder } from '../support/processes.js';

/** The `tool_result` blocks of the request's last user message (what the model received from its tool calls). */
function toolResults(request: RecordedRequest): { tool_use_id: string; content: unknown; is_error?: boolean }[] {
  const messages: any[] = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result'));
  return last ? last.content.filter((b: any) => b.type === 'tool_result') : [];
}

/** The text of a tool_result's content (a string or text blocks). */
const resultText = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: any) => (b?.type === 'text' ? b.text : '')).join('') : '';

/** The mock's answer once the tool ran: echoes what the model got, so the test can read it from the turn. */
const observe = (request: RecordedRequest) => {
  const [result] = toolResults(request);
  return { kind: 'text' as const, text: `Observed: ${result ? `${result.is_error ? 'ERROR ' : ''}${resultText(result.content)}` : 'nothing'}` };
};

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  handler: ({ a, b }) => `sum=${a + b}`,
});

describe('host tools on the real Claude Code CLI', () => {
  let mock: AnthropicMock;
  let root: string;
  let session: Session | undefined;

  beforeEach(async () => {
    mock = await startAnthropicMock();
    root = mkdtempSync(join(tmpdir(), 'ase-claude-host-tools-'));
  });
  afterEach(async () => {
    await session?.stop();
    session = undefined;
    await mock.close();
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  async function open(tools: HostTool<never>[], engineOptions: Record<string, unknown> = {}, agent: 'claude' | 'claude-print' = 'claude') {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root });
    const events: AgentEvent[] = [];
    const journal = new MemoryJournal();
    session = await createSession({
      agent,
      workDir: work,
      dataDir: join(root, 'data'),
      store: new MemoryStore(),
      journal,
      engines: [claudeEngine({ bin: claudeBinary() }), claudePrintEngine({ bin: claudeBinary() })],
      engineOptions: { env, ...engineOptions },
      tools,
    });
    session.on('agent', (n) => events.push(n.event));
    return { session, events, journal };
  }

  const streaming = () => mock.requests.filter((r) => r.body?.stream === true);

  // The five stories on one session, one after the other (one Claude Code start, was five): each
  // tool is its own, and each story's assertions are about its own calls.
  it('a host tool is offered directly, called, answered, and shown under its own name; a thrown handler is an error result and the session goes on; invalid input is refused before the handler runs; aborting the turn mid-call aborts the handler signal and the next turn runs; requiresPermission waits for the ledger: allowed runs, denied does not', async () => {
    const seen: { args: unknown; callId: string; sessionId: string }[] = [];
    let signal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let deployed = 0;
    const { session, events, journal } = await open([
      { ...add, handler: (args: { a: number; b: number }, ctx) => (seen.push({ args, callId: ctx.callId, sessionId: ctx.sessionId }), `sum=${args.a + args.b}`) } as HostTool<never>,
      defineTool({ name: 'lookup', description: 'Looks a ticket up', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, handler: () => { throw new Error('ticket service down'); } }) as HostTool<never>,
      defineTool({
        name: 'wait_for_human',
        description: 'Waits until a human answers',
        inputSchema: z.object({}),
        handler: (_args, ctx) => {
          signal = ctx.signal;
          started();
          return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
        },
      }) as HostTool<never>,
      defineTool({ name: 'deploy', description: 'Deploys', inputSchema: z.object({ env: z.string() }), requiresPermission: true, handler: ({ env }) => (++deployed, `deployed to ${env}`) }) as HostTool<never>,
    ]);

    // 1. Called, answered, shown under its own name.
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__add', input: { a: 2, b: 3 }, id: 'toolu_add1' }, observe);
    const turn = await session.run('add 2 and 3');
    expect(turn.status).toBe('completed');
    expect(turn.text).toBe('Observed: sum=5');
    expect(seen).toEqual([{ args: { a: 2, b: 3 }, callId: 'toolu_add1', sessionId: session.id }]);
    // The model had the tool in its tool list (alwaysLoad), not behind ToolSearch.
    const first = streaming()[0]!;
    expect((first.body.tools as { name: string }[]).map((t) => t.name)).toContain('mcp__host__add');
    // The second request carries the tool's result, not an error.
    const results = toolResults(streaming()[1]!);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_add1' });
    expect(results[0]!.is_error ?? false).toBe(false);
    // Events and transcript: named `add`, not `mcp__host__add`; no permission was asked (trusted).
    const call = events.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({ type: 'tool_call', toolName: 'add', callId: 'toolu_add1', input: { a: 2, b: 3 } });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: 'toolu_add1', status: 'completed', isError: false });
    expect(events.some((e) => e.type === 'permission_request')).toBe(false);
    const transcript = JSON.stringify(await journal.read(session.id));
    expect(transcript).toContain('"toolName":"add"');
    expect(transcript).not.toContain('mcp__host__add');

    // 2. A thrown handler is an error result to the agent; the session goes on.
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__lookup', input: { id: 'T-1' }, id: 'toolu_lk' }, observe);
    const thrown = await session.run('look up T-1');
    expect(thrown.status).toBe('completed');
    expect(thrown.text).toBe('Observed: ERROR host tool "lookup" failed: ticket service down');
    expect(events.find((e) => e.type === 'tool_result' && e.callId === 'toolu_lk')).toMatchObject({ callId: 'toolu_lk', status: 'failed', isError: true });
    expect((await session.run('still there?')).text).toBe('Echo: still there?');

    // 3. Invalid input is refused before the handler runs.
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__add', input: { a: 'two', b: 3 }, id: 'toolu_bad' }, observe);
    const bad = await session.run('add badly');
    expect(bad.text).toMatch(/^Observed: ERROR invalid input for host tool "add": a: /);
    expect(seen).toHaveLength(1); // the handler ran for toolu_add1 only

    // 4. Aborting the turn mid-call aborts the handler signal; the session takes the next turn.
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__wait_for_human', input: {}, id: 'toolu_wait' }, observe);
    const receipt = session.send('ask the human');
    await receipt;
    await running;
    expect(signal?.aborted).toBe(false);
    const ended = new Promise<AgentEvent>((resolve) => session.on('agent', (n) => n.event.type === 'turn_complete' && resolve(n.event)));
    await session.abort();
    expect(signal?.aborted).toBe(true);
    expect(await ended).toMatchObject({ type: 'turn_complete', status: 'cancelled' });
    expect(events.some((e) => e.type === 'tool_call' && e.toolName === 'wait_for_human')).toBe(true);
    // The next turn runs (the model's request then carries the interrupted call's result).
    const next = await session.run('next');
    expect(next.status).toBe('completed');
    expect(JSON.stringify(mock.requests.at(-1)!.body.messages)).toContain('toolu_wait');

    // 5. requiresPermission: the call waits for the ledger; allowed runs, denied does not.
    const prompts: string[] = [];
    let answer: 'allow' | 'deny' = 'allow';
    session.on('permission_prompt', (p) => {
      prompts.push(p.toolName);
      void session.decide(p.requestId, answer);
    });
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__deploy', input: { env: 'staging' }, id: 'toolu_d1' }, observe);
    expect((await session.run('deploy staging')).text).toBe('Observed: deployed to staging');
    expect(prompts).toEqual(['deploy']);
    expect(events.find((e) => e.type === 'permission_request')).toMatchObject({ toolName: 'deploy', callId: 'toolu_d1' });
    answer = 'deny';
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__deploy', input: { env: 'prod' }, id: 'toolu_d2' }, observe);
    const denied = await session.run('deploy prod');
    expect(denied.text).toMatch(/^Observed: ERROR /);
    expect(deployed).toBe(1);
    expect(events.filter((e) => e.type === 'tool_result' && e.callId === 'toolu_d2')).toMatchObject([{ status: 'denied' }]);
  });

  it('refuses a user MCP server named like the host tools server', async () => {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    const s = await createSession({
      agent: 'claude',
      workDir: work,
      dataDir: join(root, 'data'),
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      engines: [claudeEngine({ bin: claudeBinary() })],
      engineOptions: { env: hermeticClaudeEnv({ port: mock.port, root }), mcpServers: { host: { command: 'true' } } },
      tools: [add as HostTool<never>],
    });
    session = s;
    const error = await new Promise<AgentEvent>((resolve) => s.on('agent', (n) => n.event.type === 'error' && resolve(n.event)));
    expect(error).toMatchObject({ type: 'error', message: expect.stringMatching(/mcpServers\.host/) });
  });

  it('claude-print: a host tool called and answered, a thrown one an error result, across two turn processes', async () => {
    const { session, events } = await open(
      [add as HostTool<never>, defineTool({ name: 'fail', description: 'Always fails', inputSchema: z.object({}), handler: () => { throw new Error('nope'); } }) as HostTool<never>],
      {},
      'claude-print',
    );
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__add', input: { a: 40, b: 2 }, id: 'toolu_p1' }, observe);
    const first = await session.run('add');
    expect(first.status).toBe('completed');
    expect(first.text).toBe('Observed: sum=42');
    expect((streaming()[0]!.body.tools as { name: string }[]).map((t) => t.name)).toContain('mcp__host__fail');
    mock.enqueue({ kind: 'tool_use', name: 'mcp__host__fail', input: {}, id: 'toolu_p2' }, observe);
    const second = await session.run('fail');
    expect(second.text).toBe('Observed: ERROR host tool "fail" failed: nope');
    expect(events.filter((e) => e.type === 'tool_call').map((e) => (e as { toolName: string }).toolName)).toEqual(['add', 'fail']);
    expect(events.filter((e) => e.type === 'tool_result').map((e) => (e as { status: string }).status)).toEqual(['completed', 'failed']);
  });
});
