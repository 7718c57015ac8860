import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/effects/clock.js';
import type { EngineContext, EngineStartSpec } from '../../src/engines/core/engine.js';
import { FakeEngine, fakeEngine, FakeScriptSchema, type FakeScript } from '../../src/engines/fake/index.js';
import { defaultRegistry } from '../../src/engines/default-registry.js';
import { EngineRegistry } from '../../src/engines/core/registry.js';
import { isAseError } from '../../src/errors.js';
import { AgentEventSchema, type AgentEvent, type AgentEventBody } from '../../src/events/agent-event.js';

const GEN = 3;
const T0 = 1_000;
/** Every event any engine in this file emitted, checked against the schema after each test. */
let emitted: AgentEvent[] = [];

afterEach(() => {
  for (const event of emitted) {
    expect(AgentEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(event.gen).toBe(GEN);
  }
  emitted = [];
});

function setup(script: FakeScript = {}, spec: Partial<EngineStartSpec> = {}) {
  const clock = new SimulatedClock(T0);
  const context: EngineContext = {
    now: () => clock.now(),
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
  const engine = new FakeEngine(context, script);
  const events: AgentEvent[] = [];
  engine.onEvent((event) => {
    events.push(event);
    emitted.push(event);
  });
  const start = () => engine.start({ gen: GEN, mode: 'remote', workDir: os.tmpdir(), options: {}, ...spec });
  const types = () => events.map((e) => e.type);
  /** Starts, lets `ready` through and forgets the start events. */
  const started = async () => {
    await start();
    clock.advance(script.startDelayMs ?? 0);
    events.length = 0;
  };
  return { clock, engine, events, types, start, started };
}

const msg = (text: string, localId = text) => ({ localId, text });
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function textOf(events: AgentEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === 'message' ? e.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : [],
  );
}

describe('FakeEngine start', () => {
  it('emits session_identified then ready after startDelayMs, stamped with gen and clock time', async () => {
    const { clock, events, start } = setup({ startDelayMs: 100 });
    await start();
    clock.advance(99);
    expect(events).toEqual([]);
    clock.advance(1);
    expect(events.map((e) => [e.type, e.gen, e.at])).toEqual([
      ['session_identified', GEN, T0 + 100],
      ['ready', GEN, T0 + 100],
    ]);
    const identified = events[0];
    expect(identified?.type === 'session_identified' && identified.resumeToken).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports the resume token it was started with, unless the script forces another (a fork)', async () => {
    const resumed = setup({}, { resumeToken: 'tok-1' });
    await resumed.start();
    resumed.clock.advance(0);
    expect(resumed.events[0]).toMatchObject({ type: 'session_identified', resumeToken: 'tok-1' });

    const forked = setup({ resumeToken: 'tok-2' }, { resumeToken: 'tok-1' });
    await forked.start();
    forked.clock.advance(0);
    expect(forked.events[0]).toMatchObject({ type: 'session_identified', resumeToken: 'tok-2' });
  });

  it('rejects a second start with INVALID_INPUT', async () => {
    const { start } = setup();
    await start();
    expect(isAseError(await rejection(start()), 'INVALID_INPUT')).toBe(true);
  });

  it('failStart emits a fatal error then exited, and the engine is dead', async () => {
    const { clock, engine, events, types, start } = setup({ failStart: { code: 2, message: 'no binary' } });
    await start();
    clock.advance(0);
    expect(types()).toEqual(['error', 'exited']);
    expect(events[0]).toMatchObject({ kind: 'fatal', message: 'no binary', retryable: false });
    expect(events[1]).toMatchObject({ code: 2, signal: null });
    expect(engine.exitedEmitted).toBe(true);
    expect(isAseError(await rejection(engine.send(msg('hi'))), 'ENGINE_NOT_RUNNING')).toBe(true);
  });

  it('refuses to start in a workDir that does not exist (or is a file), as a real spawn would', async () => {
    for (const [workDir, why] of [['/nonexistent/ase-fake-workdir', 'does not exist'], [import.meta.filename, 'is a file, not a directory']] as const) {
      const { engine, events, start } = setup({}, { workDir });
      const error = await rejection(start());
      expect(error).toMatchObject({ code: 'INVALID_OPTIONS', message: `fake engine: workDir ${workDir} ${why}` });
      expect(events).toEqual([]);
      expect(isAseError(await rejection(engine.send(msg('hi'))), 'ENGINE_NOT_RUNNING')).toBe(true);
    }
  });

  it('rejects calls before start with ENGINE_NOT_RUNNING', async () => {
    const { engine } = setup();
    expect(isAseError(await rejection(engine.send(msg('hi'))), 'ENGINE_NOT_RUNNING')).toBe(true);
    expect(isAseError(await rejection(engine.abort()), 'ENGINE_NOT_RUNNING')).toBe(true);
  });
});

describe('FakeEngine turns', () => {
  it('runs the echo turn by default: thinking, text deltas, message, turn_complete', async () => {
    const { clock, engine, events, types, started } = setup();
    await started();
    await engine.send(msg('hi'));
    expect(events).toEqual([]); // steps run on the clock, never inside send()
    clock.advance(0);
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(types()).toEqual(['thinking', ...deltas.map(() => 'text_delta'), 'message', 'turn_complete']);
    expect(events[0]).toMatchObject({ type: 'thinking', active: true });
    expect(deltas.map((d) => d.text).join('')).toBe('echo: hi');
    const message = events.find((e) => e.type === 'message');
    expect(message).toMatchObject({ role: 'assistant', blocks: [{ type: 'text', text: 'echo: hi' }] });
    expect(deltas.every((d) => message?.type === 'message' && d.messageId === message.id)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(engine.sent).toEqual([msg('hi')]);
  });

  it('queues sends made while a turn runs and repeats the last scripted turn', async () => {
    const { clock, engine, events, started } = setup({
      turns: [[{ text: 'one', afterMs: 100 }], [{ text: 'two', afterMs: 100 }]],
    });
    await started();
    await engine.send(msg('a'));
    await engine.send(msg('b'));
    await engine.send(msg('c'));
    clock.advance(100);
    expect(textOf(events)).toEqual(['one']);
    clock.advance(100);
    expect(textOf(events)).toEqual(['one', 'two']);
    clock.advance(100);
    expect(textOf(events)).toEqual(['one', 'two', 'two']);
    expect(events.filter((e) => e.type === 'turn_complete')).toHaveLength(3);
    expect(engine.sent.map((m) => m.localId)).toEqual(['a', 'b', 'c']);
  });

  it('runs a send made before ready once the engine is ready', async () => {
    const { clock, engine, types, start } = setup({ startDelayMs: 50 });
    await start();
    await engine.send(msg('early'));
    clock.advance(49);
    expect(types()).toEqual([]);
    clock.advance(1);
    expect(types().slice(0, 3)).toEqual(['session_identified', 'ready', 'thinking']);
    expect(types().at(-1)).toBe('turn_complete');
  });

  it('honours afterMs relative to the previous step and explicit complete', async () => {
    const { clock, engine, events, started } = setup({
      turns: [
        [
          { text: 'a', afterMs: 10 },
          { text: 'b', afterMs: 20 },
          { complete: { status: 'failed', stopReason: 'max_tokens', usage: { outputTokens: 99 } }, afterMs: 5 },
        ],
      ],
    });
    await started();
    await engine.send(msg('go'));
    clock.advance(1_000);
    const at = (text: string) => events.find((e) => e.type === 'message' && textOf([e])[0] === text)?.at;
    expect(at('a')).toBe(T0 + 10);
    expect(at('b')).toBe(T0 + 30);
    expect(events.at(-1)).toMatchObject({
      type: 'turn_complete',
      at: T0 + 35,
      status: 'failed',
      stopReason: 'max_tokens',
      usage: { outputTokens: 99, inputTokens: 10 },
    });
  });

  it('delivers events in order to every listener even when one reacts synchronously', async () => {
    const { clock, engine, events, started } = setup({ turns: [[{ text: 'abcdef' }, { text: 'never' }]] });
    await started();
    engine.onEvent((e) => {
      if (e.type === 'text_delta') void engine.abort();
    });
    // Registered after the reacting listener, so it would see the cancel first without queueing.
    const late: AgentEvent[] = [];
    engine.onEvent((e) => late.push(e));
    await engine.send(msg('go'));
    clock.advance(1_000);
    // The abort lands after the first delta: both listeners see the delta, then the cancel.
    for (const seen of [events, late]) {
      expect(seen.map((e) => e.type)).toEqual(['text_delta', 'turn_complete']);
      expect(seen[1]).toMatchObject({ status: 'cancelled' });
    }
  });

  it('a throwing listener does not break the engine or other listeners', async () => {
    const { clock, engine, types, started } = setup();
    await started();
    engine.onEvent(() => {
      throw new Error('boom');
    });
    await engine.send(msg('hi'));
    clock.advance(0);
    expect(types().at(-1)).toBe('turn_complete');
    expect(engine.listenerErrors.length).toBe(types().length);
  });

  it('validates scripted events with AgentEventSchema when emitting them', async () => {
    const bad = { type: 'tool_result', callId: 'c1', status: 'exploded', isError: false } as unknown as AgentEventBody;
    const { clock, engine, events, started } = setup({ turns: [[{ emit: bad }]] });
    await started();
    await engine.send(msg('go'));
    expect(() => clock.advance(0)).toThrow();
    expect(events).toEqual([]);
  });
});

describe('FakeEngine permissions', () => {
  const askTurn: FakeScript = {
    turns: [
      [
        { text: 'let me look' },
        { ask: { requestId: 'r1', toolName: 'Bash', input: { command: 'ls' }, callId: 'c1' } },
        { text: 'done' },
      ],
    ],
  };

  it('waits for the answer, then reports the tool as completed on allow', async () => {
    const { clock, engine, events, started } = setup(askTurn);
    await started();
    await engine.send(msg('go'));
    clock.advance(60_000);
    expect(events.at(-1)).toMatchObject({
      type: 'permission_request',
      requestId: 'r1',
      toolName: 'Bash',
      input: { command: 'ls' },
      callId: 'c1',
    });
    const before = events.length;
    await engine.answerPermission('r1', { behavior: 'allow' });
    clock.advance(0);
    const after = events.slice(before);
    expect(after[0]).toMatchObject({ type: 'tool_result', callId: 'c1', status: 'completed', isError: false });
    expect(textOf(after)).toEqual(['done']);
    expect(after.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(engine.answers).toEqual([{ requestId: 'r1', decision: { behavior: 'allow' } }]);
  });

  it('reports the tool as denied on deny', async () => {
    const { clock, engine, events, started } = setup(askTurn);
    await started();
    await engine.send(msg('go'));
    clock.advance(0);
    const decision = { behavior: 'deny', message: 'nope', interrupt: false } as const;
    await engine.answerPermission('r1', decision);
    clock.advance(0);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      callId: 'c1',
      status: 'denied',
      isError: true,
      output: 'nope',
    });
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(engine.answers).toEqual([{ requestId: 'r1', decision }]);
  });

  it('runs the scripted branch instead of the default, and generates ids when none are given', async () => {
    const { clock, engine, events, started } = setup({
      turns: [[{ ask: { toolName: 'Edit', input: {} }, onAllow: [{ text: 'custom allow' }] }]],
    });
    await started();
    await engine.send(msg('go'));
    clock.advance(0);
    const request = events[0];
    if (request?.type !== 'permission_request') throw new Error('expected a permission_request');
    expect(request.requestId).not.toBe('');
    expect(request.callId).toBeTruthy();
    await engine.answerPermission(request.requestId, { behavior: 'allow' });
    clock.advance(0);
    expect(events.some((e) => e.type === 'tool_result')).toBe(false);
    expect(textOf(events)).toEqual(['custom allow']);
  });

  it('rejects an unknown request id with INVALID_INPUT and records nothing', async () => {
    const { clock, engine, started } = setup(askTurn);
    await started();
    await engine.send(msg('go'));
    clock.advance(0);
    const error = await rejection(engine.answerPermission('nope', { behavior: 'allow' }));
    expect(isAseError(error, 'INVALID_INPUT')).toBe(true);
    expect(engine.answers).toEqual([]);
  });
});

describe('FakeEngine abort and stall', () => {
  it('abort cancels the rest of the turn, even as time advances', async () => {
    const { clock, engine, events, types, started } = setup({
      turns: [[{ text: 'a' }, { text: 'b', afterMs: 100 }, { text: 'c', afterMs: 100 }]],
    });
    await started();
    await engine.send(msg('go'));
    clock.advance(0);
    await engine.abort();
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'cancelled', at: T0 });
    const count = events.length;
    clock.advance(10_000);
    expect(events.length).toBe(count);
    expect(textOf(events)).toEqual(['a']);
    expect(types().filter((t) => t === 'turn_complete')).toHaveLength(1);
    expect(engine.aborts).toBe(1);
    expect(clock.pendingCount).toBe(0);
  });

  it('abort drops the pending ask and then runs the next queued send', async () => {
    const { clock, engine, events, started } = setup({
      turns: [[{ ask: { requestId: 'r1', toolName: 'Bash', input: {} } }], [{ text: 'second' }]],
    });
    await started();
    await engine.send(msg('one'));
    clock.advance(0);
    await engine.send(msg('two'));
    await engine.abort();
    expect(isAseError(await rejection(engine.answerPermission('r1', { behavior: 'allow' })), 'INVALID_INPUT')).toBe(true);
    clock.advance(0);
    expect(textOf(events)).toEqual(['second']);
    expect(events.filter((e) => e.type === 'turn_complete').map((e) => e.type === 'turn_complete' && e.status)).toEqual([
      'cancelled',
      'completed',
    ]);
  });

  it('with ignoreAbort the turn carries on', async () => {
    const { clock, engine, events, started } = setup({
      ignoreAbort: true,
      turns: [[{ text: 'a' }, { text: 'b', afterMs: 100 }]],
    });
    await started();
    await engine.send(msg('go'));
    clock.advance(0);
    await engine.abort();
    clock.advance(100);
    expect(textOf(events)).toEqual(['a', 'b']);
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(engine.aborts).toBe(1);
  });

  it('a stall emits nothing more until aborted', async () => {
    const { clock, engine, events, started } = setup({ turns: [[{ text: 'x' }, { stall: true }, { text: 'never' }]] });
    await started();
    await engine.send(msg('go'));
    clock.advance(1_000_000);
    expect(events.at(-1)?.type).toBe('message');
    expect(events.some((e) => e.type === 'turn_complete')).toBe(false);
    await engine.abort();
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', status: 'cancelled' });
    clock.advance(1_000_000);
    expect(textOf(events)).toEqual(['x']);
  });
});

