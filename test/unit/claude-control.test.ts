import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ControlClient, type PermissionAsk } from '../../src/engines/claude/client.js';
import { AgentError, AseError } from '../../src/errors.js';
import { NdjsonWriter } from '../../src/engines/transport/ndjson.js';

type Json = Record<string, any>;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = join(repoRoot, 'test', 'fixtures', 'claude', 'smoke-multi-turn-tool.jsonl');

/** A ControlClient writing into a PassThrough we read back as parsed lines. */
function setup(opts: { timeoutMs?: number } = {}) {
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
  const asks: PermissionAsk[] = [];
  const cancels: { id: string; ask: PermissionAsk | undefined }[] = [];
  const writer = new NdjsonWriter(stream);
  const client = new ControlClient({
    writer,
    onPermissionRequest: (a) => asks.push(a),
    onCancel: (id, ask) => cancels.push({ id, ask }),
    ...(opts.timeoutMs !== undefined && { defaultTimeoutMs: opts.timeoutMs }),
  });
  const flush = () => new Promise((r) => setImmediate(r));
  return { stream, written, asks, cancels, client, writer, flush };
}

describe('ControlClient', () => {
  it('correlates responses by request_id', async () => {
    const { client, written, flush } = setup();
    const a = client.request('initialize', { hooks: {} });
    const b = client.request('interrupt');
    await flush();
    expect(written.map((w) => w.request.subtype)).toEqual(['initialize', 'interrupt']);
    expect(written[0]!.request.hooks).toEqual({});
    const [ida, idb] = written.map((w) => w.request_id as string);
    expect(ida).not.toBe(idb);
    expect(client.handle({ type: 'control_response', response: { subtype: 'success', request_id: idb, response: { still_queued: [] } } })).toBe(true);
    expect(client.handle({ type: 'control_response', response: { subtype: 'error', request_id: ida, error: 'nope', error_code: 'x' } })).toBe(true);
    await expect(b).resolves.toEqual({ still_queued: [] });
    await expect(a).rejects.toBeInstanceOf(AgentError);
    await expect(a).rejects.toMatchObject({ code: 'AGENT_ERROR', request: 'initialize', upstreamCode: 'x', upstreamMessage: 'nope' });
    // late / unknown response: ignored
    expect(client.handle({ type: 'control_response', response: { subtype: 'success', request_id: 'zzz' } })).toBe(true);
    expect(client.pendingRequests).toBe(0);
  });

  it('times out with a typed error', async () => {
    const { client } = setup();
    const err = await client.request('interrupt', {}, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AseError);
    expect((err as AseError).code).toBe('TIMEOUT');
  });

  it('rejects pending requests with ConnectionClosed on close, and later ones too', async () => {
    const { client } = setup();
    const p = client.request('initialize', {}, { timeoutMs: 10_000 });
    client.close('process exited');
    await expect(p).rejects.toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
    await expect(client.request('interrupt')).rejects.toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
  });

  it('surfaces can_use_tool and answers allow (default: original input) and deny', async () => {
    const { client, written, asks, flush } = setup();
    const req = (id: string) => ({
      type: 'control_request',
      request_id: id,
      request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: `tu-${id}`, permission_suggestions: [{ type: 'setMode' }] },
    });
    client.handle(req('r1'));
    client.handle(req('r2'));
    expect(asks).toEqual([
      { requestId: 'r1', toolName: 'Bash', input: { command: 'ls' }, callId: 'tu-r1', suggestions: [{ type: 'setMode' }] },
      { requestId: 'r2', toolName: 'Bash', input: { command: 'ls' }, callId: 'tu-r2', suggestions: [{ type: 'setMode' }] },
    ]);
    expect(await client.answer('r1', { behavior: 'allow' })).toBe(true);
    expect(await client.answer('r2', { behavior: 'deny', message: 'no', interrupt: true })).toBe(true);
    expect(await client.answer('r2', { behavior: 'allow' })).toBe(false); // already answered
    await flush();
    expect(written).toEqual([
      { type: 'control_response', response: { subtype: 'success', request_id: 'r1', response: { behavior: 'allow', updatedInput: { command: 'ls' } } } },
      { type: 'control_response', response: { subtype: 'success', request_id: 'r2', response: { behavior: 'deny', message: 'no', interrupt: true } } },
    ]);
  });

  it('drops a cancelled can_use_tool without answering it and reports it', async () => {
    const { client, written, cancels, flush } = setup();
    client.handle({ type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', input: {} } });
    expect(client.handle({ type: 'control_cancel_request', request_id: 'r1' })).toBe(true);
    expect(cancels).toEqual([{ id: 'r1', ask: { requestId: 'r1', toolName: 'Bash', input: {} } }]);
    expect(await client.answer('r1', { behavior: 'allow' })).toBe(false);
    await flush();
    expect(written).toEqual([]);
  });

  it('answers every other CLI→host subtype with an error', async () => {
    const { client, written, flush } = setup();
    client.handle({ type: 'control_request', request_id: 'h1', request: { subtype: 'hook_callback', callback_id: 'x' } });
    client.handle({ type: 'control_request', request_id: 'm1', request: { subtype: 'mcp_message' } });
    await flush();
    expect(written).toEqual([
      { type: 'control_response', response: { subtype: 'error', request_id: 'h1', error: 'Unsupported control request subtype: hook_callback' } },
      { type: 'control_response', response: { subtype: 'error', request_id: 'm1', error: 'Unsupported control request subtype: mcp_message' } },
    ]);
  });

  it('ignores non-control traffic', () => {
    const { client } = setup();
    expect(client.handle({ type: 'assistant', message: { id: 'x', content: [] } })).toBe(false);
    expect(client.handle({ type: 'weird' })).toBe(false);
    expect(client.handle('garbage')).toBe(false);
  });

  it('replays the recorded can_use_tool exchange', async () => {
    const entries = readFileSync(fixture, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { dir: string; msg?: Json });
    const cliReq = entries.find((e) => e.dir === 'cli->host' && e.msg?.type === 'control_request')!.msg!;
    const hostAnswer = entries.find((e) => e.dir === 'host->cli' && e.msg?.type === 'control_response')!.msg!;
    const { client, written, asks, flush } = setup();
    expect(client.handle(cliReq)).toBe(true);
    expect(asks).toHaveLength(1);
    expect(asks[0]).toMatchObject({ requestId: cliReq.request_id, toolName: 'Bash', callId: cliReq.request.tool_use_id });
    expect(asks[0]!.suggestions).toHaveLength(3);
    await client.answer(asks[0]!.requestId, { behavior: 'allow', updatedInput: hostAnswer.response.response.updatedInput });
    await flush();
    expect(written).toEqual([hostAnswer]);
  });
});
