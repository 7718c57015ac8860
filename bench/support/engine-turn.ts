/**
 * One turn of an engine on a stand-in agent, as the profile scripts measure it: start it in remote
 * mode, send "go" once it is `ready`, and resolve at `turn_complete`. The caller makes the engine
 * (from whichever build it measures) and stops it with the function returned.
 */
import type { AgentEngine, AgentEvent } from '../../src/index.js';

/** Runs one turn of `engine` in `workDir`; `observe` sees every event. Resolves with the engine's stop. */
export async function engineTurn(engine: Pick<AgentEngine, 'onEvent' | 'send' | 'start' | 'stop'>, workDir: string, observe?: (event: AgentEvent) => void): Promise<() => Promise<void>> {
  const ended = new Promise<void>((resolve) =>
    engine.onEvent((event) => {
      observe?.(event);
      if (event.type === 'ready') void engine.send({ localId: 'l1', text: 'go' });
      else if (event.type === 'turn_complete') resolve();
    }),
  );
  await engine.start({ gen: 1, mode: 'remote', workDir, options: {} });
  await ended;
  return () => engine.stop();
}
