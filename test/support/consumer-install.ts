/**
 * Installing this package the way a consumer does, without the network: `npm pack` of the project,
 * plus `npm pack` of each of its runtime dependencies (the `dependencies` closure, taken from this
 * checkout's node_modules: the same versions the registry would give), then
 * `npm install --offline --omit=dev` of those tarballs into a fresh project with an empty npm
 * cache. No registry is asked anything, so it works under `unshare -n` (scripts/loopback-only.mjs)
 * and on a machine whose npm cache never saw these packages.
 *
 * Packing and installing cost about 35 s of CPU (npm pack of 45 packages, then npm install), and
 * two files need the same result (consumer, engine-template): `installedConsumerProject` does it
 * once per test run, in a temp directory named by the run's marker, and copies the installed
 * project for each caller; the suite's teardown (consumer-install-teardown.ts) removes it.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { REPO_ROOT } from './built-cli.js';
import { TEST_RUN_VAR } from './orphan-check.js';

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

/** The run's shared packed-and-installed project (the run marker keeps runs apart); undefined outside a vitest run. */
export function sharedConsumerDir(): string | undefined {
  const marker = process.env[TEST_RUN_VAR];
  return marker ? join(tmpdir(), `ase-consumer-${marker}`) : undefined;
}

/** How long a file waits for another worker's pack and install (a loaded 2-core machine: minutes). */
const SHARED_INSTALL_WAIT_MS = 300_000;

/**
 * A fresh project at `app` with this package and its runtime dependencies installed from their
 * packed tarballs, offline, and `package.json` as given: a copy of the run's one shared install
 * (made by whichever file asks first; the others wait for it). Outside a vitest run (no marker),
 * packs and installs into `app` itself. `scratch` holds the tarballs and npm cache then.
 */
export async function installedConsumerProject(app: string, manifest: Record<string, unknown>, scratch: string): Promise<void> {
  const install = async (into: string, work: string) => {
    mkdirSync(join(work, 'tgz'), { recursive: true });
    mkdirSync(into, { recursive: true });
    const tarballs = await packDirs([REPO_ROOT, ...runtimeDependencyDirs()], join(work, 'tgz'));
    writeFileSync(join(into, 'package.json'), JSON.stringify(manifest));
    await installOffline(into, tarballs, join(work, 'npm-cache'));
  };
  const shared = sharedConsumerDir();
  if (!shared) return install(app, scratch);
  const ready = join(shared, 'ready');
  const failed = join(shared, 'failed');
  let mine = false;
  try {
    mkdirSync(shared); // atomic: the first file to get here packs and installs
    mine = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (mine) {
    try {
      await install(join(shared, 'app'), shared);
      writeFileSync(ready, '');
    } catch (error) {
      writeFileSync(failed, String(error));
      throw error;
    }
  } else {
    const deadline = Date.now() + SHARED_INSTALL_WAIT_MS;
    while (!existsSync(ready)) {
      if (existsSync(failed)) throw new Error(`the run's shared pack and install failed: ${readFileSync(failed, 'utf8')}`);
      if (Date.now() > deadline) throw new Error(`the run's shared pack and install (${shared}) was not ready after ${SHARED_INSTALL_WAIT_MS / 1000} s`);
      await sleep(250);
    }
  }
  // Symlinks as they are (node_modules/.bin links are relative): the copy must not point into the shared one.
  cpSync(join(shared, 'app'), app, { recursive: true, verbatimSymlinks: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest));
}

/** Removes the run's shared install (the suite's global teardown). */
export function removeSharedConsumerProject(): void {
  const shared = sharedConsumerDir();
  if (shared) rmSync(shared, { recursive: true, force: true });
}
