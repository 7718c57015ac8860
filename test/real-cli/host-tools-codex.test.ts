/**
 * Host tools on the `codex` engine with the REAL pinned codex 0.169.0 app-server against our mock
 * Responses API (hermetic CODEX_HOME): the mock model calls the host tool, the handler answers,
 * and the mock sees the answer in its next request. Both mechanisms: `dynamicTools` +
 * `item/tool/call` (default) and the loopback MCP server (`hostTools: 'mcp'`, where the tool sits
 * behind `tool_search` in namespace `mcp__host`), and `codex-exec` (loopback server, token in the
 * environment, not on the command line). A thrown handler is an error result the model
 * reads, and the session goes on. After stop: no process, and the loopback port is closed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { CodexAppServerEngine, CodexExecEngine, type CodexAppServerEngineOptions } from '../../src/engines/codex/index.js';
import { offeredToolNames, toolOutputsSinceLastUser, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { EventLog, processesMentioning, realEngineContext } from '../support/codex-engine-kit.js';
import { CodexEngineBench } from '../support/codex-engine-bench.js';
import { hostToolKit, loopbackPortIn, portClosed, RoundTrips, TICKET_ANSWER, type HostToolKit } from '../support/host-tools-kit.js';

describe('host tools on codex 0.169.0 (app-server, exec)', () => {
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

  it('dynamicTools: aborting the turn while a handler runs aborts its signal; the next turn works', async () => {
    const { engine, log } = launch();
    await log.waitFor('ready');
    mock.enqueue({ kind: 'tool_call', name: 'hang', arguments: {} });
    let mark = log.mark();
    await engine.send({ localId: 'a1', text: 'hang' });
    await log.waitFor('tool_call', mark, (e) => e.toolName === 'hang', 60_000);
    await expect.poll(() => kit.calls.length, { timeout: 30_000 }).toBe(1);
    await engine.abort();
    expect(await log.waitFor('turn_complete', mark, () => true, 60_000)).toMatchObject({ status: 'cancelled' });
    expect(kit.hangAborted.reason).toBeDefined();
    mock.enqueue({ kind: 'text', text: 'after the abort' });
    mark = log.mark();
    await engine.send({ localId: 'a2', text: 'again' });
    expect(await log.waitFor('turn_complete', mark, () => true, 60_000)).toMatchObject({ status: 'completed' });
    await engine.stop();
  });

  it('dynamicTools: a tool that requiresPermission is asked first; allowed runs it, denied does not', async () => {
    const { engine, log } = launch();
    await log.waitFor('ready');
    const rt = new RoundTrips();
    scriptCall('deploy', { env: 'staging' }, rt);
    let mark = log.mark();
    await engine.send({ localId: 'p1', text: 'deploy to staging' });
    const asked = await log.waitFor('permission_request', mark, () => true, 60_000);
    expect(asked).toMatchObject({ toolName: 'deploy', input: { env: 'staging' } });
    expect(kit.calls).toEqual([]);
    await engine.answerPermission(asked.requestId, { behavior: 'allow' });
    expect(await log.waitFor('turn_complete', mark, () => true, 60_000)).toMatchObject({ status: 'completed' });
    expect(kit.calls.map((c) => c.name)).toEqual(['deploy']);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining('deployed to staging') });

    scriptCall('deploy', { env: 'prod' }, rt);
    mark = log.mark();
    await engine.send({ localId: 'p2', text: 'deploy to prod' });
    const again = await log.waitFor('permission_request', mark, () => true, 60_000);
    await engine.answerPermission(again.requestId, { behavior: 'deny', interrupt: false });
    expect(await log.waitFor('turn_complete', mark, () => true, 60_000)).toMatchObject({ status: 'completed' });
    expect(kit.calls.map((c) => c.name)).toEqual(['deploy']);
    expect(log.of('tool_result', mark)).toEqual([expect.objectContaining({ status: 'failed', isError: true })]);
    expect(log.of('message', mark).at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining('did not allow') });
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

  it('codex-exec: every turn process reaches the loopback server; the token is never on its command line; the port closes at stop', async () => {
    const { h } = bench;
    const engine = new CodexExecEngine(realEngineContext({ hostTools: kit.toolbox }), { bin: h.bin, env: h.env, approvalPolicy: 'never' });
    const log = new EventLog(engine);
    const rt = new RoundTrips();
    const argvs: string[] = [];
    // Each turn process's argv, read while it runs (the mock is called by the process itself).
    const seeArgv = () => {
      for (const pid of processesMentioning(bench.root)) {
        try {
          argvs.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
        } catch {
          // gone
        }
      }
    };
    mock.enqueue(
      () => {
        seeArgv();
        rt.sent();
        return { kind: 'tool_call', name: 'lookup_ticket', namespace: 'mcp__host', arguments: { id: 'T-42' } };
      },
      (request) => {
        rt.received();
        return { kind: 'text', text: `Observed: ${toolOutputsSinceLastUser(request.body).map((o) => o.output).join(' | ')}` };
      },
    );
    await engine.start({ gen: 1, mode: 'remote', workDir: h.workDir, options: {} });
    await engine.send({ localId: 'x1', text: 'what about T-42?' });
    await log.waitFor('turn_complete', 0, () => true, 60_000);
    const call = log.of('tool_call').find((e) => e.toolName === 'lookup_ticket');
    expect(call, JSON.stringify(log.of('tool_call'))).toBeDefined();
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: call!.callId, status: 'completed' })]);
    expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId: expect.any(String) } }]);
    expect(log.of('message').at(-1)?.blocks[0]).toMatchObject({ text: expect.stringContaining(TICKET_ANSWER) });
    const argv = argvs.find((a) => a.includes('mcp_servers.host.url'));
    expect(argv, 'a turn process with the host server on its command line').toBeDefined();
    const port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(argv!)?.[1]);
    expect(argv).not.toMatch(/\/mcp\/[A-Za-z0-9_-]{43}/);
    console.log(`[host-tools codex-exec] round trips ms ${rt.samples.map((s) => s.toFixed(1)).join(', ')}`);
    expect(await portClosed(port)).toBe(false);
    await engine.stop();
    expect(await portClosed(port)).toBe(true);
  });
});
