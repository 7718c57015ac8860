/**
 * Per-turn streams and the inline permission policy, on the session with the scripted fake engine:
 * - `runStreamed()` yields exactly its turn's AgentEvents (none of the turn before or after, even
 *   when two runs are queued), ends with the turn, and its `result` equals what `run()` gives;
 *   `run({onEvent})` gets the same events; an aborted run makes the stream throw ABORTED;
 * - `canUseTool` answers through the ledger: allow with an updated input, deny with a message, a
 *   throwing policy denies with the error's message, a remote `decide()` first wins (the policy's
 *   signal aborts and its late answer changes nothing), a run's own policy wins for its turn only,
 *   and a prompt re-sent to a client that comes back is not asked twice.
 */
import { describe, expect, it } from 'vitest';
import { createSession, fakeEngine, MemoryJournal, MemoryStore, type AgentEvent, type CanUseTool, type FakeEngine, type FakeScript, type SessionOptions } from '../../src/index.js';
import { capturing } from '../support/capturing-factory.js';

function ask(requestId: string, then: string): FakeScript['turns'] extends (infer T)[] | undefined ? T : never {
  return [
    { text: `asking ${requestId}` },
    {
      ask: { requestId, toolName: 'Bash', input: { command: 'ls' }, callId: `call-${requestId}` },
      onAllow: [{ text: `${then} allowed` }, { complete: {} }],
      onDeny: [{ text: `${then} denied` }, { complete: {} }],
    },
  ];
}

async function open(script: FakeScript, extra: Partial<SessionOptions> = {}) {
  const { factory, engines } = capturing<FakeEngine>(fakeEngine(script));
  const session = await createSession({ agent: 'fake', workDir: process.cwd(), store: new MemoryStore(), journal: new MemoryJournal(), engines: [factory], config: { permissionTimeoutMs: 0 }, ...extra });
  return { session, engines };
}

const texts = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : e.type === 'message' ? e.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));

