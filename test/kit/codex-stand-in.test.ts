/** Our Codex app-server engine through the public kit against the kit's Codex app-server stand-in. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { codexEngine } from '../../src/codex.js';
import { engineConformance, registerWithVitest, standInDriver, standInExecutable } from '../../src/testing.js';
import { testRunEnv } from '../support/orphan-check.js';

const root = mkdtempSync(join(tmpdir(), 'ase-kit-codex-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bin = standInExecutable('codex-app-server', join(root, 'bin'), 'codex');

registerWithVitest(engineConformance(codexEngine({ bin }), { workDir: root, engineOptions: { env: { ...testRunEnv(), CODEX_HOME: join(root, 'codex-home') } }, driver: standInDriver() }), { describe, it });
