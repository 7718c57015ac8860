/**
 * Installing this package the way a consumer does, without the network: `npm pack` of the project,
 * plus `npm pack` of each of its runtime dependencies (the `dependencies` closure, taken from this
 * checkout's node_modules: the same versions the registry would give), then
 * `npm install --offline --omit=dev` of those tarballs into a fresh project with an empty npm
 * cache. No registry is asked anything, so it works under `unshare -n` (scripts/loopback-only.mjs)
 * and on a machine whose npm cache never saw these packages.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { REPO_ROOT } from './built-cli.js';

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Where Node would find package `name` from `from` (the nearest node_modules up the tree). */
function packageDirFrom(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The directories of every installed runtime dependency of the project, transitively. */
export function runtimeDependencyDirs(root = REPO_ROOT): string[] {
  const seen = new Set<string>();
  const visit = (dir: string) => {
    const manifest = readManifest(dir);
    // Optional dependencies that are installed (a platform build) travel too; missing ones are skipped as npm would.
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const found = packageDirFrom(name, dir);
      if (!found || seen.has(found)) continue;
      seen.add(found);
      visit(found);
    }
  };
  visit(root);
  return [...seen];
}

/** `npm pack` of `dirs` into `dest` (no scripts: dist is built already); returns the tarball paths. */
export async function packDirs(dirs: readonly string[], dest: string): Promise<string[]> {
  const before = new Set(existsSync(dest) ? readdirSync(dest) : []);
  await execa('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest, ...dirs], { cwd: REPO_ROOT });
  return readdirSync(dest)
    .filter((f) => f.endsWith('.tgz') && !before.has(f))
    .map((f) => join(dest, f));
}

/** Installs `tarballs` into the project at `app` with only runtime dependencies, offline. */
export async function installOffline(app: string, tarballs: readonly string[], cache: string): Promise<void> {
  const result = await execa('npm', ['install', '--offline', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', '--cache', cache, ...tarballs], {
    cwd: app,
    reject: false,
    all: true,
  });
  if (result.exitCode !== 0) throw new Error(`npm install of the packed tarballs failed (exit ${result.exitCode}):\n${result.all}`);
}
