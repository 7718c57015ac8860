/**
 * Host tools on the acp engine with the REAL pinned ACP agents (gemini-cli 0.61.0, codex-acp
 * 0.16.0, claude-code-acp 0.16.2), each against our mock of its model API, hermetic HOME: the
 * loopback MCP server goes into session/new, the mock model calls the host tool, the engine allows
 * the agent's permission request for it (no permission_request reaches the host), the handler
 * answers and the mock sees the answer in its next request. A thrown handler is an error result
 * the model reads, and the next turn works. After stop: no process under the test root and the
 * loopback port closed. Also: the stdio shim path (gemini told to use it), an abort while a handler
 * runs, a tool that requiresPermission, session/load (codex-acp) and createSession({tools}) end to end.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AcpEngine, acpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import { createSession, MemoryJournal, MemoryStore, type Session } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { startGeminiMock, type GeminiMock } from '../mocks/gemini-mock.js';
import { startOpenAIResponsesMock, toolOutputsSinceLastUser, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { AcpAgentBench } from '../support/acp-agent-bench.js';
import { EventLog, hermeticClaudeCodeAcp, hermeticGemini, isMainClaudeRequest } from '../support/acp-hermetic.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { realEngineContext } from '../support/engine-context.js';
import { hostToolKit, loopbackPortIn, portClosed, RoundTrips, TICKET_ANSWER, type HostToolKit } from '../support/host-tools-kit.js';
import { waitNoProcessesUnder } from '../support/processes.js';

const READY_MS = 60_000;

/** What a test needs of one agent: its options, and how its mock model calls a host tool and reads the result. */
interface AgentUnderTest {
  options: AcpEngineOptions;
  work: string;
  /** The model calls host tool `tool` with `args`, then says `Observed: <what the tool returned>`. */
  scriptCall(tool: string, args: Record<string, unknown>, rt: RoundTrips): void;
  text(text: string): void;
}

/** The text of the last function response in a Gemini request (what the model got back). */
function geminiFunctionResponse(body: any): string {
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const part = (contents[i]?.parts ?? []).find((p: any) => p?.functionResponse);
    if (part) return JSON.stringify(part.functionResponse.response);
  }
  return '';
}

/** The text of the last tool_result block in an Anthropic request. */
function anthropicToolResult(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const blocks: any[] = Array.isArray(messages[i]?.content) ? messages[i].content : [];
    const result = blocks.find((b) => b?.type === 'tool_result');
    if (result) return JSON.stringify(result.content);
  }
  return '';
}

/** Starts the acp engine with the kit's host tools; its traffic names the loopback URL. */
async function startWithTools(kit: HostToolKit, options: AcpEngineOptions, workDir: string, engines: AcpEngine[]): Promise<{ engine: AcpEngine; log: EventLog; port: number }> {
  const lines: string[] = [];
  const engine = new AcpEngine(realEngineContext({ hostTools: kit.toolbox }), { ...options, onTraffic: (r) => lines.push(r.line) });
  engines.push(engine);
  const log = new EventLog();
  engine.onEvent(log.push);
  const ready = log.next('ready', 'ready', READY_MS);
  await engine.start({ gen: 1, mode: 'remote', workDir, options: {} });
  await ready;
  const sessionNew = lines.find((l) => l.includes('"session/new"'));
  const port = sessionNew ? loopbackPortIn(sessionNew) : undefined;
  if (port === undefined) throw new Error(`no loopback URL in session/new: ${sessionNew}`);
  return { engine, log, port };
}

/** More turns on the scenario's agent, before its stop (each would otherwise start an agent of its own). */
type MoreTurns = (engine: AcpEngine, log: EventLog) => Promise<void>;

