/**
 * Our ACP engine through the public kit against the kit's own ACP stand-in agent: every
 * conformance check applies (the stand-in can be made to ask permission, fail, stall and print
 * bad output), so none may skip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { acpEngine } from '../../src/acp.js';
import { engineConformance, registerWithVitest, standInAgent, standInDriver } from '../../src/testing.js';

const root = mkdtempSync(join(tmpdir(), 'ase-kit-acp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const { command, args } = standInAgent('acp');

registerWithVitest(engineConformance(acpEngine(), { workDir: root, engineOptions: { command, args, home: join(root, 'home') }, driver: standInDriver() }), { describe, it });
