/**
 * stop() interrupts a running turn before the stop ladder, but a server that does not answer must
 * not hold it up: app-server's interrupt first waits for the turn id from the `turn/start` answer,
 * and that wait was bounded only by the request timeout (60 s by default), so stop() of a wedged
 * server took a minute before the process was even signalled. In-memory server that never
 * answers `turn/start`.
 */
import { describe, expect, it } from 'vitest';
import { CodexAppServerEngine } from '../../src/engines/codex/index.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/codex-engine-kit.js';
import { inMemoryCodexServer } from '../support/codex-in-memory-server.js';

/** Answers the handshake; `turn/start` is never answered. */
function wedgedOnTurnStart() {
  return inMemoryCodexServer({ exit: { code: null, signal: 'SIGTERM' } });
}

describe('stop() of a server that does not answer', () => {
  it('reaches the stop ladder within the interrupt grace although turn/start is unanswered', async () => {
    const server = wedgedOnTurnStart();
    const engine = new CodexAppServerEngine(realEngineContext(), { launcher: server.launcher, bin: '/never-run', env: {} });
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.start({ gen: 1, mode: 'remote', workDir: '/tmp', options: {} });
    for (let i = 0; i < 500 && !events.some((e) => e.type === 'ready'); i++) await new Promise((r) => setTimeout(r, 2));
    await engine.send({ localId: 'm1', text: 'hi' });
    const t = Date.now();
    await engine.stop();
    expect(server.stoppedAt()! - t).toBeLessThan(3_500);
    expect(events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
  }, 10_000);
});