describe('FakeEngine crash and stop', () => {
  it('a crash emits exited; later calls reject with ENGINE_NOT_RUNNING', async () => {
    const { clock, engine, events, started } = setup({
      turns: [[{ text: 'x' }, { crash: { code: 137, signal: 'SIGSEGV' }, afterMs: 10 }, { text: 'never' }]],
    });
    await started();
    await engine.send(msg('go'));
    clock.advance(1_000);
    expect(events.at(-1)).toMatchObject({ type: 'exited', code: 137, signal: 'SIGSEGV', at: T0 + 10 });
    expect(engine.exitedEmitted).toBe(true);
    for (const call of [
      () => engine.send(msg('again')),
      () => engine.abort(),
      () => engine.answerPermission('r', { behavior: 'allow' }),
    ]) {
      expect(isAseError(await rejection(call()), 'ENGINE_NOT_RUNNING')).toBe(true);
    }
    const count = events.length;
    await engine.stop();
    expect(events.length).toBe(count);
    expect(textOf(events)).toEqual(['x']);
  });

  it('stop emits exited once after stopDelayMs, is idempotent, and nothing follows', async () => {
    const { clock, engine, events, started } = setup({ stopDelayMs: 200, turns: [[{ text: 'late', afterMs: 100 }]] });
    await started();
    await engine.send(msg('go'));
    const first = engine.stop();
    expect(engine.stop()).toBe(first);
    let done = false;
    void first.then(() => (done = true));
    clock.advance(199);
    await flush();
    expect(done).toBe(false);
    expect(events).toEqual([]); // the scripted turn was cancelled by the stop
    clock.advance(1);
    await flush();
    expect(done).toBe(true);
    expect(events).toEqual([{ type: 'exited', gen: GEN, at: T0 + 200, code: 0, signal: null, reason: 'stopped' }]);
    clock.advance(10_000);
    await engine.stop();
    expect(events).toHaveLength(1);
    expect(engine.stopped).toBe(true);
    expect(isAseError(await rejection(engine.send(msg('x'))), 'ENGINE_NOT_RUNNING')).toBe(true);
  });

  it('with ignoreStop the engine is killed after killAfterMs', async () => {
    const { clock, engine, events, started } = setup({ ignoreStop: true, killAfterMs: 300 });
    await started();
    let done = false;
    void engine.stop().then(() => (done = true));
    clock.advance(299);
    await flush();
    expect(done).toBe(false);
    clock.advance(1);
    await flush();
    expect(done).toBe(true);
    expect(events).toEqual([{ type: 'exited', gen: GEN, at: T0 + 300, code: null, signal: 'SIGKILL', reason: 'killed' }]);
  });

  it('ignoreStop kills after 50ms by default', async () => {
    const { clock, engine, events, started } = setup({ ignoreStop: true });
    await started();
    void engine.stop();
    clock.advance(49);
    expect(events).toEqual([]);
    clock.advance(1);
    expect(events.map((e) => e.type)).toEqual(['exited']);
  });
});

