/**
 * Both Codex engines report upstream traffic that produced no other event as throttled `activity`
 * (the stall watchdog's sign of life): only after `ready`, at most once per ACTIVITY_INTERVAL_MS,
 * never for a message that produced an event, and junk lines on stdout count too. Driven through
 * an in-memory transport (the `launcher` hook) with a clock that moves 300 ms per reading.
 */
import { describe, expect, it } from 'vitest';
import { CodexAppServerEngine } from '../../src/engines/codex/index.js';
import type { EngineContext } from '../../src/engines/core/engine.js';
import { ACTIVITY_INTERVAL_MS, type AgentEvent } from '../../src/events/agent-event.js';
import { IN_MEMORY_THREAD as THREAD, inMemoryCodexServer } from '../support/codex-in-memory-server.js';
import { realEngineContext } from '../support/engine-context.js';

/** Answers the handshake; a status notification during it must not become `activity` before `ready`. */
function fakeServer() {
  return inMemoryCodexServer({
    answer: (m, push) => {
      if (m.method === 'initialize') push({ method: 'configWarning', params: { summary: 'bubblewrap', details: null } });
    },
  });
}

function clockContext(): EngineContext {
  let now = 1_000_000;
  return realEngineContext({ now: () => (now += 300) });
}

async function until(events: AgentEvent[], type: AgentEvent['type']): Promise<void> {
  for (let i = 0; i < 500 && !events.some((e) => e.type === type); i++) await new Promise((r) => setTimeout(r, 2));
  if (!events.some((e) => e.type === type)) throw new Error(`no ${type}; saw ${events.map((e) => e.type).join(', ')}`);
}

describe('codex engines: activity', () => {
  it('status traffic after ready becomes throttled activity; traffic that produced an event does not', async () => {
    const server = fakeServer();
    const engine = new CodexAppServerEngine(clockContext(), { launcher: server.launcher, bin: '/never-run', env: {} });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 3, mode: 'remote', workDir: '/tmp', options: {} });
    await until(events, 'ready');
    expect(events.map((e) => e.type)).toEqual(['session_identified', 'ready']); // a thread without a rollout path is identified at once

    // 12 status notifications and junk lines, 300 ms of clock apart: a few signs of life, never two within a second.
    for (let i = 0; i < 6; i++) {
      server.push({ method: 'account/rateLimits/updated', params: { rateLimits: {} } });
      server.pushInvalidLine(`codex log line ${i}`);
    }
    const activity = events.filter((e) => e.type === 'activity');
    expect(activity.length).toBeGreaterThanOrEqual(2);
    expect(activity.length).toBeLessThan(12);
    for (let i = 1; i < activity.length; i++) expect(activity[i]!.at - activity[i - 1]!.at).toBeGreaterThanOrEqual(ACTIVITY_INTERVAL_MS);
    expect(activity.every((e) => e.gen === 3)).toBe(true);

    // A message that produced an event is its own sign of life: no activity next to it.
    const before = events.length;
    server.push({ method: 'error', params: { threadId: THREAD, turnId: 't', willRetry: false, error: { message: 'boom' } } });
    expect(events.slice(before).map((e) => e.type)).toEqual(['error']);

    await engine.stop();
    expect(events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
  });
});
