/**
 * The built `ase` CLI (dist/cli/bin.js), refreshed with `npm run build` when it is missing or
 * older than the sources, so CLI tests always run the current code the way a user runs it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ASE_BIN = path.join(REPO_ROOT, 'dist', 'cli', 'bin.js');

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? await newestMtime(full) : (await fs.stat(full)).mtimeMs);
  }
  return newest;
}

/** Builds dist when it is older than src/ or package.json; throws with the build output if that fails. */
export async function ensureBuiltCli(): Promise<void> {
  const built = await fs.stat(ASE_BIN).then((s) => s.mtimeMs, () => 0);
  const sources = Math.max(await newestMtime(path.join(REPO_ROOT, 'src')), (await fs.stat(path.join(REPO_ROOT, 'package.json'))).mtimeMs);
  if (built >= sources) return;
  const build = await execa('npm', ['run', 'build'], { cwd: REPO_ROOT, reject: false, all: true });
  if (build.exitCode !== 0) throw new Error(`npm run build failed (exit ${build.exitCode}):\n${build.all}`);
}
