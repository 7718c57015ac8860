/**
 * Our ACP engine through the public kit against the kit's own ACP stand-in agent: every
 * conformance check applies (the stand-in can be made to ask permission, fail, stall and print
 * bad output), so none may skip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acpEngine } from '../../src/acp.js';
import { engineConformance, modelBasedHarness, registerWithVitest, standInAgent, standInDriver } from '../../src/testing.js';

const root = mkdtempSync(join(tmpdir(), 'ase-kit-acp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const { command, args } = standInAgent('acp');

registerWithVitest(engineConformance(acpEngine(), { workDir: root, engineOptions: { command, args, home: join(root, 'home') }, driver: standInDriver() }), { describe, it });

describe('acp: the model-based harness over the engine', () => {
  it('walks the SessionActor over the ACP engine and the stand-in: invariants after every step, coverage reported', async () => {
    const report = await modelBasedHarness(acpEngine(), { workDir: root, engineOptions: { command, args, home: join(root, 'home') }, driver: standInDriver(), steps: 30 }).run();
    console.log(`model-based harness, acp + stand-in: ${report.transitions.taken}/${report.transitions.total} transitions, ${report.checks} invariant checks; inputs: ${report.inputs.join(' ')}`);
    expect(report.inputs.at(-1)).toBe('stop');
    expect(report.transitions.taken).toBeGreaterThan(20);
  }, 300_000);
});
