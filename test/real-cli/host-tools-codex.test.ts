/**
 * Host tools on the `codex` engine with the REAL pinned codex 0.169.0 app-server against our mock
 * Responses API (hermetic CODEX_HOME): the mock model calls the host tool, the handler answers,
 * and the mock sees the answer in its next request. Both mechanisms: `dynamicTools` +
 * `item/tool/call` (default) and the loopback MCP server (`hostTools: 'mcp'`, where the tool sits
 * behind `tool_search` in namespace `mcp__host`). A thrown handler is an error result the model
 * reads, and the session goes on. After stop: no process, and the loopback port is closed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodexAppServerEngine, type CodexAppServerEngineOptions } from '../../src/engines/codex/index.js';
import { offeredToolNames, toolOutputsSinceLastUser, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { CodexEngineBench } from '../support/codex-engine-bench.js';
import { hostToolKit, loopbackPortIn, portClosed, RoundTrips, TICKET_ANSWER, type HostToolKit } from '../support/host-tools-kit.js';

describe('host tools on codex app-server 0.169.0', () => {
  let bench: CodexEngineBench<CodexAppServerEngine>;
  let mock: OpenAIResponsesMock;
  let kit: HostToolKit;

  beforeEach(async () => {
    bench = await CodexEngineBench.open({ prefix: 'ase-codex-ht-', fixturePrefix: 'app-server-host-tools', engine: 'codex', codexVersion: '0.169.0' });
    ({ mock } = bench);
    kit = hostToolKit();
  });

  afterEach(() => bench.close());

  function launch(options: CodexAppServerEngineOptions = {}) {
    return bench.launch((defaults) => new CodexAppServerEngine(realEngineContext({ hostTools: kit.toolbox }), { ...defaults, ...options }), 1);
  }

  /** The mock model calls `tool` (in `namespace`), then reports what the tool answered. */
  function scriptCall(tool: string, args: Record<string, unknown>, rt: RoundTrips, namespace?: string): void {
    mock.enqueue(
      () => {
        rt.sent();
        return { kind: 'tool_call', name: tool, arguments: args, ...(namespace && { namespace }) };
      },
      (request) => {
        rt.received();
        return { kind: 'text', text: `Observed: ${toolOutputsSinceLastUser(request.body).map((o) => o.output).join(' | ')}` };
      },
    );
  }

  it('dynamicTools: the model calls the host tool, the handler answers, a thrown handler is an error result, the session goes on', async () => {
    const { engine, log, traffic } = launch();
    await log.waitFor('ready');
    const rt = new RoundTrips();

    scriptCall('lookup_ticket', { id: 'T-42' }, rt);
    let mark = log.mark();
    await engine.send({ localId: 'm1', text: 'what about T-42?' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    // Offered as a plain function tool, not deferred.
    expect(offeredToolNames(mock.responsesRequests()[0]!.body)).toEqual(expect.arrayContaining(['lookup_ticket', 'explode']));
    const call = log.of('tool_call', mark)[0]!;
    expect(call).toMatchObject({ toolName: 'lookup_ticket', input: { id: 'T-42' } });
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: call.callId, status: 'completed', isError: false })]);
    expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId: call.callId } }]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toEqual({ type: 'text', text: `Observed: ${TICKET_ANSWER}` });
    // experimentalApi was asked for (dynamicTools needs it).
    const init = traffic.find((e) => (e.msg as { method?: string }).method === 'initialize')!.msg as { params: { capabilities: { experimentalApi: boolean } } };
    expect(init.params.capabilities.experimentalApi).toBe(true);

    scriptCall('explode', {}, rt);
    mark = log.mark();
    await engine.send({ localId: 'm2', text: 'blow up' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    const failed = log.of('tool_call', mark)[0]!;
    expect(failed.toolName).toBe('explode');
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: failed.callId, status: 'failed', isError: true })]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining('kaboom from the host') });

    mock.enqueue({ kind: 'text', text: 'still here' });
    mark = log.mark();
    await engine.send({ localId: 'm3', text: 'are you fine?' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    expect(log.of('message', mark).at(-1)?.blocks[0]).toEqual({ type: 'text', text: 'still here' });
    expect(engine.invalidEvents).toEqual([]);
    console.log(`[host-tools codex dynamic] round trips ms ${rt.samples.map((s) => s.toFixed(1)).join(', ')}`);
    await engine.stop();
  });

  it('loopback MCP fallback: the tool behind tool_search answers, is reported under its own name, and the port closes with the engine', async () => {
    const { engine, log, traffic } = launch({ hostTools: 'mcp' });
    await log.waitFor('ready');
    const threadStart = JSON.stringify(traffic.find((e) => (e.msg as { method?: string }).method === 'thread/start')!.msg);
    const port = loopbackPortIn(threadStart);
    expect(port).toBeDefined();
    const rt = new RoundTrips();

    scriptCall('lookup_ticket', { id: 'T-42' }, rt, 'mcp__host');
    let mark = log.mark();
    await engine.send({ localId: 'm1', text: 'what about T-42?' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    const call = log.of('tool_call', mark)[0]!;
    expect(call).toMatchObject({ toolName: 'lookup_ticket', input: { id: 'T-42' } });
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ callId: call.callId, status: 'completed' })]);
    expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId: expect.any(String) } }]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining(TICKET_ANSWER) });

    scriptCall('explode', {}, rt, 'mcp__host');
    mark = log.mark();
    await engine.send({ localId: 'm2', text: 'blow up' });
    expect(await log.waitFor('turn_complete', mark)).toMatchObject({ status: 'completed' });
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ status: 'failed', isError: true })]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining('kaboom from the host') });

    console.log(`[host-tools codex mcp] round trips ms ${rt.samples.map((s) => s.toFixed(1)).join(', ')}`);
    expect(await portClosed(port!)).toBe(false);
    await engine.stop();
    expect(await portClosed(port!)).toBe(true);
  });
});
