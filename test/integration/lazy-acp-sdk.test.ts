/**
 * The ACP SDK loads when an ACP engine starts, not when the library is imported (src/engines/acp/sdk.ts):
 * loading its schemas cost every process ~120 ms of CPU, each `ase` command included, with an ACP
 * agent or not. Checked in a fresh Node process on the built package, with a resolve hook that
 * sees every request for the SDK (and is shown to see one when the SDK is imported after all).
 */
import * as nodeModule from 'node:module';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';

const probe = (index: string): string => `
import { registerHooks } from 'node:module';
const seen = [];
registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith('@agentclientprotocol/sdk')) seen.push(specifier); return next(specifier, context); } });
const lib = await import(${JSON.stringify(index)});
const factory = lib.defaultRegistry().get('acp');
const engine = factory.create({ now: Date.now, setTimeout, clearTimeout });
const atImport = seen.length;
const sdk = await import('@agentclientprotocol/sdk');
console.log(JSON.stringify({ atImport, afterSdkImport: seen.length, hasClient: typeof sdk.client === 'function', engine: typeof engine.start }));
`;

// module.registerHooks: Node 22.15 and later (the project brings Node 24; an older Node skips this check).
describe.skipIf(typeof (nodeModule as { registerHooks?: unknown }).registerHooks !== 'function')('the ACP SDK is loaded lazily', () => {
  it('importing the package, building the default registry and creating an ACP engine load no part of it', { timeout: 120_000 }, async () => {
    await ensureBuiltCli();
    const { stdout } = await execa(process.execPath, ['--input-type=module', '-e', probe(path.join(REPO_ROOT, 'dist', 'index.js'))], { cwd: REPO_ROOT });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { atImport: number; afterSdkImport: number; hasClient: boolean; engine: string };
    expect(result.atImport).toBe(0);
    // The hook is live: the SDK imported afterwards is seen.
    expect(result.afterSdkImport).toBeGreaterThan(0);
    expect(result).toMatchObject({ hasClient: true, engine: 'function' });
  });
});
