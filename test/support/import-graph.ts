/**
 * The project's import graph, read from the source with TypeScript's own pre-processor (type-only
 * imports and re-exports included: a type import is a dependency of the design, if not of the
 * running code), and the architecture's rules held against it. Used by test/unit/boundaries.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** file (relative to `src/`, posix) → the project files it imports (same form) and the packages it imports. */
export interface ImportGraph {
  files: Map<string, { local: string[]; packages: string[] }>;
}

export function readImportGraph(srcDir: string): ImportGraph {
  const files = new Map<string, { local: string[]; packages: string[] }>();
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'generated' ? [] : walk(full);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
    });
  for (const full of walk(srcDir)) {
    const rel = path.relative(srcDir, full).split(path.sep).join('/');
    const info = ts.preProcessFile(readFileSync(full, 'utf8'), true, true);
    const local: string[] = [];
    const packages: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (fileName.startsWith('.')) {
        const target = path.relative(srcDir, path.resolve(path.dirname(full), fileName.replace(/\.js$/, '.ts')));
        local.push(target.split(path.sep).join('/'));
      } else packages.push(fileName.startsWith('node:') ? 'node:' : packageName(fileName));
    }
    files.set(rel, { local, packages });
  }
  return { files };
}

const packageName = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

/**
 * A layer: the files it owns (first matching layer wins) and what they may import. `own` lets a
 * file import within its own layer; for protocol folders "own" means the same engine folder.
 */
export interface Layer {
  name: string;
  owns: (file: string) => boolean;
  mayImport: (target: string, from: string) => boolean;
  /** Packages allowed besides node: builtins; undefined = any. */
  packages?: readonly string[];
}

const under = (dir: string) => (file: string) => file.startsWith(`${dir}/`);
const is = (name: string) => (file: string) => file === name;
const any =
  (...tests: ((file: string) => boolean)[]) =>
  (file: string) =>
    tests.some((t) => t(file));
/** The engine folder a file belongs to (`engines/codex/rollout/x.ts` → `engines/codex`). */
const engineFolder = (file: string): string | undefined => /^engines\/([^/]+)\//.exec(file)?.[0]?.slice(0, -1);

export const PUBLIC_ENTRIES = ['index.ts', 'claude.ts', 'codex.ts', 'acp.ts', 'server.ts', 'postgres.ts', 'client.ts', 'testing.ts'] as const;
const publicEntry = (file: string) => (PUBLIC_ENTRIES as readonly string[]).includes(file);

/** The architecture of docs/architecture.md, bottom layer first. */
export const LAYERS: readonly Layer[] = [
  { name: 'events', owns: under('events'), mayImport: under('events'), packages: ['zod'] },
  { name: 'errors', owns: is('errors.ts'), mayImport: under('events'), packages: [] },
  { name: 'actors', owns: under('actors'), mayImport: any(under('events'), under('actors')), packages: ['xstate', 'zod'] },
  { name: 'engines/core', owns: under('engines/core'), mayImport: any(under('events'), is('errors.ts'), under('engines/transport'), under('engines/core')), packages: ['zod', 'ajv'] },
  { name: 'engines/transport', owns: under('engines/transport'), mayImport: any(under('events'), is('errors.ts'), under('engines/transport')) },
  { name: 'engines/default-registry', owns: is('engines/default-registry.ts'), mayImport: under('engines') },
  // Replays a recording through the built-in engine it names (and that engine's spawning hook).
  { name: 'engines/replay-engine', owns: is('engines/replay-engine.ts'), mayImport: any(under('events'), is('errors.ts'), under('engines')) },
  {
    name: 'engines/<protocol>',
    owns: under('engines'),
    mayImport: (target, from) =>
      under('events')(target) || is('errors.ts')(target) || under('engines/core')(target) || under('engines/transport')(target) || engineFolder(target) === engineFolder(from),
  },
  {
    name: 'effects',
    owns: under('effects'),
    mayImport: any(under('events'), is('errors.ts'), under('actors'), under('engines/core'), under('engines/transport'), under('effects')),
  },
  {
    name: 'session',
    owns: under('session'),
    mayImport: any(under('events'), is('errors.ts'), under('actors'), under('engines/core'), is('engines/default-registry.ts'), under('effects'), under('session')),
  },
  {
    name: 'server',
    owns: under('server'),
    mayImport: any(under('events'), is('errors.ts'), under('actors'), under('engines/core'), is('engines/default-registry.ts'), under('effects'), under('session'), under('server')),
  },
  // The remote client runs in browsers too: only the event vocabulary's types, its SSE parser and
  // errors.ts (RemoteError is an AseError; errors.ts loads nothing at run time).
  { name: 'client', owns: under('client'), mayImport: any(under('events'), is('errors.ts'), under('client')), packages: ['eventsource-parser'] },
  // The engine kit (agent-session-engine/testing): drives engines, the statechart and the runtime
  // as a user's test would; its stand-in agents (testing/agents) are standalone scripts.
  {
    name: 'testing',
    owns: under('testing'),
    mayImport: any(under('events'), is('errors.ts'), under('actors'), under('engines/core'), under('engines/transport'), under('effects'), under('testing')),
    packages: ['xstate'],
  },
  { name: 'cli', owns: under('cli'), mayImport: any(publicEntry, under('cli')) },
  { name: 'public entry', owns: publicEntry, mayImport: () => true },
];

export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

/** Every import that breaks a layer rule, every package a layer may not use, every file no layer owns. */
export function layerViolations(graph: ImportGraph, layers: readonly Layer[] = LAYERS): Violation[] {
  const out: Violation[] = [];
  for (const [file, { local, packages }] of graph.files) {
    const layer = layers.find((l) => l.owns(file));
    if (!layer) {
      out.push({ file, imports: '', rule: 'belongs to no layer of docs/architecture.md' });
      continue;
    }
    for (const target of local) if (!layer.mayImport(target, file)) out.push({ file, imports: target, rule: `${layer.name} may not import this` });
    if (layer.packages) {
      for (const pkg of packages) if (pkg !== 'node:' && !layer.packages.includes(pkg)) out.push({ file, imports: pkg, rule: `${layer.name} may use only ${layer.packages.join(', ') || 'no packages'}` });
    }
  }
  return out;
}

/** Every import cycle, each as the files on it (found by depth-first search; one cycle per back edge). */
export function importCycles(graph: ImportGraph): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.files.get(file)?.local ?? []) {
      if (!graph.files.has(next)) continue;
      const s = state.get(next);
      if (s === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.files.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}