async function hostToolScenario(label: string, agent: AgentUnderTest, kit: HostToolKit, root: string, engines: AcpEngine[], more?: MoreTurns): Promise<number[]> {
  const { engine, log, port } = await startWithTools(kit, agent.options, agent.work, engines);
  const rt = new RoundTrips();

  agent.scriptCall('lookup_ticket', { id: 'T-42' }, rt);
  let from = log.events.length;
  let done = log.next('turn_complete', 'turn 1', 60_000);
  await engine.send({ localId: 'h1', text: 'what about T-42?' });
  expect(await done).toMatchObject({ status: 'completed' });
  let turn = log.events.slice(from);
  const call = turn.find((e) => e.type === 'tool_call' && e.toolName === 'lookup_ticket');
  expect(call, `${label}: tool_call lookup_ticket in ${JSON.stringify(turn.filter((e) => e.type === 'tool_call'))}`).toBeDefined();
  const callId = (call as { callId: string }).callId;
  expect(turn.filter((e) => e.type === 'tool_result' && e.callId === callId)).toEqual([expect.objectContaining({ status: 'completed', isError: false })]);
  // Host tools are trusted: the agent's permission request was answered by the engine.
  expect(turn.filter((e) => e.type === 'permission_request')).toEqual([]);
  expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId } }]);
  expect(log.text()).toContain('Observed:');
  expect(log.text()).toContain('T-42 is open');

  agent.scriptCall('explode', {}, rt);
  from = log.events.length;
  done = log.next('turn_complete', 'turn 2', 60_000);
  await engine.send({ localId: 'h2', text: 'blow up' });
  expect(await done).toMatchObject({ status: 'completed' });
  turn = log.events.slice(from);
  const failed = turn.find((e) => e.type === 'tool_call' && e.toolName === 'explode') as { callId: string } | undefined;
  expect(failed, `${label}: tool_call explode`).toBeDefined();
  expect(turn.filter((e) => e.type === 'tool_result' && e.callId === failed!.callId)).toEqual([expect.objectContaining({ status: 'failed', isError: true })]);
  expect(log.text()).toContain('kaboom from the host');

  agent.text('still here');
  done = log.next('turn_complete', 'turn 3', 60_000);
  await engine.send({ localId: 'h3', text: 'are you fine?' });
  expect(await done).toMatchObject({ status: 'completed' });
  expect(log.text()).toContain('still here');
  await more?.(engine, log);

  expect(await portClosed(port)).toBe(false);
  await engine.stop();
  expect(await portClosed(port)).toBe(true);
  expect(await waitNoProcessesUnder(root)).toEqual([]);
  console.log(`[host-tools ${label}] round trips ms ${rt.samples.map((s) => s.toFixed(1)).join(', ')}`);
  return rt.samples;
}

