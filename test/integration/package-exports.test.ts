/**
 * The package as a consumer installs it: every entry of package.json `exports` resolves after
 * `npm run build` (refreshed first when dist is older than the sources).
 *
 * A throwaway project gets `node_modules/agent-session-engine` as a symlink to this repository;
 * from there a Node process imports each entry by its package name (through the exports map) and
 * TypeScript type-checks a file importing each entry (through the `types` conditions). Deep imports
 * of files the map does not list are refused.
 */
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as acpApi from '../../src/acp.js';
import * as claudeApi from '../../src/claude.js';
import * as codexApi from '../../src/codex.js';
import * as rootApi from '../../src/index.js';
import * as postgresApi from '../../src/postgres.js';
import * as serverApi from '../../src/server.js';
import * as clientApi from '../../src/client.js';
import * as testingApi from '../../src/testing.js';
import { ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

type ExportEntry = { types: string; default: string };
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, ExportEntry | string> };

/** The entries and the source module each one is built from (its value exports must match). */
const ENTRIES: Record<string, Record<string, unknown>> = {
  '.': rootApi,
  './claude': claudeApi,
  './codex': codexApi,
  './acp': acpApi,
  './server': serverApi,
  './postgres': postgresApi,
  './client': clientApi,
  './testing': testingApi,
};
const specifier = (entry: string) => (entry === '.' ? pkg.name : `${pkg.name}/${entry.slice(2)}`);

let project: string;

beforeAll(async () => {
  await ensureBuiltCli();
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-package-'));
  await fs.mkdir(path.join(project, 'node_modules'));
  await fs.symlink(REPO_ROOT, path.join(project, 'node_modules', pkg.name), 'dir');
  await fs.writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 120_000);

afterAll(async () => {
  if (project) await fs.rm(project, { recursive: true, force: true });
});

describe('package.json exports', () => {
  it('lists the root, the three engine subpaths, the server, postgres, the client, the engine kit and package.json, each with types and default', () => {
    expect(Object.keys(pkg.exports)).toEqual(['.', './claude', './codex', './acp', './server', './postgres', './client', './testing', './package.json']);
    expect(pkg.exports['./package.json']).toBe('./package.json');
    for (const entry of Object.keys(ENTRIES)) {
      const target = pkg.exports[entry] as ExportEntry;
      expect(Object.keys(target), `${entry}: "types" must come first`).toEqual(['types', 'default']);
      expect(existsSync(path.join(REPO_ROOT, target.types)), `${entry}: ${target.types} after npm run build`).toBe(true);
      expect(existsSync(path.join(REPO_ROOT, target.default)), `${entry}: ${target.default} after npm run build`).toBe(true);
    }
  });

  it('every entry imports by its package name and exports exactly the names of its source', async () => {
    const script = `
      const out = {};
      for (const s of ${JSON.stringify(Object.keys(ENTRIES).map(specifier))}) out[s] = Object.keys(await import(s)).sort();
      let deep = 'imported';
      try { await import('${pkg.name}/dist/engines/claude/translate.js'); } catch (error) { deep = error.code; }
      console.log(JSON.stringify({ out, deep }));
    `;
    const run = await execa(process.execPath, ['--input-type=module', '-e', script], { cwd: project, reject: false, all: true });
    expect(run.exitCode, run.all).toBe(0);
    const { out, deep } = JSON.parse(run.stdout) as { out: Record<string, string[]>; deep: string };
    for (const [entry, source] of Object.entries(ENTRIES)) {
      expect(out[specifier(entry)], specifier(entry)).toEqual(Object.keys(source).sort());
    }
    expect(deep, 'a file the exports map does not list must not be importable').toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('every entry type-checks by its package name (the types conditions)', async () => {
    const consumer = [
      `import { createSession, type Session } from '${pkg.name}';`,
      `import { ClaudeEngine, type ClaudePermissionMode } from '${pkg.name}/claude';`,
      `import { tailRollout, type RolloutCursor } from '${pkg.name}/codex';`,
      `import { ConfinedFs, type AcpSessionInfo } from '${pkg.name}/acp';`,
      `import { startServer, type RunningServer } from '${pkg.name}/server';`,
      `import { engineConformance, type AgentDriver } from '${pkg.name}/testing';`,
      `export const values = [createSession, ClaudeEngine, tailRollout, ConfinedFs, startServer, engineConformance] as const;`,
      `export type Types = [Session, ClaudePermissionMode, RolloutCursor, AcpSessionInfo, RunningServer, AgentDriver];`,
      '',
    ].join('\n');
    await fs.writeFile(path.join(project, 'consumer.ts'), consumer);
    const tsconfig = {
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2023',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
      },
      files: ['consumer.ts'],
    };
    await fs.writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const check = await execa(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, reject: false, all: true });
    expect(check.exitCode, check.all).toBe(0);
  });
});
