/**
 * The engine conformance suite: the AgentEngine contract (src/engines/core/engine.ts) checked
 * against a REAL engine talking to a real pinned CLI and one of our mock model servers. Each
 * engine's real-CLI test calls {@link engineConformance} with a harness that knows how to script
 * its mock; the scenarios are the same for every engine:
 *
 * - `ready` after start, every event stamped with the start's `gen`, nothing after `exited`;
 * - a text turn: the answer as an assistant message, exactly one `turn_complete {completed}` with
 *   non-negative per-turn usage, the session id reported once;
 * - a second turn on the same agent session (resumed for driven engines), its usage its own;
 * - a tool turn: one `tool_call` and one `tool_result` per call id, the call first;
 * - a model failure: `error` with a known kind, then `turn_complete {failed}`; the engine still works;
 * - abort during a turn: `turn_complete {cancelled}`, and the engine takes the next turn;
 * - stop: `exited` last, idempotent, `send` refused afterwards, no process of the test left.
 */
import { expect, it } from 'vitest';
import { ERROR_KINDS, type AgentEvent } from '../../src/events/agent-event.js';
import type { AgentEngine, EngineStartSpec } from '../../src/engines/core/engine.js';
import { EventLog } from './codex-engine-kit.js';

export interface ConformanceHarness {
  /** A fresh engine (not started) and where it runs. */
  create(): { engine: AgentEngine; spec: EngineStartSpec };
  /** Scripts the mock: the next turn answers `text`. */
  text(text: string): void;
  /** Scripts the mock: the next turn runs one shell command (which the CLI may run unasked), then answers. */
  tool(command: string, then: string): void;
  /** Scripts the mock: the next model request fails (HTTP 500 or the API's error event). */
  failure(): void;
  /** Scripts the mock: the next turn's model stream stalls until the client goes away; resolves once it is stalled. */
  stall(): { stalled: Promise<void> };
  /** pids of processes the test's engine left behind. */
  leftovers(): number[];
}

const TURN_MS = 60_000;

export function engineConformance(name: string, harness: () => ConformanceHarness): void {
  it(`${name}: conformance: ready, text turns on one session, a tool turn, a failure, abort, stop`, async () => {
    const h = harness();
    const { engine, spec } = h.create();
    const log = new EventLog(engine);
    await engine.start(spec);
    await log.waitFor('ready');

    // --- text turn
    h.text('Conformance answer one.');
    let mark = log.mark();
    await engine.send({ localId: 'c1', text: 'first' });
    const first = await log.waitFor('turn_complete', mark, () => true, TURN_MS);
    expect(first.status).toBe('completed');
    const answer = log.of('message', mark).find((m) => m.role === 'assistant' && m.blocks.some((b) => b.type === 'text' && b.text === 'Conformance answer one.'));
    expect(answer, 'the answer as an assistant message').toBeDefined();
    for (const n of Object.values(first.usage)) expect(n).toBeGreaterThanOrEqual(0);
    expect(first.usage.inputTokens + first.usage.outputTokens).toBeGreaterThan(0);
    const identified = log.of('session_identified');
    expect(identified).toHaveLength(1);

    // --- second text turn: same agent session, usage per turn
    h.text('Conformance answer two.');
    mark = log.mark();
    await engine.send({ localId: 'c2', text: 'second' });
    const second = await log.waitFor('turn_complete', mark, () => true, TURN_MS);
    expect(second.status).toBe('completed');
    expect(log.of('session_identified')).toHaveLength(1); // still the same session
    // Per turn, not the session's running total (same-sized request, same-sized usage).
    expect(second.usage.inputTokens + second.usage.cacheReadTokens).toBeLessThan((first.usage.inputTokens + first.usage.cacheReadTokens) * 1.5);

    // --- tool turn
    h.tool('echo conformance', 'Tool turn done.');
    mark = log.mark();
    await engine.send({ localId: 'c3', text: 'run a tool' });
    const third = await log.waitFor('turn_complete', mark, () => true, TURN_MS);
    expect(third.status).toBe('completed');
    const calls = log.of('tool_call', mark);
    expect(calls.length).toBeGreaterThan(0);
    const turnEvents = log.events.slice(mark);
    for (const call of calls) {
      const results = log.of('tool_result', mark).filter((r) => r.callId === call.callId);
      expect(results, call.callId).toHaveLength(1);
      expect(turnEvents.indexOf(call)).toBeLessThan(turnEvents.indexOf(results[0]!));
    }

    // --- a model failure, then the engine still works
    h.failure();
    mark = log.mark();
    await engine.send({ localId: 'c4', text: 'fail please' });
    const failed = await log.waitFor('turn_complete', mark, () => true, TURN_MS);
    expect(failed.status).toBe('failed');
    const errors = log.of('error', mark);
    expect(errors.length).toBeGreaterThan(0);
    expect(ERROR_KINDS).toContain(errors[0]!.kind);

    // --- abort a stalled turn
    const { stalled } = h.stall();
    mark = log.mark();
    await engine.send({ localId: 'c5', text: 'stall' });
    await stalled;
    await engine.abort();
    const cancelled = await log.waitFor('turn_complete', mark, () => true, TURN_MS);
    expect(cancelled.status).toBe('cancelled');

    h.text('After abort.');
    mark = log.mark();
    await engine.send({ localId: 'c6', text: 'again' });
    expect(await log.waitFor('turn_complete', mark, () => true, TURN_MS)).toMatchObject({ status: 'completed' });

    // --- stop
    await engine.stop();
    await engine.stop();
    const events: AgentEvent[] = log.events;
    expect(events.at(-1)?.type).toBe('exited');
    expect(events.filter((e) => e.type === 'exited')).toHaveLength(1);
    expect(new Set(events.map((e) => e.gen))).toEqual(new Set([spec.gen]));
    expect(log.of('turn_complete').map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'failed', 'cancelled', 'completed']);
    await expect(engine.send({ localId: 'c7', text: 'late' })).rejects.toMatchObject({ code: 'SESSION_STOPPED' });
    expect(h.leftovers()).toEqual([]);
  });
}
