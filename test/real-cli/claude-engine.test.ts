/**
 * The claude engine end to end: createSession → SessionActor → ClaudeEngine → the REAL pinned
 * Claude Code CLI against our mock Messages API on 127.0.0.1, with a hermetic environment passed
 * through `engineOptions.env` and the binary through `bin`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, type ClaudeEngine } from '../../src/engines/claude/index.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice, type TranscriptEntry } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { FixtureRecorder } from '../support/engine-fixture.js';
import { claudeFixtureVars } from '../support/claude-fixture.js';
import { capturing } from '../support/capturing-factory.js';
import { findProcesses } from '../support/processes.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

const fixtureDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'claude', 'engine');

/**
 * pids of ours: argv mentions `marker` (our temp root, e.g. a Bash tool command), or argv runs
 * `binary` with `marker` in its environment (the hermetic HOME/CLAUDE_CONFIG_DIR live under it).
 */
function processesOf(binary: string, marker: string): number[] {
  return findProcesses((proc) => {
    const cmdline = proc.cmdline();
    const environ = cmdline.includes(binary) ? proc.environ() : '';
    return cmdline.includes(marker) || (cmdline.includes(binary) && environ.includes(marker));
  });
}

describe('claude engine with the real CLI', () => {
  let root: string;
  let mock: AnthropicMock;
  let session: Session | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-engine-'));
    mock = await startAnthropicMock();
  });

  /** The pinned binary, a working directory under this test's root, and the hermetic env for the mock. */
  function hermetic() {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    return { bin: claudeBinary(), work, env: hermeticClaudeEnv({ port: mock.port, root }) };
  }

  /**
   * A claude engine factory whose traffic and events are recorded as test/fixtures/claude/engine/
   * <name>.jsonl by `save()` (when UPDATE_CLAUDE_FIXTURES=1 or the file is missing); unit tests replay them.
   */
  function recorded(name: string): { factory: EngineFactory; records: FixtureRecorder['records']; save(): void } {
    const recorder = new FixtureRecorder(claudeFixtureVars(root));
    const path = join(fixtureDir, `${name}.jsonl`);
    return {
      factory: recorder.wrap(claudeEngine({ onTraffic: recorder.tap })),
      records: recorder.records,
      save: () => {
        if (process.env.UPDATE_CLAUDE_FIXTURES === '1' || !existsSync(path)) recorder.write(path);
      },
    };
  }

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs a text turn and a Bash tool turn with a permission prompt, then stops cleanly', async () => {
    const { bin, work, env } = hermetic();
    const events: AgentEvent[] = [];
    const timings: Record<string, number> = {};

    const t0 = performance.now();
    const fixture = recorded('text-then-tool-allowed');
    session = await createSession({
      agent: 'claude',
      engines: [fixture.factory],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: work,
      bin,
      engineOptions: { env },
    });
    session.on('agent', (n) => events.push(n.event));
    session.on('error', (n) => console.log(`[claude-engine] session error: ${n.error.code} ${n.error.message}`));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    timings.spawnToReadyMs = Math.round(performance.now() - t0);

    // --- turn 1: text ---
    const text1 = 'Hello from the mock, via the engine.';
    mock.enqueue({ kind: 'text', text: text1, chunks: 4 });
    let t = performance.now();
    let done = waitForNotice(session, agentEvent('turn_complete'), 'turn 1 complete');
    session.send('first prompt');
    const tc1 = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    timings.turn1Ms = Math.round(performance.now() - t);
    expect(tc1.event).toMatchObject({ type: 'turn_complete', status: 'completed', stopReason: 'end_turn' });
    const deltas = events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('');
    expect(deltas).toBe(text1);
    const identified = events.find((e) => e.type === 'session_identified');
    expect(identified).toBeDefined();
    expect(session.snapshot().resumeToken).toBe((identified as { resumeToken: string }).resumeToken);

    // --- turn 2: Bash tool with a permission prompt ---
    const target = join(root, 'made-by-tool.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'File created.' });
    t = performance.now();
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    done = waitForNotice(session, agentEvent('turn_complete'), 'turn 2 complete');
    session.send('please create the file');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    timings.turn2ToPromptMs = Math.round(performance.now() - t);
    expect(p.toolName).toBe('Bash');
    expect(p.input).toMatchObject({ command: `touch ${target}` });
    session.decide(p.requestId, 'allow');
    const tc2 = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    timings.turn2Ms = Math.round(performance.now() - t);
    expect(tc2.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(existsSync(target)).toBe(true);
    const call = events.find((e) => e.type === 'tool_call');
    const result = events.find((e) => e.type === 'tool_result');
    expect(call).toMatchObject({ toolName: 'Bash', callId: p.callId });
    expect(result).toMatchObject({ callId: p.callId, status: 'completed', isError: false });
    const costs = events.filter((e) => e.type === 'turn_complete').map((e) => (e as { usage: { costUsd?: number } }).usage.costUsd ?? 0);
    expect(costs.every((c) => c > 0)).toBe(true);

    // --- stop: nothing of ours survives ---
    expect(processesOf(bin, root).length).toBeGreaterThan(0); // the scan does see the live CLI
    t = performance.now();
    await session.stop();
    timings.stopMs = Math.round(performance.now() - t);
    session = undefined;
    expect(events.at(-1)?.type).toBe('exited');
    expect(processesOf(bin, root)).toEqual([]);
    expect(new Set(events.map((e) => e.gen)).size).toBe(1);
    fixture.save();
    console.log(`[claude-engine] timings ${JSON.stringify(timings)}`);
  });
  it('aborts a running turn (interrupt) and keeps the process usable', async () => {
    const { bin, work, env } = hermetic();
    const events: AgentEvent[] = [];
    const fixture = recorded('abort-mid-stream');
    session = await createSession({ agent: 'claude', engines: [fixture.factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');

    mock.enqueue({ kind: 'text', text: 'a slow answer that will be interrupted long before it ends', chunks: 40, delayMs: 100 });
    const t = performance.now();
    const firstDelta = waitForNotice(session, agentEvent('text_delta'), 'first text_delta');
    let done = waitForNotice(session, agentEvent('turn_complete'), 'cancelled turn');
    session.send('slow please');
    await firstDelta;
    session.abort();
    const cancelled = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    const abortMs = Math.round(performance.now() - t);
    expect(cancelled.event).toMatchObject({ type: 'turn_complete', status: 'cancelled' });
    expect(events.some((e) => e.type === 'error')).toBe(false);
    // interrupted mid-stream: only part of the slow answer arrived
    const streamed = events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('');
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed).not.toBe('a slow answer that will be interrupted long before it ends');

    done = waitForNotice(session, agentEvent('turn_complete'), 'turn after abort');
    session.send('again');
    const again = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(again.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    fixture.save();
    console.log(`[claude-engine] abort: send→cancelled ${abortMs} ms`);
  });

  it('stop() mid-turn interrupts the turn first instead of waiting for it to finish', async () => {
    const { bin, work, env } = hermetic();
    const events: AgentEvent[] = [];
    session = await createSession({ agent: 'claude', engines: [claudeEngine({ bin })], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, engineOptions: { env } });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');

    // Without the interrupt rung, stdin EOF lets the CLI finish this 20 s answer (turn `completed`).
    mock.enqueue({ kind: 'text', text: 'an answer far too slow to wait for at stop time', chunks: 40, delayMs: 500 });
    const firstDelta = waitForNotice(session, agentEvent('text_delta'), 'first text_delta');
    session.send('slow please');
    await firstDelta;
    const t = performance.now();
    await session.stop();
    const stopMs = Math.round(performance.now() - t);
    session = undefined;
    const ends = events.filter((e) => e.type === 'turn_complete');
    expect(ends).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    expect(events.at(-1)?.type).toBe('exited');
    expect(processesOf(bin, root)).toEqual([]);
    console.log(`[claude-engine] stop mid-turn: ${stopMs} ms`);
  });

  it('resumes the CLI session in a new process (same resume token, history kept)', async () => {
    const { bin, work, env } = hermetic();
    const store = new MemoryStore();
    const base = { agent: 'claude', engines: [claudeEngine()], store, journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env }, sessionId: 'resume-me' } as const;

    session = await createSession({ ...base, engines: [claudeEngine()] });
    await waitForNotice(session, agentEvent('ready'), 'ready');
    let done = waitForNotice(session, agentEvent('turn_complete'), 'turn 1');
    session.send('remember the word pineapple');
    await done;
    const token = session.snapshot().resumeToken;
    expect(token).toBeTruthy();
    const firstCost = session.snapshot().usage.costUsd;
    expect(firstCost).toBeGreaterThan(0);
    await session.stop();
    // The transcript the real CLI wrote is where checkResume finds it (a host adopting the session,
    // issue 22); a host whose Claude Code keeps its files elsewhere has none.
    expect(await claudeEngine().checkResume!({ resumeToken: token!, workDir: work, engineOptions: { env } })).toEqual({ ok: true });
    expect(await claudeEngine().checkResume!({ resumeToken: token!, workDir: work, engineOptions: {}, env: { HOME: join(root, 'elsewhere') } })).toMatchObject({ ok: false });

    const t = performance.now();
    const events: AgentEvent[] = [];
    const resumed = recorded('resume');
    session = await createSession({ ...base, engines: [resumed.factory] });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready after resume');
    const readyMs = Math.round(performance.now() - t);
    done = waitForNotice(session, agentEvent('turn_complete'), 'turn after resume');
    session.send('what was the word?');
    const tc = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(tc.event).toMatchObject({ status: 'completed' });
    expect(events.find((e) => e.type === 'session_identified')).toMatchObject({ resumeToken: token });
    expect(session.snapshot().resumeToken).toBe(token);
    expect(JSON.stringify(mock.requests.at(-1)?.body.messages)).toContain('pineapple');
    // The resumed CLI's total_cost_usd counts the first process's turn again (it restores the
    // session total): the resumed turn is billed only for itself.
    const result = resumed.records.find((r) => r.dir === 'from_agent' && 'msg' in r && (r.msg as { type?: string }).type === 'result');
    const sessionTotal = (result as { msg: { total_cost_usd: number } }).msg.total_cost_usd;
    const resumedCost = (tc.event as { usage: { costUsd?: number } }).usage.costUsd ?? 0;
    expect(resumedCost).toBeGreaterThan(0);
    expect(resumedCost).toBeCloseTo(sessionTotal - firstCost, 12);
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    resumed.save();
    console.log(`[claude-engine] resume: spawn→ready ${readyMs} ms`);
  });
  it('allow with updatedPermissions (a session rule) lets the next matching call run without a prompt', async () => {
    const { bin, work, env } = hermetic();
    const fixture = recorded('allow-with-session-rule');
    session = await createSession({ agent: 'claude', engines: [fixture.factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
    const prompts: string[] = [];
    session.on('permission_prompt', (p) => prompts.push(p.requestId));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    // Inside the working directory: a path outside it is asked about whatever the rules say.
    const first = join(work, 'first.txt');
    const second = join(work, 'second.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${first}`, description: 'Create a file' } }, { kind: 'text', text: 'One.' });
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    let done = waitForNotice(session, agentEvent('turn_complete'), 'turn 1');
    session.send('create the first file');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    session.decide(p.requestId, 'allow', {
      updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'session' }],
    });
    await done;
    expect(existsSync(first)).toBe(true);
    // Should a prompt come anyway, answer it, so the test fails on the assertion rather than hanging.
    session.on('permission_prompt', (again) => session?.decide(again.requestId, 'allow'));

    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${second}`, description: 'Create a file' } }, { kind: 'text', text: 'Two.' });
    done = waitForNotice(session, agentEvent('turn_complete'), 'turn 2');
    session.send('create the second file');
    const tc = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(tc.event).toMatchObject({ status: 'completed' });
    expect(existsSync(second)).toBe(true);
    expect(prompts).toEqual([p.requestId]); // the rule answered the second call: no new prompt
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    fixture.save();
  });

  it('a denied Bash call is reported as a denied tool_result and the turn goes on', async () => {
    const { bin, work, env } = hermetic();
    const events: AgentEvent[] = [];
    const fixture = recorded('tool-denied');
    session = await createSession({ agent: 'claude', engines: [fixture.factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    const target = join(root, 'must-not-exist.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } }, { kind: 'text', text: 'Understood.' });
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    const done = waitForNotice(session, agentEvent('turn_complete'), 'turn complete');
    session.send('create it');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    session.decide(p.requestId, 'deny', { message: 'Host policy says no.' });
    const tc = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(tc.event).toMatchObject({ status: 'completed' });
    expect(existsSync(target)).toBe(false);
    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ callId: p.callId, status: 'denied', isError: true });
    expect(JSON.stringify((result as { output: unknown }).output)).toContain('Host policy says no.');
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    fixture.save();
  });
  for (const { status, kind, retryable } of [
    { status: 529, kind: 'transient', retryable: true },
    { status: 401, kind: 'auth', retryable: false },
  ] as const) {
    it(`an API error ${status} fails the turn with ${kind === "auth" ? "an" : "a"} ${kind} engine error${status === 529 ? '; the next turn works' : ''}`, async () => {
      const { bin, work, env } = hermetic();
      const events: AgentEvent[] = [];
      const transcript: TranscriptEntry[] = [];
      const fixture = recorded(`api-error-${status}`);
      session = await createSession({ agent: 'claude', engines: [fixture.factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
      session.on('agent', (n) => events.push(n.event));
      session.on('transcript', (n) => transcript.push(n.entry));
      await waitForNotice(session, agentEvent('ready'), 'ready');

      mock.enqueue({ kind: 'error', status });
      const t = performance.now();
      let done = waitForNotice(session, agentEvent('turn_complete'), 'failed turn');
      session.send('this will hit an API error');
      const failed = (await done) as Extract<SessionNotice, { type: 'agent' }>;
      const failMs = Math.round(performance.now() - t);
      expect(failed.event).toMatchObject({ type: 'turn_complete', status: 'failed' });
      const error = events.find((e) => e.type === 'error');
      expect(error).toMatchObject({ type: 'error', kind, retryable });
      expect((error as { message: string }).message).toContain(String(status));
      expect(transcript.filter((e) => e.type === 'turn_complete').at(-1)?.payload).toMatchObject({ status: 'failed' });
      console.log(`[claude-engine] API error ${status}: send→failed ${failMs} ms`);

      if (status === 529) {
        mock.enqueue({ kind: 'text', text: 'Recovered.' });
        done = waitForNotice(session, agentEvent('turn_complete'), 'turn after the API error');
        session.send('try again');
        const again = (await done) as Extract<SessionNotice, { type: 'agent' }>;
        expect(again.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
        expect(transcript.filter((e) => e.type === 'turn_complete').at(-1)?.payload).toMatchObject({ status: 'completed' });
      }
      await session.stop();
      session = undefined;
      expect(processesOf(bin, root)).toEqual([]);
      fixture.save();
    });
  }

  it('without credentials the turn fails with an auth engine error ("Not logged in")', async () => {
    const { bin, work, env } = hermetic();
    const { ANTHROPIC_API_KEY: _none, ...noKey } = env;
    const events: AgentEvent[] = [];
    const fixture = recorded('not-logged-in');
    session = await createSession({ agent: 'claude', engines: [fixture.factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env: noKey } });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    const done = waitForNotice(session, agentEvent('turn_complete'), 'failed turn');
    session.send('hello');
    const failed = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(failed.event).toMatchObject({ type: 'turn_complete', status: 'failed' });
    // The result carries no status (no request was made); only the CLI's synthetic assistant
    // line says `error: "authentication_failed"`.
    expect(events.find((e) => e.type === 'error')).toMatchObject({ kind: 'auth', retryable: false, message: expect.stringContaining('Not logged in') });
    expect(mock.requests).toEqual([]);
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    fixture.save();
  });

  it('abort while a permission prompt is pending cancels the request and the turn; the next turn works', async () => {
    const { bin, work, env } = hermetic();
    const events: AgentEvent[] = [];
    const fixture = recorded('abort-at-permission-prompt');
    const { factory, engines } = capturing<ClaudeEngine>(fixture.factory);
    session = await createSession({ agent: 'claude', engines: [factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
    session.on('agent', (n) => events.push(n.event));
    session.on('error', (n) => console.log(`[claude-engine] session error: ${n.error.code} ${n.error.message}`));
    await waitForNotice(session, agentEvent('ready'), 'ready');

    const target = join(root, 'never-created.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${target}`, description: 'Create a file' } });
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    let done = waitForNotice(session, agentEvent('turn_complete'), 'cancelled turn');
    session.send('create the file');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(session.snapshot().requests[p.requestId]).toBeDefined();
    const t = performance.now();
    session.abort();
    const cancelled = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    const abortMs = Math.round(performance.now() - t);
    expect(cancelled.event).toMatchObject({ type: 'turn_complete', status: 'cancelled' });
    const snap = session.snapshot();
    expect(snap.requests[p.requestId]).toBeUndefined();
    expect(snap.completed[p.requestId]).toMatchObject({ status: 'cancelled' });
    expect(existsSync(target)).toBe(false);
    expect(events.some((e) => e.type === 'error')).toBe(false);
    const engine = engines[0]!;
    // If the CLI withdrew the prompt (control_cancel_request), it was consumed as control traffic
    // (never answered, never surfaced as an unknown line).
    if (engine.cancelledByCli.length > 0) {
      expect(engine.cancelledByCli).toEqual([p.requestId]);
      // ...and reported as withdrawn; the session had already closed it at the abort.
      expect(events.filter((e) => e.type === 'permission_cancelled')).toEqual([expect.objectContaining({ requestId: p.requestId })]);
    }
    expect(engine.skipped.some((s) => JSON.stringify(s.raw ?? '').includes('control_cancel_request'))).toBe(false);

    done = waitForNotice(session, agentEvent('turn_complete'), 'turn after abort');
    session.send('hello again');
    const again = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(again.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(events.some((e) => e.type === 'error')).toBe(false);
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    fixture.save();
    console.log(`[claude-engine] abort at permission prompt: abort→cancelled ${abortMs} ms, control_cancel_request ${engine.cancelledByCli.length > 0 ? 'received' : 'not sent'}`);
  });

  it('a CLI killed mid-tool leaves no orphan: the setsid Bash command is gone when `exited` is reported', async () => {
    const { bin, work, env } = hermetic();
    const { factory, engines } = capturing<ClaudeEngine>(claudeEngine());
    session = await createSession({ agent: 'claude', engines: [factory], store: new MemoryStore(), journal: new MemoryJournal(), workDir: work, bin, engineOptions: { env } });
    await waitForNotice(session, agentEvent('ready'), 'ready');
    // A long-running command (its argv carries our root as a marker); the Bash tool runs it under setsid.
    const marker = join(root, 'still-running.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${marker} && tail -f ${marker}`, description: 'Follow a file' } });
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    session.send('follow the file');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    session.decide(p.requestId, 'allow');
    const cli = engines[0]!.pid!;
    const tails = () => findProcesses((proc) => proc.cmdline().startsWith('tail\0') && proc.cmdline().includes(marker));
    const deadline = Date.now() + 15_000;
    while (tails().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(tails().length).toBeGreaterThan(0);
    // The supervisor collects descendants every 250 ms; give it one round to see the command.
    await new Promise((r) => setTimeout(r, 600));
    const exited = waitForNotice(session, agentEvent('exited'), 'exited after the crash');
    process.kill(cli, 'SIGKILL'); // a crash: SIGKILL orphans setsid children (reference §10)
    await exited;
    const left = tails();
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
  });

  // setPermissionMode on the same live engine afterwards (one CLI start for both).
  it('a Bash command that runs longer than the stall timeout is not taken for a stalled stream; setPermissionMode("acceptEdits") on the live engine then returns the new mode', async () => {
    const { bin, work, env } = hermetic();
    const { factory, engines } = capturing<ClaudeEngine>(claudeEngine());
    const events: AgentEvent[] = [];
    // The CLI prints nothing while a tool runs (observed: not a line during a 33 s command), so a
    // build longer than stallTimeoutMs (default 3 min) looks exactly like a stalled stream. Scaled
    // down here: a 1.5 s stall timeout and a 4 s command.
    session = await createSession({
      agent: 'claude',
      engines: [factory],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: work,
      bin,
      engineOptions: { env },
      config: { stallTimeoutMs: 1_500 },
    });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    const file = join(root, 'long-command.txt');
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: `touch ${file}; timeout 4 tail -f ${file}; echo finished`, description: 'A long command' } }, { kind: 'text', text: 'Done.' });
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    const done = waitForNotice(session, agentEvent('turn_complete'), 'turn complete');
    session.send('run the long command');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    session.decide(p.requestId, 'allow');
    const tc = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    expect(tc.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: p.callId, status: 'completed' });

    // setPermissionMode on the live engine, then a turn.
    expect(engines).toHaveLength(1);
    const t = performance.now();
    await expect(engines[0]!.setPermissionMode('acceptEdits')).resolves.toEqual({ mode: 'acceptEdits' });
    const ms = Math.round(performance.now() - t);
    const after = waitForNotice(session, agentEvent('turn_complete'), 'turn after mode switch');
    session.send('still there?');
    expect(((await after) as Extract<SessionNotice, { type: 'agent' }>).event).toMatchObject({ status: 'completed' });
    await session.stop();
    session = undefined;
    expect(processesOf(bin, root)).toEqual([]);
    console.log(`[claude-engine] set_permission_mode: ${ms} ms`);
  });
});
