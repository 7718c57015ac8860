/**
 * `ase serve`: the remote-control server and web page. Prints the page URL (with the token, which
 * the page trades for a cookie) and, when the token was generated, the token itself for API
 * clients; runs until SIGINT/SIGTERM, then stops its sessions.
 */
import { readFile } from 'node:fs/promises';
import { AseError, fakeEngine, FakeScriptSchema } from '../index.js';
import { startServer } from '../server.js';
import type { Output } from './render.js';

export interface ServeArgs {
  host: string;
  port: number;
  tokenFile?: string;
  dataDir: string;
  /** A JSON FakeScript: the `fake` engine plays it (demos, tests). */
  script?: string;
  allowOrigins: string[];
  /** `--bin agent=PATH`: the executable new sessions of that engine run (stored with each session). */
  bins?: Record<string, string>;
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
  const server = await startServer({
    hostname: args.host,
    port: args.port,
    dataDir: args.dataDir,
    ...(token !== undefined && { token }),
    ...(engines.length > 0 && { engines }),
    ...(args.allowOrigins.length > 0 && { allowedOrigins: args.allowOrigins }),
    ...(args.bins && Object.keys(args.bins).length > 0 && { bins: args.bins }),
  });
  output.out(`ase serve: open ${server.pageUrl}\n`);
  if (server.generatedToken) output.out(`token: ${server.token}   (API clients: Authorization: Bearer <token>)\n`);
  output.out(`data: ${args.dataDir}\n`);
  await new Promise<void>((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    signal?.addEventListener('abort', done, { once: true });
  });
  output.err('ase serve: stopping sessions...\n');
  await server.close();
  return 0;
}
