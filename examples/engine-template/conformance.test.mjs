// The template engine through the engine kit, with node:test (no other test runner needed):
//   node --test conformance.test.mjs
// Every conformance check runs against the line agent stand-in (the kit's standInDriver() writes
// the prompts it obeys), then the model-based harness walks the SessionActor over the engine and
// prints its transition coverage. Only public imports: this file works as is in a project that
// installed agent-session-engine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engineConformance, modelBasedHarness, registerWithNodeTest, standInDriver } from 'agent-session-engine/testing';
import { lineEngine } from './line-engine.mjs';

const workDir = mkdtempSync(join(tmpdir(), 'line-engine-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

registerWithNodeTest(engineConformance(lineEngine(), { workDir, driver: standInDriver(), turnTimeoutMs: 30_000 }), { describe, it });

describe('line (model-based harness)', () => {
  it('walks the SessionActor over the engine: invariants after every step', { timeout: 300_000 }, async () => {
    const report = await modelBasedHarness(lineEngine(), { workDir, driver: standInDriver(), steps: 40 }).run();
    console.log(`HARNESS ${JSON.stringify({ taken: report.transitions.taken, total: report.transitions.total, inputs: report.inputs.length, checks: report.checks })}`);
    assert.equal(report.inputs.at(-1), 'stop');
    assert.ok(report.transitions.taken > 20, `only ${report.transitions.taken} transitions taken`);
  });
});
