/** An engine factory wrapper that hands out the engines it created, for engine-specific calls in tests. */
import type { AgentEngine, EngineFactory } from '../../src/engines/core/engine.js';

export function capturing<E extends AgentEngine>(inner: EngineFactory): { factory: EngineFactory; engines: E[] } {
  const engines: E[] = [];
  return {
    engines,
    factory: {
      ...inner,
      create: (context) => {
        const engine = inner.create(context) as E;
        engines.push(engine);
        return engine;
      },
    },
  };
}
