/**
 * agentStream: the ACP agent's stdio read by our own splitter and handed to the SDK as its
 * `Stream`. What a hostile or broken agent writes is refused as the SDK's own reader refused it
 * (JSON-RPC errors with `id: null`), the observer sees everything in wire order, and only what
 * it does not keep reaches the SDK.
 */
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AnyMessage } from '@agentclientprotocol/sdk';
import { agentStream } from '../../src/engines/acp/agent-stream.js';
import { loadAcpSdk } from '../../src/engines/acp/sdk.js';

type Json = Record<string, unknown>;

function harness(options: { maxMessageBytes?: number } = {}) {
  const stdout = new PassThrough();
  const stdin = new PassThrough();
  const seen: Json[] = [];
  const invalid: string[] = [];
  const written: Json[] = [];
  let buffered = '';
  stdin.setEncoding('utf8');
  stdin.on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      written.push(JSON.parse(buffered.slice(0, nl)) as Json);
      buffered = buffered.slice(nl + 1);
    }
  });
  const stream = agentStream(
    stdout,
    stdin,
    {
      inbound: (message) => {
        seen.push(message);
        return message['method'] === 'session/update';
      },
      outbound: () => undefined,
      invalid: (reason) => invalid.push(reason),
      observerFailed: (error) => {
        throw error;
      },
    },
    options,
  );
  const reader = stream.readable.getReader();
  /** Everything handed to the SDK until the readable closes (or errors). */
  const toSdk = async (): Promise<{ messages: AnyMessage[]; error?: unknown }> => {
    const messages: AnyMessage[] = [];
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { messages };
        messages.push(value);
      }
    } catch (error) {
      return { messages, error };
    }
  };
  const waitWritten = async (n: number): Promise<Json[]> => {
    for (let i = 0; i < 200 && written.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    return written;
  };
  return { stdout, stream, seen, invalid, toSdk, waitWritten };
}

describe('acp agentStream', () => {
  beforeAll(() => loadAcpSdk()); // an engine's start() loads it (sdk.ts); these tests build the stream alone
  it('refuses garbage, batches and non-objects with JSON-RPC errors (id null), and reads on', async () => {
    const h = harness();
    h.stdout.write('not json at all\n');
    h.stdout.write('[{"jsonrpc":"2.0","method":"x"}]\n');
    h.stdout.write('42\n');
    h.stdout.write('   \n');
    h.stdout.write('{"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n');
    h.stdout.end();
    const { messages, error } = await h.toSdk();
    expect(error).toBeUndefined();
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 7, result: { ok: true } }]);
    expect(h.invalid).toEqual(['not JSON', 'a JSON-RPC batch (ACP has none)', 'not a JSON-RPC object']);
    const answers = await h.waitWritten(3);
    expect(answers.map((a) => [a['id'], (a['error'] as { code: number }).code])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
    ]);
  });

  it('the observer sees every message in wire order; what it keeps never reaches the SDK', async () => {
    const h = harness();
    const update = (text: string) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
    // One chunk with several messages, a line split across chunks, and a last line without '\n'.
    const lines = [update('a'), { jsonrpc: '2.0', id: 1, method: 'session/request_permission', params: {} }, update('b'), { jsonrpc: '2.0', id: 2, result: {} }].map((m) => JSON.stringify(m));
    const all = lines.join('\n');
    h.stdout.write(all.slice(0, 50));
    h.stdout.write(all.slice(50));
    h.stdout.end();
    const { messages } = await h.toSdk();
    expect(h.seen.map((m) => m['method'] ?? `response ${String(m['id'])}`)).toEqual(['session/update', 'session/request_permission', 'session/update', 'response 2']);
    expect(messages.map((m) => ('method' in m ? m.method : `response ${String(m.id)}`))).toEqual(['session/request_permission', 'response 2']);
  });

  it('a line over the limit errors the stream (the connection closes), and nothing after it is read', async () => {
    const h = harness({ maxMessageBytes: 64 });
    h.stdout.write(`{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"x","params":"${'y'.repeat(100)}"}\n{"jsonrpc":"2.0","id":2,"result":{}}\n`);
    const { messages, error } = await h.toSdk();
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(error).toMatchObject({ code: 'LINE_TOO_LONG' });
    expect(h.stdout.destroyed).toBe(true);
  });
});
