/**
 * The architecture as a test (docs/architecture.md, "Layers"): every import in src/ goes down the
 * layers (events ← errors ← actors / engines ← runtime ← session ← cli), no engine knows another
 * engine, the actors or the runtime, the CLI uses only the public entry, and nothing imports in a
 * cycle. The checker is itself tested on planted bad imports, so this test cannot pass vacuously.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, layerViolations, readImportGraph, type ImportGraph } from '../support/import-graph.js';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');
const graph = readImportGraph(src);

const show = (violations: { file: string; imports: string; rule: string }[]) => violations.map((v) => `${v.file} → ${v.imports}: ${v.rule}`);

/** The real graph with one extra import planted in `file`. */
function planted(file: string, imports: string): ImportGraph {
  const files = new Map(graph.files);
  const entry = files.get(file);
  if (!entry) throw new Error(`no such file in src: ${file}`);
  files.set(file, { local: [...entry.local, imports], packages: entry.packages });
  return { files };
}

describe('import boundaries', () => {
  it('reads the whole source tree', () => {
    expect(graph.files.size).toBeGreaterThan(80);
    expect(graph.files.get('actors/session.ts')?.local).toContain('events/effect.ts');
  });

  it('every import in src/ follows the layers', () => {
    expect(show(layerViolations(graph))).toEqual([]);
  });

  it('no import cycles', () => {
    expect(importCycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });

  it.each([
    ['an actor importing the runtime', 'actors/session.ts', 'effects/session-runtime.ts'],
    ['an engine importing the runtime', 'engines/claude/engine.ts', 'effects/clock.ts'],
    ['an engine importing an actor', 'engines/codex/engine-base.ts', 'actors/session-context.ts'],
    ['an engine importing another engine', 'engines/acp/translate.ts', 'engines/claude/messages.ts'],
    ['the engine core importing an engine', 'engines/core/registry.ts', 'engines/fake/index.ts'],
    ['the transport importing the engine core', 'engines/transport/ndjson-process.ts', 'engines/core/engine.ts'],
    ['the engine core importing a protocol folder', 'engines/core/engine-events.ts', 'engines/codex/errors.ts'],
    ['the runtime importing a protocol folder', 'effects/session-runtime.ts', 'engines/claude/engine.ts'],
    ['events importing anything of the project', 'events/agent-event.ts', 'errors.ts'],
    ['the CLI importing past the public entry', 'cli/run.ts', 'session/create-session.ts'],
    ['the runtime importing the session face', 'effects/session-runtime.ts', 'session/notices.ts'],
  ])('flags %s', (_what, file, imports) => {
    expect(show(layerViolations(planted(file, imports)))).toEqual([expect.stringContaining(`${file} → ${imports}`)]);
  });

  it('flags a package a layer may not use, and a file outside every layer', () => {
    const files = new Map(graph.files);
    files.set('events/planted.ts', { local: [], packages: ['xstate'] });
    files.set('stray.ts', { local: [], packages: [] });
    expect(show(layerViolations({ files }))).toEqual([expect.stringContaining('events/planted.ts → xstate'), expect.stringContaining('stray.ts')]);
  });

  it('flags a planted cycle', () => {
    const cycles = importCycles(planted('events/effect.ts', 'events/session-state.ts'));
    const withBack = importCycles(planted('events/agent-event.ts', 'events/effect.ts'));
    expect(cycles).toEqual([]); // effect → session-state is a legal edge, no cycle
    expect(withBack.map((c) => c.join(' → '))).toEqual([expect.stringMatching(/events\/agent-event\.ts → .*events\/effect\.ts → .*events\/agent-event\.ts/)]);
  });
});
