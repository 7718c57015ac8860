/**
 * Vitest global setup: a throwaway PostgreSQL cluster on 127.0.0.1 for the Postgres store tests,
 * from the machine's Debian binaries (initdb + pg_ctl, about 1-2 s), stopped and removed after the run.
 * Its URL reaches the test processes as `ASE_TEST_PG_URL`; each test file makes a schema of its own.
 *
 * A URL already set by the person running the suite is used as it is. Without binaries the Postgres
 * tests skip with a loud line, except where Postgres is required (`CI` or `ASE_REQUIRE_PG=1`): there a
 * missing or failing cluster fails the run here, before any test.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const required = (): boolean => process.env.ASE_REQUIRE_PG === '1' || (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false');

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.ASE_TEST_PG_URL) return undefined;
  const bin = postgresBin();
  if (!bin) {
    const message = 'PostgreSQL binaries not found (/usr/lib/postgresql/*/bin/initdb): the Postgres store tests are SKIPPED. Install the Debian package postgresql (bash scripts/install-system-packages.sh).';
    if (required()) throw new Error(message);
    process.stderr.write(`\n!!! ${message}\n\n`);
    return undefined;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-pg-'));
  // initdb refuses to run as root: run the cluster as the postgres user then.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]): void => {
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args], { stdio: 'pipe' });
    else execFileSync(path.join(bin, cmd), args, { stdio: 'pipe' });
  };
  if (asRoot) execFileSync('chown', ['postgres:', root]);
  const data = path.join(root, 'data');
  const port = await freePort();
  const stop = (): void => {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop']);
    } catch {
      // Already gone.
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
    // fsync off: a test cluster is thrown away. In postgresql.conf, not on the command line, so the
    // benchmark can turn durability back on with ALTER SYSTEM (which the command line would override).
    fs.appendFileSync(path.join(data, 'postgresql.conf'), '\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 300\n');
    const options = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${root}`;
    run('pg_ctl', ['-D', data, '-l', path.join(root, 'log'), '-w', '-s', '-o', options, 'start']);
  } catch (error) {
    const log = spawnSync('cat', [path.join(root, 'log')], { encoding: 'utf8' }).stdout ?? '';
    stop();
    const message = `could not start a test PostgreSQL: ${(error as Error).message}\n${log}`;
    if (required()) throw new Error(message);
    process.stderr.write(`\n!!! ${message}\nThe Postgres store tests are SKIPPED.\n\n`);
    return undefined;
  }
  process.env.ASE_TEST_PG_URL = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return stop;
}
