/**
 * The JSON-RPC peer of the transport layer (both Codex engines use it), without any process: requests both ways with id
 * correlation, timeouts, errors, notifications, answers to every server request (unknown methods
 * get -32601), forgetting, closing; plus a fast-check property that responses in any order reach
 * the right callers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonRpcPeer, rpcError, type InvalidMessage } from '../../src/engines/transport/json-rpc.js';
import { rejection } from '../support/async.js';

function setup(options: { jsonrpcField?: boolean; defaultTimeoutMs?: number } = {}) {
  const written: Record<string, unknown>[] = [];
  const notifications: [string, unknown][] = [];
  const invalid: InvalidMessage[] = [];
  let failWrites = false;
  const peer = new JsonRpcPeer({
    writer: {
      write: async (value) => {
        if (failWrites) throw new Error('stdin gone');
        written.push(value as Record<string, unknown>);
      },
    },
    ...options,
    onNotification: (method, params) => notifications.push([method, params]),
    onInvalid: (i) => invalid.push(i),
  });
  return { peer, written, notifications, invalid, breakWrites: () => (failWrites = true) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('JsonRpcPeer', () => {
  it('correlates responses with requests by id, in any order', async () => {
    const { peer, written } = setup();
    const a = peer.request('a', { x: 1 });
    const b = peer.request('b');
    await tick();
    expect(written).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'a', params: { x: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'b' },
    ]);
    peer.receive({ jsonrpc: '2.0', id: 2, result: 'B' });
    peer.receive({ id: 1, result: { ok: true } });
    await expect(a).resolves.toEqual({ ok: true });
    await expect(b).resolves.toBe('B');
    expect(peer.pendingCount).toBe(0);
  });

  it('omits the jsonrpc member when asked (app-server dialect)', async () => {
    const { peer, written } = setup({ jsonrpcField: false });
    void peer.request('initialize', {});
    await peer.notify('initialized');
    expect(written).toEqual([{ id: 1, method: 'initialize', params: {} }, { method: 'initialized' }]);
  });

  it('rejects with the remote error, a timeout, an abort, or a closed connection', async () => {
    const { peer } = setup({ defaultTimeoutMs: 20 });
    const failing = peer.request('thread/resume');
    peer.receive({ id: 1, error: { code: -32600, message: 'no rollout found', data: { x: 1 } } });
    expect(await rejection(failing)).toMatchObject({ name: 'AgentError', code: 'AGENT_ERROR', request: 'thread/resume', upstreamCode: -32600, upstreamMessage: 'no rollout found', data: { x: 1 }, message: expect.stringContaining('no rollout found') });
    expect(await rejection(peer.request('slow'))).toMatchObject({ name: 'AseError', code: 'TIMEOUT' });
    const controller = new AbortController();
    const aborted = peer.request('x', undefined, { signal: controller.signal, timeoutMs: 0 });
    controller.abort();
    expect(await rejection(aborted)).toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED' });
    const open = peer.request('y', undefined, { timeoutMs: 0 });
    peer.close('process exited');
    expect(await rejection(open)).toMatchObject({ name: 'AseError', code: 'CONNECTION_CLOSED', message: 'process exited' });
    expect(await rejection(peer.request('after-close'))).toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(await rejection(peer.notify('n'))).toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(peer.pendingCount).toBe(0);
  });

  it('reports a late response (after a timeout or forget) as invalid instead of resolving anything', async () => {
    const { peer, invalid } = setup();
    const call = peer.start('tools/call', {}, { timeoutMs: 0 });
    expect(peer.forget(call.id, 'cancelled')).toBe(true);
    expect(await rejection(call.result)).toMatchObject({ message: 'cancelled' });
    peer.receive({ id: call.id, result: {} });
    expect(invalid.map((i) => i.reason)).toEqual([`response to an unknown request id ${call.id}`]);
    expect(peer.forget(call.id, 'again')).toBe(false);
  });

  it('answers every request from the remote: handler result, handler error, or method-not-found', async () => {
    const { peer, written } = setup();
    let release!: (v: unknown) => void;
    peer.handle('elicitation/create', () => new Promise((r) => (release = r)));
    peer.handle('broken', () => {
      throw rpcError(-32602, 'bad params', { field: 'x' });
    });
    peer.handle('crashes', () => {
      throw new Error('boom');
    });
    peer.receive({ jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: {} });
    peer.receive({ id: 'abc', method: 'item/tool/requestUserInput', params: {} });
    peer.receive({ id: 5, method: 'broken' });
    peer.receive({ id: 6, method: 'crashes' });
    await tick();
    expect(written).toEqual([
      { jsonrpc: '2.0', id: 'abc', error: { code: -32601, message: 'Method not supported by this client: item/tool/requestUserInput' } },
      { jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'bad params', data: { field: 'x' } } },
      { jsonrpc: '2.0', id: 6, error: { code: -32603, message: 'boom' } },
    ]);
    release({ decision: 'approved' });
    await tick();
    expect(written.at(-1)).toEqual({ jsonrpc: '2.0', id: 0, result: { decision: 'approved' } });
  });

  it('passes notifications on and reports malformed messages without throwing', () => {
    const { peer, notifications, invalid } = setup();
    peer.receive({ method: 'codex/event', params: { msg: { type: 'x' } } });
    peer.receive({ method: 'initialized', id: null });
    peer.receive([1, 2]);
    peer.receive('text');
    peer.receive({ id: { bad: true }, method: 'm' });
    peer.receive({ something: 'else' });
    expect(notifications).toEqual([
      ['codex/event', { msg: { type: 'x' } }],
      ['initialized', undefined],
    ]);
    expect(invalid.map((i) => i.reason)).toEqual(['not a JSON-RPC object', 'not a JSON-RPC object', 'request with an invalid id', 'neither request, notification nor response']);
  });

  it('rejects a request whose write fails', async () => {
    const { peer, breakWrites } = setup();
    breakWrites();
    expect(await rejection(peer.request('x'))).toMatchObject({ message: 'stdin gone' });
    expect(peer.pendingCount).toBe(0);
  });

  it('property: any interleaving of responses resolves each caller with its own result', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 20 }), fc.infiniteStream(fc.nat()), async (results, picks) => {
        const { peer } = setup();
        const calls = results.map((_, i) => peer.start(`m${i}`, undefined, { timeoutMs: 0 }));
        const order = calls.map((_, i) => i);
        const it = picks[Symbol.iterator]();
        for (let i = order.length - 1; i > 0; i--) {
          const j = it.next().value! % (i + 1);
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        for (const i of order) peer.receive({ id: calls[i]!.id, result: results[i] });
        const got = await Promise.all(calls.map((c) => c.result));
        // JSON round trip: what would have come over the wire (undefined never does).
        expect(got).toEqual(results);
        expect(peer.pendingCount).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