describe('runStreamed', () => {
  it('two queued turns: each stream holds only its own events, ends with its turn_complete, and result is the run() result', async () => {
    const { session } = await open({ turns: [[{ text: 'one' }, { complete: {} }], [{ text: 'two' }, { complete: {} }], [{ text: 'three' }, { complete: {} }]] });
    const first = session.runStreamed('a');
    const second = session.runStreamed('b');
    const collect = async (events: AsyncIterable<AgentEvent>) => {
      const seen: AgentEvent[] = [];
      for await (const e of events) seen.push(e);
      return seen;
    };
    const [a, b] = await Promise.all([collect(first.events), collect(second.events)]);
    expect(texts(a).join('')).toContain('one');
    expect(texts(a).join('')).not.toContain('two');
    expect(texts(b).join('')).toContain('two');
    expect(texts(b).join('')).not.toContain('one');
    expect(a.at(-1)?.type).toBe('turn_complete');
    expect(b.at(-1)?.type).toBe('turn_complete');
    expect(a.filter((e) => e.type === 'turn_complete')).toHaveLength(1);
    const [ra, rb] = await Promise.all([first.result, second.result]);
    expect(ra).toMatchObject({ status: 'completed', text: 'one' });
    expect(rb).toMatchObject({ status: 'completed', text: 'two' });
    // onEvent: the callback style, the same events.
    const viaCallback: AgentEvent[] = [];
    const third = await session.run('c', { onEvent: (e) => viaCallback.push(e) });
    expect(third.text).toBe('three');
    expect(texts(viaCallback).join('')).toContain('three');
    expect(viaCallback.at(-1)?.type).toBe('turn_complete');
    await session.stop();
  });

  it('an aborted signal: result rejects ABORTED and the stream throws it after what it held; breaking out early leaves result intact', async () => {
    const { session } = await open({ turns: [[{ text: 'slow' }, { stall: true }], [{ text: 'fine' }, { complete: {} }]] });
    const controller = new AbortController();
    const streamed = session.runStreamed('a', { signal: controller.signal });
    const seen: AgentEvent[] = [];
    const reading = (async () => {
      for await (const e of streamed.events) {
        seen.push(e);
        if (e.type === 'text_delta' || e.type === 'message') controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(streamed.result).rejects.toMatchObject({ code: 'ABORTED' });
    expect(seen.length).toBeGreaterThan(0);
    const next = session.runStreamed('b');
    for await (const _ of next.events) break; // leaves the loop: the turn goes on
    expect(await next.result).toMatchObject({ status: 'completed', text: 'fine' });
    await session.stop();
  });
});

describe('canUseTool', () => {
  it('allow with an updated input, deny with a message, a throwing policy denies with its message', async () => {
    const calls: { toolName: string; input: unknown; requestId: string; callId?: string }[] = [];
    let answer: (n: number) => ReturnType<CanUseTool> = () => ({ behavior: 'allow' });
    const policy: CanUseTool = async (toolName, input, { requestId, callId }) => {
      calls.push({ toolName, input, requestId, ...(callId !== undefined && { callId }) });
      return answer(calls.length);
    };
    const { session, engines } = await open({ turns: [ask('p1', 'first'), ask('p2', 'second'), ask('p3', 'third')] }, { canUseTool: policy });
    answer = () => ({ behavior: 'allow', updatedInput: { command: 'ls -la' } });
    expect((await session.run('one')).text).toBe('first allowed');
    answer = () => ({ behavior: 'deny', message: 'not now' });
    expect((await session.run('two')).text).toBe('second denied');
    answer = () => {
      throw new Error('policy bug');
    };
    expect((await session.run('three')).text).toBe('third denied');
    expect(calls).toEqual([
      { toolName: 'Bash', input: { command: 'ls' }, requestId: 'p1', callId: 'call-p1' },
      { toolName: 'Bash', input: { command: 'ls' }, requestId: 'p2', callId: 'call-p2' },
      { toolName: 'Bash', input: { command: 'ls' }, requestId: 'p3', callId: 'call-p3' },
    ]);
    const answers = engines[0]!.answers.map((a) => [a.requestId, a.decision]);
    expect(answers[0]).toEqual(['p1', expect.objectContaining({ behavior: 'allow', updatedInput: { command: 'ls -la' } })]);
    expect(answers[1]).toEqual(['p2', expect.objectContaining({ behavior: 'deny', message: 'not now' })]);
    expect(answers[2]).toEqual(['p3', expect.objectContaining({ behavior: 'deny', message: expect.stringContaining('policy bug') })]);
    const final = await session.stop();
    expect(Object.values(final.completed).map((c) => c.status)).toEqual(['approved', 'denied', 'denied']);
  });

  it('a remote decide() first wins: the policy`s signal aborts and its late answer changes nothing', async () => {
    let release!: () => void;
    let aborted = false;
    const policy: CanUseTool = (_tool, _input, { signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => (aborted = true));
        release = () => resolve({ behavior: 'allow' });
      });
    const { session, engines } = await open({ turns: [ask('p1', 'remote')] }, { canUseTool: policy });
    const prompt = session.waitFor('permission_prompt');
    const turn = session.run('go');
    await prompt;
    await session.decide('p1', 'deny', { message: 'the page said no' });
    expect((await turn).text).toBe('remote denied');
    expect(aborted).toBe(true);
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(engines[0]!.answers).toHaveLength(1);
    expect((await session.stop()).completed['p1']).toMatchObject({ status: 'denied' });
  });

  it('a run`s own policy answers its turn only; the session`s answers the others; a re-sent prompt is not asked twice', async () => {
    const asked: string[] = [];
    const sessionPolicy: CanUseTool = async (_t, _i, { requestId }) => {
      asked.push(`session:${requestId}`);
      return { behavior: 'deny' };
    };
    const { session } = await open({ turns: [ask('p1', 'one'), ask('p2', 'two')] }, { canUseTool: sessionPolicy });
    let resolveOwn!: () => void;
    const own = session.run('one', {
      canUseTool: (_t, _i, { requestId }) => {
        asked.push(`run:${requestId}`);
        // Offline and back while the policy thinks: the prompt is re-sent, and not asked again.
        session.setOnline(false);
        session.setOnline(true);
        return new Promise((resolve) => (resolveOwn = () => resolve({ behavior: 'allow' })));
      },
    });
    await session.waitFor('permission_prompt');
    await new Promise((resolve) => setTimeout(resolve, 20));
    resolveOwn();
    expect((await own).text).toBe('one allowed');
    expect((await session.run('two')).text).toBe('two denied');
    expect(asked).toEqual(['run:p1', 'session:p2']);
    await session.stop();
  });

  it('without a policy nothing changes: the prompt waits for decide()', async () => {
    const { session } = await open({ turns: [ask('p1', 'manual')] });
    const prompt = session.waitFor('permission_prompt');
    const turn = session.run('go');
    await prompt;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(Object.keys(session.snapshot().requests)).toEqual(['p1']);
    await session.decide('p1', 'allow');
    expect((await turn).text).toBe('manual allowed');
    await session.stop();
  });

  it('refuses a canUseTool that is not a function', async () => {
    await expect(createSession({ agent: 'fake', workDir: process.cwd(), store: new MemoryStore(), journal: new MemoryJournal(), canUseTool: 'yes' as never })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