describe('host tools on gemini-cli --acp', () => {
  let bench: AcpAgentBench<GeminiMock>;
  const engines: AcpEngine[] = [];
  let session: Session | undefined;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-ht-gemini-', startGeminiMock);
  });
  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await Promise.allSettled(engines.splice(0).map((e) => e.stop()));
    await bench.close();
  });

  function gemini(extra: AcpEngineOptions = {}): AgentUnderTest {
    const { mock, root } = bench;
    const h = hermeticGemini({ port: mock.port, root });
    return {
      options: { preset: 'gemini', env: h.env, ...extra },
      work: h.work,
      scriptCall: (tool, args, rt) =>
        mock.enqueue(
          () => {
            rt.sent();
            return { kind: 'function_call', name: `mcp_host_${tool}`, args };
          },
          (request) => {
            rt.received();
            return { kind: 'text', text: `Observed: ${geminiFunctionResponse(request.body)}` };
          },
        ),
      text: (text) => mock.enqueue({ kind: 'text', text }),
    };
  }

  /**
   * An abort while a handler runs aborts its signal; the next turn works. On the agent of the http
   * test, after its turns: `kit.calls` holds theirs, so only the calls after `before` are this step's.
   */
  async function abortWhileHandlerRuns(agent: AgentUnderTest, kit: HostToolKit, engine: AcpEngine, log: EventLog): Promise<void> {
    const before = kit.calls.length;
    bench.mock.enqueue({ kind: 'function_call', name: 'mcp_host_hang', args: {} });
    const cancelled = log.next('turn_complete', 'cancelled turn', 60_000);
    await engine.send({ localId: 'a1', text: 'hang' });
    await expect.poll(() => kit.calls.length, { timeout: 60_000 }).toBe(before + 1);
    expect(kit.calls.at(-1)?.name).toBe('hang');
    await engine.abort();
    expect(await cancelled).toMatchObject({ status: 'cancelled' });
    expect(kit.hangAborted.reason).toBeDefined();
    agent.text('after the abort');
    const done = log.next('turn_complete', 'next turn', 60_000);
    await engine.send({ localId: 'a2', text: 'again' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(log.text()).toContain('after the abort');
  }

  /** A tool that requiresPermission reaches the host as a permission_request named after the tool (same agent, calls after `before`). */
  async function permissionedTool(agent: AgentUnderTest, kit: HostToolKit, engine: AcpEngine, log: EventLog): Promise<void> {
    const before = kit.calls.length;
    agent.scriptCall('deploy', { env: 'staging' }, new RoundTrips());
    const asked = log.next('permission_request', 'permission_request', 60_000);
    const done = log.next('turn_complete', 'turn', 60_000);
    await engine.send({ localId: 'p1', text: 'deploy to staging' });
    const request = await asked;
    expect(request.toolName).toBe('deploy');
    expect(kit.calls.slice(before)).toEqual([]);
    await engine.answerPermission(request.requestId, { behavior: 'allow' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(kit.calls.slice(before).map((c) => [c.name, c.ctx.callId])).toEqual([['deploy', request.callId]]);
    expect(log.text()).toContain('deployed to staging');
  }

  // The abort and requiresPermission steps run on this test's agent (after its turns, before its
  // stop): a gemini start is most of each test's time.
  it('http: called and answered, thrown handler is an error result; an abort while a handler runs aborts its signal, the next turn works; a tool that requiresPermission reaches the host as a permission_request named after the tool; nothing left after stop', async () => {
    const agent = gemini();
    const kit = hostToolKit();
    await hostToolScenario('gemini', agent, kit, bench.root, engines, async (engine, log) => {
      await abortWhileHandlerRuns(agent, kit, engine, log);
      await permissionedTool(agent, kit, engine, log);
    });
  });

  it('stdio shim: the same through the shim the agent spawns', async () => {
    await hostToolScenario('gemini-stdio', gemini({ hostToolsTransport: 'stdio' }), hostToolKit(), bench.root, engines);
  });

  it('createSession({tools}): the call reaches the handler and shows as an ordinary tool call of the session', async () => {
    const agent = gemini();
    const kit = hostToolKit();
    session = await createSession({ agent: 'acp', engines: [acpEngine(agent.options)], store: new MemoryStore(), journal: new MemoryJournal(), workDir: agent.work, tools: kit.tools });
    const log = new EventLog();
    session.on('agent', (n) => log.push(n.event));
    await log.next('ready', 'ready', READY_MS);
    agent.scriptCall('lookup_ticket', { id: 'T-42' }, new RoundTrips());
    const done = log.next('turn_complete', 'turn', 60_000);
    session.send('what about T-42?');
    expect(await done).toMatchObject({ status: 'completed' });
    const call = log.of('tool_call').find((e) => e.toolName === 'lookup_ticket');
    expect(call).toBeDefined();
    expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: session.id, callId: call!.callId } }]);
    expect(log.text()).toContain(TICKET_ANSWER);
    await session.stop();
    session = undefined;
    expect(await waitNoProcessesUnder(bench.root)).toEqual([]);
  });
});

