/**
 * `ase serve`: the remote-control server and web page. Prints the page URL (with the token, which
 * the page trades for a cookie) and, when the token was generated, the token itself for API
 * clients; runs until SIGINT/SIGTERM, then stops its sessions.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { AseError, fakeEngine, FakeScriptSchema } from '../index.js';
import { startServer } from '../server.js';
import type { Output } from './render.js';
import { findLiveServer, generatedTokenPath, removeServeFile, writeServeFile } from './serve-file.js';

export interface ServeArgs {
  host: string;
  port: number;
  tokenFile?: string;
  dataDir: string;
  /** A JSON FakeScript: the `fake` engine plays it (demos, tests). */
  script?: string;
  allowOrigins: string[];
  /** Host names answered besides loopback and the bound one (a reverse proxy's, a LAN name). */
  allowHosts?: string[];
  /** `postgres://...`: sessions and transcripts in PostgreSQL, shared with every host on it (docs/multi-host.md). */
  store?: string;
  /** `--lease-ttl-ms`: how long a session's lease outlives a host that stopped renewing it (default 30000): how soon another host may adopt it. */
  leaseTtlMs?: number;
  /** `--bin agent=PATH`: the executable new sessions of that engine run (stored with each session). */
  bins?: Record<string, string>;
  /** `--sub-agents`: every session's agent may start sub-agents itself (`spawn_session`, `session_status`). */
  subAgents?: boolean;
}

export async function runServe(args: ServeArgs, output: Output, signal?: AbortSignal): Promise<number> {
  let token: string | undefined;
  if (args.tokenFile !== undefined) {
    token = (await readFile(args.tokenFile, 'utf8').catch((error: unknown) => {
      throw new AseError('INVALID_OPTIONS', `--token-file ${args.tokenFile}: ${error instanceof Error ? error.message : String(error)}`);
    })).trim();
    if (token.length < 16) throw new AseError('INVALID_OPTIONS', `--token-file ${args.tokenFile}: the token must be at least 16 characters`);
  }
  const engines = [];
  if (args.script !== undefined) {
    const parsed = FakeScriptSchema.safeParse(JSON.parse(await readFile(args.script, 'utf8')));
    if (!parsed.success) throw new AseError('INVALID_OPTIONS', `--script ${args.script}: ${parsed.error.message}`);
    engines.push(fakeEngine(parsed.data));
  }
  await mkdir(args.dataDir, { recursive: true });
  const other = await findLiveServer(args.dataDir);
  if (other) throw new AseError('INVALID_OPTIONS', `another ase serve (pid ${other.pid}, ${other.url}) runs on the data dir ${args.dataDir}: two servers would drive the same sessions`);
  const shared = args.store === undefined ? undefined : await sharedStore(args.store);
  // Listened for before the server starts: a SIGTERM right after the page URL is out (or while the
  // server starts) stops the sessions cleanly instead of killing the process with them running.
  const stop = stopRequest(signal);
  try {
    const server = await startServer({
      ...shared,
      hostname: args.host,
      port: args.port,
      dataDir: args.dataDir,
      ...(token !== undefined && { token }),
      ...(engines.length > 0 && { engines }),
      ...(args.allowOrigins.length > 0 && { allowedOrigins: args.allowOrigins }),
      ...(args.allowHosts !== undefined && args.allowHosts.length > 0 && { allowedHosts: args.allowHosts }),
      ...(args.bins && Object.keys(args.bins).length > 0 && { bins: args.bins }),
      ...(args.leaseTtlMs !== undefined && { leaseTtlMs: args.leaseTtlMs }),
      ...(args.subAgents && { subAgents: true }),
    });
    output.out(`ase serve: open ${server.pageUrl}\n`);
    if (server.generatedToken) output.out(`token: ${server.token}   (API clients: Authorization: Bearer <token>)\n`);
    output.out(`data: ${args.dataDir}${shared ? ` (sessions in PostgreSQL, schema ${shared.store.schema})` : ''}\n`);
    // Sessions that were live when the last server died are reopened in the background: said once done.
    void server.recovery.then((report) => {
      if (report.error) output.err(`ase serve: could not list the stored sessions to reopen: ${report.error.code}: ${report.error.message}\n`);
      if (report.reopened.length > 0) output.err(`ase serve: reopened ${report.reopened.length} session(s) that were live when the last server stopped: ${report.reopened.join(', ')}\n`);
      for (const s of report.skipped) output.err(`ase serve: session ${s.sessionId} was live but is not reopened here: ${s.code}: ${s.message}\n`);
    });
    // serve.json: `ase run --mode local` and `ase attach` on this data dir find the server there.
    // A generated token goes into a file only this user can read, for them.
    const tokenFile = args.tokenFile ?? generatedTokenPath(args.dataDir);
    try {
      if (args.tokenFile === undefined) await writeFile(tokenFile, server.token + '\n', { mode: 0o600 });
      await writeServeFile(args.dataDir, { url: reachableUrl(server.url, args.host), tokenFile, ...(args.subAgents && { subAgents: true }) });
      await stop.requested;
    } finally {
      await removeServeFile(args.dataDir).catch(() => undefined);
      if (args.tokenFile === undefined) await rm(tokenFile, { force: true }).catch(() => undefined);
    }
    output.err('ase serve: stopping sessions...\n');
    await server.close();
    await shared?.router.close();
    await shared?.relay.close();
    await shared?.store.close();
    await shared?.journal.close();
    return 0;
  } finally {
    stop.dispose();
  }
}

/** The URL a command on this machine uses: a wildcard bind is reached on loopback. */
function reachableUrl(url: string, host: string): string {
  if (host === '0.0.0.0') return url.replace('//0.0.0.0:', '//127.0.0.1:');
  if (host === '::') return url.replace('//[::]:', '//[::1]:');
  return url;
}

/** `--store postgres://user@host/db[?schema=name]`: a PostgresStore and PostgresJournal on that database. */
async function sharedStore(url: string) {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new AseError('INVALID_OPTIONS', `--store: expected a postgres:// URL, got ${JSON.stringify(url)}`);
  const { PostgresCommandRouter, PostgresJournal, PostgresLiveRelay, PostgresStore } = await import('../postgres.js');
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const connectionString = parsed.toString();
  const options = { connectionString, ...(schema !== undefined && { schema }) };
  return { store: new PostgresStore(options), journal: new PostgresJournal(options), router: new PostgresCommandRouter(options), relay: new PostgresLiveRelay(options) };
}

/** Resolves on SIGINT, SIGTERM or `signal`'s abort; `dispose` removes the listeners. */
function stopRequest(signal?: AbortSignal): { requested: Promise<void>; dispose(): void } {
  let done!: () => void;
  const requested = new Promise<void>((resolve) => (done = () => resolve()));
  process.once('SIGINT', done);
  process.once('SIGTERM', done);
  signal?.addEventListener('abort', done, { once: true });
  if (signal?.aborted) done();
  return {
    requested,
    dispose: () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      signal?.removeEventListener('abort', done);
    },
  };
}
