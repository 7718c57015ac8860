/**
 * Runtime tiers in the capability manifest: every built-in engine declares a tier and rates every
 * signal; the declarations are frozen; an engine without one counts as undeclared (nothing
 * authoritative); the table in docs/engines.md says the same as the code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultRegistry, isAuthoritative, RUNTIME_TIERS, SIGNAL_AUTHORITIES, TIER_SIGNALS, tierOf, UNDECLARED_TIER } from '../../src/index.js';

describe('runtime tiers', () => {
  const registry = defaultRegistry();

  it('every built-in engine declares a tier and rates every signal', () => {
    for (const name of registry.names()) {
      const tier = registry.get(name).capabilities.tier;
      expect(tier, name).toBeDefined();
      expect(RUNTIME_TIERS).toContain(tier!.tier);
      expect(Object.keys(tier!.signals).sort(), name).toEqual([...TIER_SIGNALS].sort());
      for (const signal of TIER_SIGNALS) expect(SIGNAL_AUTHORITIES, `${name} ${signal}`).toContain(tier!.signals[signal]);
    }
  });

  it('a turn end is authoritative for every built-in engine (a turn completes only on one)', () => {
    for (const name of registry.names()) expect(isAuthoritative(registry.get(name).capabilities, 'turnEnd'), name).toBe(true);
  });

  it('declarations are frozen: a client cannot change a shared manifest', () => {
    const tier = registry.get('claude').capabilities.tier!;
    expect(Object.isFrozen(tier)).toBe(true);
    expect(Object.isFrozen(tier.signals)).toBe(true);
  });

  it('an engine that declares nothing counts as delegated with nothing authoritative', () => {
    expect(tierOf({})).toBe(UNDECLARED_TIER);
    for (const signal of TIER_SIGNALS) expect(isAuthoritative({}, signal)).toBe(false);
  });

  it('docs/engines.md lists each engine with the tier and ratings the code declares', () => {
    const doc = readFileSync(new URL('../../docs/engines.md', import.meta.url), 'utf8');
    for (const name of registry.names()) {
      const tier = registry.get(name).capabilities.tier!;
      const row = `| \`${name}\` | ${tier.tier} | ${TIER_SIGNALS.map((s) => tier.signals[s]).join(' | ')} |`;
      expect(doc, name).toContain(row);
    }
  });
});