describe('FakeEngine manual mode', () => {
  it('emits nothing by itself; inject stamps and emits synchronously', async () => {
    const { clock, engine, events, start } = setup({ manual: true });
    expect(() => engine.inject({ type: 'ready' })).toThrow(); // no generation before start
    await start();
    await engine.send(msg('hi'));
    await engine.abort();
    clock.advance(60_000);
    expect(events).toEqual([]);
    expect(engine.sent).toEqual([msg('hi')]);
    expect(engine.aborts).toBe(1);

    engine.inject({ type: 'ready' });
    expect(events).toEqual([{ type: 'ready', gen: GEN, at: T0 + 60_000 }]);

    engine.inject({ type: 'permission_request', requestId: 'p1', toolName: 'Bash', input: {} });
    await engine.answerPermission('p1', { behavior: 'allow' });
    expect(engine.answers).toEqual([{ requestId: 'p1', decision: { behavior: 'allow' } }]);
    expect(isAseError(await rejection(engine.answerPermission('p1', { behavior: 'allow' })), 'INVALID_INPUT')).toBe(true);
    expect(events).toHaveLength(2); // answering an injected request scripts nothing
  });

  it('an injected exited kills the engine', async () => {
    const { engine, events, start } = setup({ manual: true });
    await start();
    engine.inject({ type: 'exited', code: 1, signal: null });
    expect(engine.exitedEmitted).toBe(true);
    expect(() => engine.inject({ type: 'ready' })).toThrow(/exited/);
    expect(isAseError(await rejection(engine.send(msg('x'))), 'ENGINE_NOT_RUNNING')).toBe(true);
    await engine.stop();
    expect(events.map((e) => e.type)).toEqual(['exited']);
  });

  it('stop resolves without an exit of its own; the test injects exited', async () => {
    const { clock, engine, events, start } = setup({ manual: true });
    await start();
    await engine.stop();
    clock.advance(1_000);
    expect(events).toEqual([]);
    expect(clock.pendingCount).toBe(0);
    engine.inject({ type: 'exited', code: 0, signal: null });
    expect(events.map((e) => e.type)).toEqual(['exited']);
    expect(() => engine.inject({ type: 'ready' })).toThrow(/after exited/);
  });
});

