/** An engine factory wrapper that hands out the engines it created, for engine-specific calls in tests. */
import type { AgentEngine, EngineFactory } from '../../src/engines/core/engine.js';
import { ModeEngine } from '../../src/engines/core/mode-engine.js';

/**
 * Engines that pick a local or remote engine per start (`ModeEngine`) are handed out as a view of
 * the engine running now, so `engines[0].pid` or an engine-specific method reaches the real one.
 */
export function capturing<E extends AgentEngine>(inner: EngineFactory): { factory: EngineFactory; engines: E[] } {
  const engines: E[] = [];
  return {
    engines,
    factory: {
      ...inner,
      create: (context) => {
        const engine = inner.create(context);
        engines.push((engine instanceof ModeEngine ? runningEngineOf(engine) : engine) as E);
        return engine;
      },
    },
  };
}

function runningEngineOf(mode: ModeEngine): AgentEngine {
  return new Proxy(mode, {
    get(target, key) {
      const running: object = target.engine ?? target;
      const value: unknown = Reflect.get(running, key, running);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(running) : value;
    },
  });
}
