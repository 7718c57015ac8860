/**
 * The claude engines' host-tools pieces without the CLI (the real CLI is in
 * test/real-cli/claude-host-tools.test.ts): ControlClient serving `mcp_message` asynchronously
 * (before our own initialize is answered), a cancel aborting the call and leaving it unanswered,
 * another server name or garbage refused, and the command-line options host tools add.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ControlClient } from '../../src/engines/claude/client.js';
import { answerClaudeMcp, withHostTools } from '../../src/engines/claude/host-tools.js';
import { claudeOptionArgs } from '../../src/engines/claude/options.js';
import { defineTool, HostToolbox, type HostTool } from '../../src/engines/core/host-tools.js';
import { NdjsonWriter } from '../../src/engines/transport/ndjson.js';
import { isAseError } from '../../src/errors.js';

type Json = Record<string, any>;

function setup(tools: HostTool<never>[]) {
  const stream = new PassThrough();
  const written: Json[] = [];
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      written.push(JSON.parse(buf.slice(0, nl)) as Json);
      buf = buf.slice(nl + 1);
    }
  });
  const toolbox = new HostToolbox(tools, { sessionId: 's' });
  const calls = toolbox.calls();
  const client = new ControlClient({ writer: new NdjsonWriter(stream), onMcpMessage: (server, message, signal) => answerClaudeMcp(calls, server, message, signal) });
  const mcp = (id: string, message: unknown, server = 'host') => client.handle({ type: 'control_request', request_id: id, request: { subtype: 'mcp_message', server_name: server, message } });
  return { client, written, mcp, calls, toolbox };
}

const add = defineTool({ name: 'add', description: 'adds', inputSchema: z.object({ a: z.number(), b: z.number() }), handler: ({ a, b }) => `sum=${a + b}` });

describe('claude host tools', () => {
  it('answers mcp_message while our own initialize is still pending', async () => {
    const { client, written, mcp } = setup([add as HostTool<never>]);
    const init = client.request('initialize', {});
    expect(mcp('c1', { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } })).toBe(true);
    expect(mcp('c2', { jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(true);
    expect(mcp('c3', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(true);
    expect(mcp('c4', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 }, _meta: { 'claudecode/toolUseId': 'toolu_1' } } })).toBe(true);
    await expect.poll(() => written.filter((w) => w.type === 'control_response').length).toBe(4);
    const byId = Object.fromEntries(written.filter((w) => w.type === 'control_response').map((w) => [w.response.request_id, w.response]));
    expect(byId['c1']).toMatchObject({ subtype: 'success', response: { mcp_response: { id: 0, result: { protocolVersion: '2025-11-25' } } } });
    // A notification still gets an answer (the CLI waits for one).
    expect(byId['c2']).toMatchObject({ subtype: 'success', response: { mcp_response: { jsonrpc: '2.0', result: {} } } });
    expect(byId['c3'].response.mcp_response.result.tools).toEqual([
      { name: 'add', description: 'adds', inputSchema: expect.objectContaining({ type: 'object' }), _meta: { 'anthropic/alwaysLoad': true } },
    ]);
    expect(byId['c4'].response.mcp_response).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'sum=5' }] } });
    // Our initialize is answered afterwards, as the CLI does.
    const initId = written.find((w) => w.type === 'control_request')!.request_id;
    client.handle({ type: 'control_response', response: { subtype: 'success', request_id: initId, response: {} } });
    await expect(init).resolves.toEqual({});
  });

  it('a cancelled call aborts the handler and is never answered; another server and garbage get errors', async () => {
    let signal: AbortSignal | undefined;
    const { client, written, mcp, calls } = setup([
      defineTool({ name: 'hang', description: 'hangs', inputSchema: { type: 'object' }, handler: (_a, ctx) => ((signal = ctx.signal), new Promise(() => undefined)) }) as HostTool<never>,
    ]);
    mcp('h1', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'hang', arguments: {} } });
    await expect.poll(() => calls.running).toBe(1);
    client.handle({ type: 'control_cancel_request', request_id: 'h1' });
    expect(signal?.aborted).toBe(true);
    mcp('x1', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'other');
    mcp('x2', 'not json-rpc');
    await expect.poll(() => written.length).toBe(2);
    await new Promise((r) => setTimeout(r, 20));
    expect(written.map((w) => w.response.request_id).sort()).toEqual(['x1', 'x2']);
    expect(written.find((w) => w.response.request_id === 'x1')!.response).toMatchObject({ subtype: 'error', error: 'no in-process MCP server "other" in this host' });
    expect(written.find((w) => w.response.request_id === 'x2')!.response).toMatchObject({ subtype: 'success' });
  });

  it('adds the sdk server and the trusted tools to the command line; refuses a user server named host', () => {
    const toolbox = new HostToolbox([add as HostTool<never>, { ...add, name: 'deploy', requiresPermission: true } as HostTool<never>], { sessionId: 's' });
    const args = claudeOptionArgs(withHostTools({ allowedTools: ['Edit'], mcpServers: { docs: { type: 'http', url: 'http://x' } } }, toolbox));
    expect(args[args.indexOf('--allowedTools') + 1]).toBe('Edit,mcp__host__add');
    expect(JSON.parse(args[args.indexOf('--mcp-config') + 1]!)).toEqual({ mcpServers: { docs: { type: 'http', url: 'http://x' }, host: { type: 'sdk', name: 'host' } } });
    expect(claudeOptionArgs(withHostTools({}, undefined))).toEqual([]);
    let thrown: unknown;
    try {
      withHostTools({ mcpServers: { host: { command: 'x' } } }, toolbox);
    } catch (error) {
      thrown = error;
    }
    expect(isAseError(thrown, 'INVALID_OPTIONS')).toBe(true);
  });
});
