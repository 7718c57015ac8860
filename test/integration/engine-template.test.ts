/**
 * The engine template (examples/engine-template: a small engine for a line-based agent and its
 * stand-in agent) as someone outside this repository gets it: `npm pack` of the library, installed
 * offline into a fresh project with only its runtime dependencies (test/support/consumer-install.ts),
 * the template copied out of the installed package, and its own `conformance.test.mjs` run there
 * with `node --test` (no vitest, no file of this repository): every conformance check of the kit
 * passes and the model-based harness walks the SessionActor over the engine and reports coverage.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_CHECKS } from '../../src/testing.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { installedConsumerProject } from '../support/consumer-install.js';
import { testRunEnv } from '../support/orphan-check.js';

let root: string;
let app: string;

beforeAll(async () => {
  await ensureBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'ase-template-'));
  app = join(root, 'app');
  for (const dir of [app, join(root, 'home')]) mkdirSync(dir, { recursive: true });
  await installedConsumerProject(app, { name: 'my-engine', version: '1.0.0', private: true, type: 'module' }, root);
  // What a user does: copy the template out of the installed package and start from it.
  cpSync(join(app, 'node_modules', 'agent-session-engine', 'examples', 'engine-template'), join(app, 'engine'), { recursive: true });
}, 300_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the engine template, installed from the packed tarball', () => {
  it('ships in the package with its stand-in agent, and the kit ships its stand-ins built', () => {
    expect(readdirSync(join(app, 'engine')).sort()).toEqual(expect.arrayContaining(['README.md', 'conformance.test.mjs', 'line-agent.mjs', 'line-engine.mjs']));
    expect(readdirSync(join(app, 'node_modules', 'agent-session-engine', 'dist', 'testing', 'agents')).filter((f) => f.endsWith('.js')).sort()).toEqual(['acp-agent.js', 'claude-agent.js', 'codex-agent.js']);
  });

  it('passes every conformance check and the model-based harness with node --test and only public imports', async () => {
    const run = await execa(process.execPath, ['--test', '--test-reporter=spec', 'engine/conformance.test.mjs'], {
      cwd: app,
      reject: false,
      all: true,
      env: { PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: join(root, 'home'), NO_COLOR: '1', ...testRunEnv() },
      extendEnv: false,
      timeout: 600_000,
    });
    expect(run.exitCode, run.all).toBe(0);
    for (const check of CONFORMANCE_CHECKS) expect(run.all, check).toMatch(new RegExp(`✔ ${check}: `));
    expect(run.all).not.toMatch(/# skip [1-9]/);
    const harness = /HARNESS (\{.*\})/.exec(run.all ?? '');
    expect(harness, run.all).not.toBeNull();
    const report = JSON.parse(harness![1]!) as { taken: number; total: number; inputs: number; checks: number };
    console.log(`engine template, installed: conformance ${CONFORMANCE_CHECKS.length}/${CONFORMANCE_CHECKS.length}; harness ${report.taken}/${report.total} transitions, ${report.inputs} inputs, ${report.checks} invariant checks`);
    expect(report.total).toBeGreaterThan(50);
    expect(report.taken).toBeGreaterThan(20);
  }, 900_000);
});
