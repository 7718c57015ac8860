/**
 * Keeps the documentation honest:
 * - the statechart in docs/architecture.md is exactly what `toMermaid(sessionMachine)` renders;
 * - every name the package exports (values read from the module, type-only names parsed from
 *   src/index.ts and the files it re-exports with `export *`) is mentioned in docs/api.md;
 * - every AgentEvent type and every Effect type is mentioned in docs/architecture.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import { AGENT_EVENT_TYPES, EffectSchema, sessionMachine, toMermaid } from '../../src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const architecture = read('docs/architecture.md');
const apiDoc = read('docs/api.md');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The name as a whole word: `Clock` is not found inside `SimulatedClock`. */
const mentions = (doc: string, name: string) => new RegExp(`(?<![A-Za-z0-9_$])${escape(name)}(?![A-Za-z0-9_$])`).test(doc);

/**
 * Type-only exports of a module file: `export type { A, B as C }`, `type A` inside `export { ... }`,
 * `export type A = ...`, `export interface A`, followed through `export * from './x.js'`.
 */
function typeExports(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  const names: string[] = [];
  const exported = (spec: string) => spec.trim().split(/\s+as\s+/).pop()!.trim();
  for (const m of text.matchAll(/export\s+type\s*\{([^}]*)\}/g)) {
    for (const spec of m[1]!.split(',')) if (spec.trim()) names.push(exported(spec));
  }
  for (const m of text.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const spec of m[1]!.split(',')) {
      const s = spec.trim();
      if (s.startsWith('type ')) names.push(exported(s.slice('type '.length)));
    }
  }
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:type|interface)\s+([A-Za-z_$][\w$]*)/gm)) names.push(m[1]!);
  for (const m of text.matchAll(/^export\s+\*\s+from\s+'([^']+)'/gm)) {
    const target = path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    names.push(...typeExports(target, seen));
  }
  return names;
}

/** Every `type` literal the EffectSchema union accepts (ephemeral variants share one). */
function effectTypes(): string[] {
  const types = new Set<string>();
  for (const option of EffectSchema.options) {
    const literal = (option as unknown as { shape: { type: { value: unknown } } }).shape.type.value;
    types.add(String(literal));
  }
  return [...types];
}

describe('docs/architecture.md', () => {
  it('shows exactly the statechart toMermaid(sessionMachine) renders', () => {
    const match = /<!-- diagram:start -->\n```mermaid\n([\s\S]*?)```\n<!-- diagram:end -->/.exec(architecture);
    expect(match, 'docs/architecture.md needs a ```mermaid block between <!-- diagram:start --> and <!-- diagram:end -->').not.toBeNull();
    const hint =
      'The statechart in docs/architecture.md is out of date: run `npm run build && npx ase diagram` and paste its output ' +
      'into the ```mermaid block between <!-- diagram:start --> and <!-- diagram:end -->.';
    expect(match![1], hint).toBe(toMermaid(sessionMachine));
  });

  it('mentions every AgentEvent type', () => {
    expect(AGENT_EVENT_TYPES.length).toBeGreaterThan(0);
    const missing = AGENT_EVENT_TYPES.filter((t) => !mentions(architecture, t));
    expect(missing, 'AgentEvent types not described in docs/architecture.md').toEqual([]);
  });

  it('mentions every Effect type', () => {
    const types = effectTypes();
    expect(types).toContain('engine.start');
    const missing = types.filter((t) => !mentions(architecture, t));
    expect(missing, 'Effect types not described in docs/architecture.md').toEqual([]);
  });
});

describe('docs/api.md', () => {
  const valueNames = Object.keys(api);
  const typeNames = typeExports(path.join(root, 'src/index.ts'));

  it('finds the exports to check', () => {
    expect(valueNames).toContain('createSession');
    expect(typeNames).toEqual(expect.arrayContaining(['Session', 'SessionNotice', 'AgentEngine', 'AgentEvent']));
  });

  it('mentions every value export of src/index.ts', () => {
    const missing = valueNames.filter((name) => !mentions(apiDoc, name));
    expect(missing, 'exports not documented in docs/api.md').toEqual([]);
  });

  it('mentions every type-only export of src/index.ts', () => {
    const missing = [...new Set(typeNames)].filter((name) => !mentions(apiDoc, name));
    expect(missing, 'type exports not documented in docs/api.md').toEqual([]);
  });
});
