/**
 * Both Codex engines report upstream traffic that produced no other event as throttled `activity`
 * (the stall watchdog's sign of life): only after `ready`, at most once per ACTIVITY_INTERVAL_MS,
 * never for a message that produced an event, and junk lines on stdout count too. Driven through
 * an in-memory transport (the `launcher` hook) with a clock that moves 300 ms per reading.
 */
import { describe, expect, it } from 'vitest';
import { CodexAppServerEngine, type CodexLauncher, type LaunchSpec } from '../../src/engines/codex/index.js';
import type { EngineContext } from '../../src/engines/engine.js';
import { ACTIVITY_INTERVAL_MS, type AgentEvent } from '../../src/events/agent-event.js';

const THREAD = 'thread-1';

/** A fake app-server: answers the handshake and lets the test push server messages. */
function fakeServer() {
  let spec: LaunchSpec | undefined;
  let exit!: () => void;
  const exited = new Promise<void>((r) => (exit = r));
  const push = (message: unknown): void => spec!.onMessage(message);
  const launcher: CodexLauncher = async (s) => {
    spec = s;
    return {
      pid: undefined,
      write: async (value) => {
        const m = value as { id?: number; method?: string };
        if (m.method === 'initialize') {
          // A status notification during the handshake: no `activity` before `ready`.
          push({ method: 'configWarning', params: { summary: 'bubblewrap', details: null } });
          setImmediate(() => push({ id: m.id, result: { userAgent: 'fake' } }));
        } else if (m.method === 'thread/start') setImmediate(() => push({ id: m.id, result: { thread: { id: THREAD, path: null }, model: 'm' } }));
      },
      exited: exited.then(() => ({ code: 0, signal: null })),
      stop: async () => exit(),
      stderrTail: () => '',
    };
  };
  return { launcher, push, junk: (line: string) => spec!.onInvalidLine('not JSON', line) };
}

function clockContext(): EngineContext {
  let now = 1_000_000;
  return {
    now: () => (now += 300),
    setTimeout: (fn, ms) => ({ id: Number(setTimeout(fn, ms)) }),
    clearTimeout: (h) => clearTimeout(h.id),
  };
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
      server.junk(`codex log line ${i}`);
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
