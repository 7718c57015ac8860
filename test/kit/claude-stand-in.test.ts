/**
 * Our Claude engine (stream-json, hooked) and the claude-print engine (driven, one process a turn)
 * through the public kit against the kit's Claude stream-json stand-in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { claudeEngine, claudePrintEngine } from '../../src/claude.js';
import { engineConformance, registerWithVitest, standInDriver, standInExecutable } from '../../src/testing.js';
import { testRunEnv } from '../support/orphan-check.js';

const root = mkdtempSync(join(tmpdir(), 'ase-kit-claude-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bin = standInExecutable('claude-stream-json', join(root, 'bin'), 'claude');

const engineOptions = { env: { ...testRunEnv(), HOME: join(root, 'home') } };

registerWithVitest(engineConformance(claudeEngine({ bin }), { workDir: root, engineOptions, driver: standInDriver() }), { describe, it });
registerWithVitest(engineConformance(claudePrintEngine({ bin }), { workDir: root, engineOptions, driver: standInDriver() }), { describe, it });
