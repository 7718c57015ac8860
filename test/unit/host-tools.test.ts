/**
 * The host-tools core (src/engines/core/host-tools.ts, host-tools-mcp.ts) every engine uses:
 * checking a tools list, validating input before the handler runs (JSON Schema via ajv, zod via
 * zod), turning every failure into an error result, aborting running handlers, the MCP answers,
 * and createSession refusing bad tools with nothing created.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerMcpMessage } from '../../src/engines/core/host-tools-mcp.js';
import { defineTool, displayToolName, HostToolbox, hostToolName, type HostTool } from '../../src/engines/core/host-tools.js';
import { createSession } from '../../src/session/create-session.js';
import { FileStore } from '../../src/effects/store/file-store.js';
import { isAseError } from '../../src/errors.js';
import { FAKE_CAPABILITIES, fakeEngine } from '../../src/engines/fake/index.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { MemoryStore } from '../../src/effects/store/memory-store.js';
import type { AgentEvent } from '../../src/events/agent-event.js';

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
  handler: ({ a, b }) => `sum=${a + b}`,
});

const toolbox = (tools: HostTool<never>[]) => new HostToolbox(tools, { sessionId: 's1' });

describe('HostToolbox: the tools list', () => {
  it('lists each tool with a JSON Schema (zod converted to draft-07)', () => {
    const greet = defineTool({ name: 'greet', description: 'Greets', inputSchema: z.object({ who: z.string(), loud: z.boolean().default(false) }), handler: ({ who, loud }) => (loud ? `HI ${who}` : `hi ${who}`) });
    const box = toolbox([add as HostTool<never>, greet as HostTool<never>]);
    expect(box.specs.map((s) => s.name)).toEqual(['add', 'greet']);
    const schema = box.spec('greet')!.inputSchema;
    expect(schema['type']).toBe('object');
    expect(schema['$schema']).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema['properties']).toMatchObject({ who: { type: 'string' } });
    expect(box.spec('add')!.requiresPermission).toBe(false);
  });

  it.each([
    ['not an array', {}, /must be an array/],
    ['a bad name', [{ ...add, name: 'mcp host' }], /tools\[0\]\.name: must be 1-48 letters/],
    ['a name too long', [{ ...add, name: 'x'.repeat(49) }], /tools\[0\]\.name/],
    ['duplicate names', [add, { ...add }], /tools\[1\]\.name: "add" is given twice/],
    ['a handler that is no function', [{ ...add, handler: 'nope' }], /tools\[0\]\.handler: must be a function, got string/],
    ['no description', [{ ...add, description: undefined }], /tools\[0\]\.description: must be a string/],
    ['a schema that is not an object schema', [{ ...add, inputSchema: { type: 'string' } }], /tools\[0\]\.inputSchema: must have type "object"/],
    ['a broken JSON Schema', [{ ...add, inputSchema: { type: 'object', properties: { a: { type: 'numbr' } } } }], /tools\[0\]\.inputSchema: is not a valid JSON Schema/],
    ['a zod schema of a non-object', [{ ...add, inputSchema: z.string() }], /must describe an object/],
    ['requiresPermission not a boolean', [{ ...add, requiresPermission: 'yes' }], /requiresPermission: must be a boolean/],
  ])('refuses %s with INVALID_OPTIONS naming it', (_what, tools, message) => {
    let thrown: unknown;
    try {
      new HostToolbox(tools, { sessionId: 's1' });
    } catch (error) {
      thrown = error;
    }
    expect(isAseError(thrown, 'INVALID_OPTIONS')).toBe(true);
    expect((thrown as Error).message).toMatch(message);
  });

  it('names every problem at once', () => {
    const problems = HostToolbox.problems([{ ...add, name: '' }, { ...add, handler: 1 }]);
    expect(problems.map((p) => p.path)).toEqual([
      [0, 'name'],
      [1, 'handler'],
    ]);
  });
});

describe('HostToolCalls: one call', () => {
  it('runs the handler with the checked input and the context', async () => {
    let seen: unknown;
    const box = toolbox([
      defineTool({
        name: 'echo',
        description: 'echo',
        inputSchema: z.object({ text: z.string(), times: z.number().int().default(1) }),
        handler: (args, ctx) => {
          seen = { args, sessionId: ctx.sessionId, callId: ctx.callId, aborted: ctx.signal.aborted };
          return { content: [{ type: 'text', text: args.text.repeat(args.times) }] };
        },
      }) as HostTool<never>,
    ]);
    const result = await box.calls().call('echo', { text: 'ab' }, { callId: 'toolu_1' });
    expect(result).toEqual({ content: [{ type: 'text', text: 'ab' }], isError: false });
    // zod's output: the default was applied.
    expect(seen).toEqual({ args: { text: 'ab', times: 1 }, sessionId: 's1', callId: 'toolu_1', aborted: false });
  });

  it('refuses invalid input before the handler runs (JSON Schema and zod)', async () => {
    let ran = 0;
    const box = toolbox([
      { ...add, handler: () => ++ran } as HostTool<never>,
      defineTool({ name: 'z', description: 'z', inputSchema: z.object({ n: z.number().max(3) }), handler: () => ++ran }) as HostTool<never>,
    ]);
    const calls = box.calls();
    const bad = await calls.call('add', { a: 'two', b: 3, c: 1 }, { callId: 'c1' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]).toMatchObject({ type: 'text' });
    expect((bad.content[0] as { text: string }).text).toMatch(/^invalid input for host tool "add": .*must NOT have additional properties \("c"\).*a: must be number/);
    const missing = await calls.call('add', undefined, { callId: 'c2' });
    expect((missing.content[0] as { text: string }).text).toMatch(/must have required property 'a'/);
    const zbad = await calls.call('z', { n: 9 }, { callId: 'c3' });
    expect((zbad.content[0] as { text: string }).text).toMatch(/invalid input for host tool "z": n: /);
    expect(ran).toBe(0);
  });

  it('turns a thrown handler, an unknown tool and an unusable result into error results', async () => {
    const box = toolbox([
      { ...add, name: 'boom', handler: () => Promise.reject(new Error('kaboom')) } as HostTool<never>,
      { ...add, name: 'sync', handler: () => { throw new TypeError('sync kaboom'); } } as HostTool<never>,
      { ...add, name: 'badresult', handler: () => ({ content: [{ type: 'video' }] }) } as HostTool<never>,
      { ...add, name: 'cyclic', handler: () => { const o: Record<string, unknown> = {}; o['o'] = o; return o; } } as HostTool<never>,
      { ...add, name: 'json', handler: () => ({ ok: 1 }) } as HostTool<never>,
      { ...add, name: 'nothing', handler: () => undefined } as HostTool<never>,
      { ...add, name: 'flagged', handler: () => ({ content: [{ type: 'text', text: 'no such ticket' }], isError: true }) } as HostTool<never>,
    ]);
    const calls = box.calls();
    const args = { a: 1, b: 2 };
    const text = async (name: string) => {
      const r = await calls.call(name, args, { callId: name });
      return { isError: r.isError, text: r.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
    };
    expect(await text('boom')).toEqual({ isError: true, text: 'host tool "boom" failed: kaboom' });
    expect(await text('sync')).toEqual({ isError: true, text: 'host tool "sync" failed: sync kaboom' });
    expect((await text('badresult')).text).toMatch(/returned an invalid result: content\[0\]/);
    expect(await text('cyclic')).toMatchObject({ isError: true });
    expect(await text('json')).toEqual({ isError: false, text: '{"ok":1}' });
    expect(await text('nothing')).toEqual({ isError: false, text: '' });
    expect(await text('flagged')).toEqual({ isError: true, text: 'no such ticket' });
    expect(await text('nope')).toEqual({ isError: true, text: expect.stringMatching(/unknown host tool "nope" \(known: boom, sync/) });
  });

  it('abortAll aborts the running handler and answers its call at once', async () => {
    let signal: AbortSignal | undefined;
    const box = toolbox([{ ...add, name: 'slow', handler: (_a: unknown, ctx: { signal: AbortSignal }) => { signal = ctx.signal; return new Promise(() => undefined); } } as HostTool<never>]);
    const calls = box.calls();
    const pending = calls.call('slow', { a: 1, b: 1 }, { callId: 'c' });
    await expect.poll(() => calls.running).toBe(1);
    calls.abortAll('the turn was aborted');
    const result = await pending;
    expect(signal?.aborted).toBe(true);
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'host tool "slow" was aborted: the turn was aborted' }] });
    expect(calls.running).toBe(0);
    // Later calls still run after abortAll; after close they are refused.
    expect((await calls.call('slow', {}, { callId: 'd', signal: AbortSignal.abort() })).isError).toBe(true);
    calls.close('the engine stopped');
    expect((await calls.call('slow', { a: 1, b: 1 }, { callId: 'e' })).content[0]).toEqual({ type: 'text', text: 'host tool "slow" was not run: the engine stopped' });
  });

  it("a call's own signal aborts only that call; another toolbox's calls are untouched", async () => {
    const signals: AbortSignal[] = [];
    const box = toolbox([{ ...add, name: 'slow', handler: (_a: unknown, ctx: { signal: AbortSignal }) => { signals.push(ctx.signal); return new Promise(() => undefined); } } as HostTool<never>]);
    const one = box.calls();
    const two = box.calls();
    const cancel = new AbortController();
    const first = one.call('slow', { a: 1, b: 1 }, { callId: 'a', signal: cancel.signal });
    void two.call('slow', { a: 1, b: 1 }, { callId: 'b' });
    await expect.poll(() => signals.length).toBe(2);
    cancel.abort();
    expect((await first).isError).toBe(true);
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    two.close('done');
    expect(signals[1]!.aborted).toBe(true);
  });
});

describe('host tool names and the MCP answers', () => {
  const box = toolbox([add as HostTool<never>]);
  it('strips the MCP prefixes of host tools only', () => {
    expect(hostToolName('mcp__host__add', box)).toBe('add');
    expect(hostToolName('mcp_host_add', box)).toBe('add');
    expect(hostToolName('mcp__host__nope', box)).toBeUndefined();
    expect(displayToolName('mcp__other__add', box)).toBe('mcp__other__add');
    expect(displayToolName('Bash', box)).toBe('Bash');
    expect(displayToolName('mcp__host__add', undefined)).toBe('mcp__host__add');
  });

  it('answers initialize, tools/list (alwaysLoad), tools/call, notifications and unknown methods', async () => {
    const calls = box.calls();
    expect(await answerMcpMessage(calls, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } })).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} } } });
    expect(await answerMcpMessage(calls, { jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined();
    const list = await answerMcpMessage(calls, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list).toMatchObject({ result: { tools: [{ name: 'add', _meta: { 'anthropic/alwaysLoad': true } }] } });
    const call = await answerMcpMessage(calls, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 }, _meta: { 'claudecode/toolUseId': 'toolu_x' } } });
    expect(call).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'sum=5' }] } });
    const failed = await answerMcpMessage(calls, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: {} } });
    expect(failed).toMatchObject({ result: { isError: true } });
    expect(await answerMcpMessage(calls, { jsonrpc: '2.0', id: 4, method: 'resources/list' })).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found: resources/list' } });
    expect(await answerMcpMessage(calls, 'garbage')).toBeUndefined();
  });
});

describe('createSession({tools})', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('refuses bad tools with INVALID_OPTIONS and creates nothing', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-host-tools-'));
    const store = new FileStore({ dir: path.join(dir, 'sessions') });
    const attempt = createSession({ agent: 'fake', workDir: dir, dataDir: dir, store, sessionId: 'x', tools: [add, { ...add }] as never });
    await expect(attempt).rejects.toSatisfy((e: unknown) => isAseError(e, 'INVALID_OPTIONS') && /tools\.1\.name: "add" is given twice/.test((e as Error).message));
    expect(await store.list()).toEqual([]);
  });

  it('refuses tools on an engine that cannot offer them (UNSUPPORTED), creating nothing', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-host-tools-'));
    const store = new FileStore({ dir: path.join(dir, 'sessions') });
    const noTools = { ...fakeEngine(), name: 'no-tools', capabilities: { ...FAKE_CAPABILITIES, hostTools: false } };
    await expect(createSession({ agent: 'no-tools', engines: [noTools], workDir: dir, dataDir: dir, store, sessionId: 'y', tools: [add as HostTool<never>] })).rejects.toSatisfy((e: unknown) =>
      isAseError(e, 'UNSUPPORTED'),
    );
    expect(await store.list()).toEqual([]);
  });

  it('through a session: the call and its result are events and transcript entries; stop aborts a running handler', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-host-tools-'));
    let signal: AbortSignal | undefined;
    const tools = [
      add as HostTool<never>,
      defineTool({ name: 'hang', description: 'never answers', inputSchema: z.object({}), handler: (_a, ctx) => ((signal = ctx.signal), new Promise(() => undefined)) }) as HostTool<never>,
    ];
    const script = { turns: [[{ callTool: { name: 'add', input: { a: 1, b: 2 }, callId: 'call-1' } }, { text: 'done' }], [{ callTool: { name: 'hang', input: {} } }]] };
    const journal = new MemoryJournal();
    const session = await createSession({ agent: 'fake', engines: [fakeEngine(script)], workDir: dir, dataDir: dir, store: new MemoryStore(), journal, tools });
    const events: AgentEvent[] = [];
    session.on('agent', (n) => events.push(n.event));
    const turn = await session.run('go');
    expect(turn.text).toBe('done');
    expect(events.filter((e) => e.type === 'tool_call' || e.type === 'tool_result')).toMatchObject([
      { type: 'tool_call', callId: 'call-1', toolName: 'add', input: { a: 1, b: 2 } },
      { type: 'tool_result', callId: 'call-1', status: 'completed', isError: false, output: [{ type: 'text', text: 'sum=3' }] },
    ]);
    const transcript = JSON.stringify(await journal.read(session.id));
    expect(transcript).toContain('sum=3');
    await session.send('hang');
    await expect.poll(() => signal).toBeDefined();
    await session.stop();
    expect(signal!.aborted).toBe(true);
  });

  it('tools are not stored: a session continued without them has none; passed again, they work', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-host-tools-'));
    const script = { turns: [[{ callTool: { name: 'add', input: { a: 2, b: 2 }, callId: 'c' } }]] };
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const open = async (tools?: HostTool<never>[]) => {
      const session = await createSession({ agent: 'fake', engines: [fakeEngine(script)], workDir: dir!, dataDir: dir!, store, journal, sessionId: 'kept', ...(tools && { tools }) });
      const results: AgentEvent[] = [];
      session.on('agent', (n) => n.event.type === 'tool_result' && results.push(n.event));
      await session.run('go');
      await session.stop();
      return results;
    };
    expect(await open([add as HostTool<never>])).toMatchObject([{ status: 'completed', output: [{ type: 'text', text: 'sum=4' }] }]);
    expect(JSON.stringify(await store.load('kept'))).not.toContain('handler');
    expect(await open()).toMatchObject([{ status: 'failed', isError: true, output: [{ type: 'text', text: 'this session has no host tools' }] }]);
    expect(await open([add as HostTool<never>])).toMatchObject([{ status: 'completed' }]);
  });
});