describe('host tools on codex-acp', () => {
  let bench: AcpAgentBench<OpenAIResponsesMock>;
  const engines: AcpEngine[] = [];

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-ht-codexacp-', startOpenAIResponsesMock);
  });
  afterEach(async () => {
    await Promise.allSettled(engines.splice(0).map((e) => e.stop()));
    await bench.close();
  });

  it('called and answered, thrown handler is an error result, nothing left after stop', async () => {
    const { mock, root } = bench;
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: 'codex-acp', approvalPolicy: 'on-request' });
    const agent: AgentUnderTest = {
      options: { preset: 'codex-acp', env: h.env },
      work: h.workDir,
      // Codex defers MCP tools behind tool_search: the model calls them in namespace mcp__host.
      scriptCall: (tool, args, rt) =>
        mock.enqueue(
          () => {
            rt.sent();
            return { kind: 'tool_call', name: tool, namespace: 'mcp__host', arguments: args };
          },
          (request) => {
            rt.received();
            return { kind: 'text', text: `Observed: ${toolOutputsSinceLastUser(request.body).map((o) => o.output).join(' | ')}` };
          },
        ),
      text: (text) => mock.enqueue({ kind: 'text', text }),
    };
    await hostToolScenario('codex-acp', agent, hostToolKit(), root, engines);
  });

  it('session/load: the loaded session gets the host tools server again and the tool works', async () => {
    const { mock, root } = bench;
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: 'codex-acp', approvalPolicy: 'on-request' });
    const token = await bench.rememberPineapple({ preset: 'codex-acp', env: h.env }, h.workDir, 'I will remember pineapple.');
    const kit = hostToolKit();
    const lines: string[] = [];
    const engine = new AcpEngine(realEngineContext({ hostTools: kit.toolbox }), { preset: 'codex-acp', env: h.env, onTraffic: (r) => lines.push(r.line) });
    engines.push(engine);
    const log = new EventLog();
    engine.onEvent(log.push);
    const ready = log.next('ready', 'ready', READY_MS);
    await engine.start({ gen: 2, mode: 'remote', workDir: h.workDir, options: {}, resumeToken: token });
    await ready;
    const load = lines.find((l) => l.includes('"session/load"'));
    expect(load, 'a session/load request').toBeDefined();
    expect(loopbackPortIn(load!)).toBeDefined();
    expect(log.of('session_identified')[0]?.resumeToken).toBe(token);
    mock.enqueue({ kind: 'tool_call', name: 'lookup_ticket', namespace: 'mcp__host', arguments: { id: 'T-42' } }, (request) => ({
      kind: 'text',
      text: `Observed: ${toolOutputsSinceLastUser(request.body).map((o) => o.output).join(' | ')}`,
    }));
    const done = log.next('turn_complete', 'turn', 60_000);
    await engine.send({ localId: 'l1', text: 'what about T-42?' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(kit.calls.map((c) => c.name)).toEqual(['lookup_ticket']);
    expect(log.text()).toContain('T-42 is open');
    await engine.stop();
    expect(await waitNoProcessesUnder(root)).toEqual([]);
  });
});

describe('host tools on claude-code-acp', () => {
  let bench: AcpAgentBench<AnthropicMock>;
  const engines: AcpEngine[] = [];

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-ht-claudeacp-', () => startAnthropicMock({ consumesQueue: isMainClaudeRequest }));
  });
  afterEach(async () => {
    await Promise.allSettled(engines.splice(0).map((e) => e.stop()));
    await bench.close();
  });

  it('called and answered, thrown handler is an error result, nothing left after stop', async () => {
    const { mock, root } = bench;
    const h = hermeticClaudeCodeAcp({ port: mock.port, root });
    const agent: AgentUnderTest = {
      options: { preset: 'claude-code-acp', env: h.env },
      work: h.work,
      scriptCall: (tool, args, rt) =>
        mock.enqueue(
          () => {
            rt.sent();
            return { kind: 'tool_use', name: `mcp__host__${tool}`, input: args };
          },
          (request) => {
            rt.received();
            return { kind: 'text', text: `Observed: ${anthropicToolResult(request.body)}` };
          },
        ),
      text: (text) => mock.enqueue({ kind: 'text', text }),
    };
    await hostToolScenario('claude-code-acp', agent, hostToolKit(), root, engines);
  });
});