describe('fakeEngine factory and EngineRegistry', () => {
  it('builds fake engines with the fake capabilities', () => {
    const factory = fakeEngine();
    expect(factory.name).toBe('fake');
    expect(factory.capabilities).toMatchObject({ streamingInput: true, localMode: true, transcriptTail: false, cost: true });
    const clock = new SimulatedClock();
    const engine = factory.create({
      now: () => clock.now(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (h) => clock.clearTimeout(h),
    });
    expect(engine).toBeInstanceOf(FakeEngine);
  });

  it('rejects an invalid script with INVALID_OPTIONS', () => {
    let error: unknown;
    try {
      fakeEngine({ turns: [[{ stall: false } as never]] });
    } catch (e) {
      error = e;
    }
    expect(isAseError(error, 'INVALID_OPTIONS')).toBe(true);
  });

  it('the default registry has every built-in engine; an unknown name lists the known ones', () => {
    const registry = defaultRegistry();
    expect(registry.names()).toEqual(['fake', 'claude', 'codex', 'codex-mcp', 'acp', 'codex-exec', 'claude-print']);
    expect(registry.has('fake')).toBe(true);
    expect(registry.has('claude')).toBe(true);
    expect(registry.has('codex-x')).toBe(false);
    expect(registry.get('fake').name).toBe('fake');
    for (const name of ['claude', 'codex', 'codex-mcp', 'acp', 'codex-exec', 'claude-print']) expect(registry.get(name).name).toBe(name);
    let error: unknown;
    try {
      registry.get('nope');
    } catch (e) {
      error = e;
    }
    expect(isAseError(error, 'UNKNOWN_ENGINE')).toBe(true);
    expect((error as Error).message).toContain('nope');
    expect((error as Error).message).toContain('fake');
  });

  it('register replaces a factory with the same name', () => {
    const scripted = fakeEngine({ manual: true });
    const registry = new EngineRegistry().register(fakeEngine()).register(scripted);
    expect(registry.get('fake')).toBe(scripted);
    expect(registry.names()).toEqual(['fake']);
  });
});

describe('FakeScriptSchema', () => {
  it('accepts a script written as JSON', () => {
    const json = `{
      "startDelayMs": 10,
      "turns": [[
        { "emit": { "type": "thinking", "active": true } },
        { "text": "hello", "afterMs": 5 },
        { "ask": { "toolName": "Bash", "input": { "command": "ls" } },
          "onDeny": [{ "complete": { "status": "failed", "usage": { "outputTokens": 3 } } }] },
        { "crash": { "code": 1 } }
      ], [{ "stall": true }]]
    }`;
    const parsed = FakeScriptSchema.parse(JSON.parse(json));
    expect(parsed.turns?.[0]).toHaveLength(4);
    expect(parsed.turns?.[0]?.[2]).toMatchObject({ onDeny: [{ complete: { status: 'failed' } }] });
  });

  it.each([
    ['an unknown event type', { turns: [[{ emit: { type: 'telepathy' } }]] }],
    ['an event missing a field', { turns: [[{ emit: { type: 'thinking' } }]] }],
    ['a step mixing two kinds', { turns: [[{ text: 'a', stall: true }]] }],
    ['a negative delay', { turns: [[{ text: 'a', afterMs: -1 }]] }],
    ['an ask without toolName', { turns: [[{ ask: { input: {} } }]] }],
    ['a bad nested branch', { turns: [[{ ask: { toolName: 'x', input: {} }, onAllow: [{ complete: { status: 'ok' } }] }]] }],
    ['an unknown option', { retries: 3 }],
  ])('rejects %s', (_name, script) => {
    expect(FakeScriptSchema.safeParse(script).success).toBe(false);
  });
});
