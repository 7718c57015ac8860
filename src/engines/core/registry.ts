/**
 * Engines by name, so sessions and the CLI can pick one with `agent: 'claude'` / `--agent fake`.
 * The built-in set is `defaultRegistry()` (engines/default-registry.ts), one layer up: the contract
 * knows no engine.
 */
import { AseError } from '../../errors.js';
import type { EngineFactory } from './engine.js';

export class EngineRegistry {
  readonly #factories = new Map<string, EngineFactory>();

  /** Adds `factory`, replacing any registered under the same name (e.g. a scripted `fake`). */
  register(factory: EngineFactory): this {
    this.#factories.set(factory.name, factory);
    return this;
  }

  get(name: string): EngineFactory {
    const factory = this.#factories.get(name);
    if (!factory) {
      const known = this.names();
      throw new AseError(
        'UNKNOWN_ENGINE',
        `Unknown engine "${name}"; known engines: ${known.length ? known.join(', ') : '(none)'}`,
      );
    }
    return factory;
  }

  has(name: string): boolean {
    return this.#factories.has(name);
  }

  names(): string[] {
    return [...this.#factories.keys()];
  }
}
