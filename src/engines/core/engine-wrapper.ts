/**
 * An engine seen through a wrapper that replaces some of its members (recording and replay change
 * only how `start` is called). Everything else reaches the engine itself, bound to it, so private
 * fields and getters keep working and the wrapper needs no copy of the AgentEngine contract.
 */
import type { AgentEngine } from './engine.js';

export function wrapEngine(engine: AgentEngine, overrides: Partial<Pick<AgentEngine, 'start'>>): AgentEngine {
  return new Proxy(engine, {
    get(target, property) {
      if (property in overrides) return overrides[property as keyof typeof overrides];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
