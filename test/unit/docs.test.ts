/**
 * Keeps the documentation honest:
 * - the statechart in docs/architecture.md is exactly what `toMermaid(sessionMachine)` renders;
 * - every name the package root exports (values read from the module, type-only names parsed from
 *   src/index.ts) is mentioned in docs/api.md, and every name a subpath entry exports
 *   (src/claude.ts, src/codex.ts, src/acp.ts, src/server.ts, src/testing.ts) is mentioned in that subpath's section of it;
 * - the public entries list their exports by name (no `export *`);
 * - every code of ERROR_CODES has a row in the table of docs/errors.md, which also describes AgentError;
 * - every AgentEvent type and every Effect type is mentioned in docs/architecture.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as acpApi from '../../src/acp.js';
import * as claudeApi from '../../src/claude.js';
import * as codexApi from '../../src/codex.js';
import * as serverApi from '../../src/server.js';
import * as testingApi from '../../src/testing.js';
import { AGENT_EVENT_TYPES, EffectSchema, ERROR_CODES, sessionMachine, toMermaid } from '../../src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const architecture = read('docs/architecture.md');
const apiDoc = read('docs/api.md');
const errorsDoc = read('docs/errors.md');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The name as a whole word: `Clock` is not found inside `SimulatedClock`. */
const mentions = (doc: string, name: string) => new RegExp(`(?<![A-Za-z0-9_$])${escape(name)}(?![A-Za-z0-9_$])`).test(doc);

/**
 * Type-only exports of a public entry file: `export type { A, B as C }`, `type A` inside
 * `export { ... }`, `export type A = ...`, `export interface A`. The entries name every export
 * (checked below), so there is no `export *` to follow.
 */
function typeExports(file: string): string[] {
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
  return [...new Set(names)];
}

/** The part of docs/api.md from the `## <n>. \`<entry>\`` heading to the next `## ` heading. */
function apiSection(entry: string): string {
  const heading = new RegExp(`^## \\d+\\. \`${escape(entry)}\`\\s*$`, 'm').exec(apiDoc);
  if (!heading) return '';
  const rest = apiDoc.slice(heading.index + heading[0].length);
  const next = /^## /m.exec(rest);
  return next ? rest.slice(0, next.index) : rest;
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

const subpaths = [
  { entry: 'agent-session-engine/claude', file: 'src/claude.ts', module: claudeApi as Record<string, unknown> },
  { entry: 'agent-session-engine/codex', file: 'src/codex.ts', module: codexApi as Record<string, unknown> },
  { entry: 'agent-session-engine/acp', file: 'src/acp.ts', module: acpApi as Record<string, unknown> },
  { entry: 'agent-session-engine/server', file: 'src/server.ts', module: serverApi as Record<string, unknown> },
  { entry: 'agent-session-engine/testing', file: 'src/testing.ts', module: testingApi as Record<string, unknown> },
];

describe('public entries', () => {
  it.each(['src/index.ts', ...subpaths.map((s) => s.file)])('%s names every export (no export *)', (file) => {
    expect(read(file)).not.toMatch(/^\s*export\s*\*/m);
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
    const missing = typeNames.filter((name) => !mentions(apiDoc, name));
    expect(missing, 'type exports not documented in docs/api.md').toEqual([]);
  });

  describe.each(subpaths)('$entry', ({ entry, file, module }) => {
    const section = apiSection(entry);
    const values = Object.keys(module);
    const types = typeExports(path.join(root, file));

    it('has a section with an import example', () => {
      expect(section, `docs/api.md needs a "## <n>. \`${entry}\`" section`).not.toBe('');
      expect(section).toContain(`from '${entry}'`);
      expect(values.length).toBeGreaterThan(0);
      expect(types.length).toBeGreaterThan(0);
    });

    it('mentions every value export in its section', () => {
      const missing = values.filter((name) => !mentions(section, name));
      expect(missing, `exports of ${file} not documented in the ${entry} section of docs/api.md`).toEqual([]);
    });

    it('mentions every type-only export in its section', () => {
      const missing = types.filter((name) => !mentions(section, name));
      expect(missing, `type exports of ${file} not documented in the ${entry} section of docs/api.md`).toEqual([]);
    });
  });
});

describe('docs/errors.md', () => {
  it('has a table row for every code of ERROR_CODES', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(0);
    const missing = ERROR_CODES.filter((code) => !new RegExp(`^\\| \`${code}\` \\|`, 'm').test(errorsDoc));
    expect(missing, 'error codes without a row ("| `CODE` | when |") in docs/errors.md').toEqual([]);
  });

  it('describes AgentError and is linked from README.md and docs/api.md', () => {
    expect(errorsDoc).toMatch(/^## AgentError$/m);
    expect(read('README.md')).toContain('docs/errors.md');
    expect(apiDoc).toContain('(errors.md)');
  });
});
