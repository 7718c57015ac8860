/**
 * The Claude Agent SDK, the peer the side-by-side benchmark measures against. It is not a
 * dependency of this project (its platform package alone is ~356 MB): the bench installs the
 * pinned version on demand into a cache directory outside the repository (`npm install --prefix`,
 * optional platform packages omitted: the bench hands it the stand-in as
 * `pathToClaudeCodeExecutable`), and reuses it on later runs. When it cannot be installed (no
 * registry, no npm) the SDK's rows say so instead of a number.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const CLAUDE_AGENT_SDK_VERSION = '0.3.328';

/** `query()` as far as the bench uses it. */
export type SdkQuery = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<{ type: string }> & { return?(value?: unknown): Promise<unknown> };

export type SdkLoad = { ok: true; query: SdkQuery; dir: string } | { ok: false; reason: string };

/** Where the SDK is installed: $ASE_BENCH_CACHE, else ~/.cache (or the temp dir when there is no home). */
export function sdkDir(): string {
  const base = process.env['ASE_BENCH_CACHE'] ?? path.join(os.homedir() || os.tmpdir(), '.cache', 'agent-session-engine-bench');
  return path.join(base, `claude-agent-sdk-${CLAUDE_AGENT_SDK_VERSION}`);
}

/** Installs the pinned SDK if it is not there yet, then imports it. Never throws. */
export async function loadClaudeAgentSdk(): Promise<SdkLoad> {
  const dir = sdkDir();
  const pkg = path.join(dir, 'node_modules', '@anthropic-ai', 'claude-agent-sdk');
  try {
    if (!installedVersionIs(pkg)) {
      fs.mkdirSync(dir, { recursive: true });
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      await new Promise<void>((resolve, reject) =>
        execFile(
          npm,
          ['install', '--prefix', dir, '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', `@anthropic-ai/claude-agent-sdk@${CLAUDE_AGENT_SDK_VERSION}`],
          { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
          (error, _stdout, stderr) => (error ? reject(new Error(`npm install failed: ${String(stderr).trim().split('\n').at(-1) ?? error.message}`)) : resolve()),
        ),
      );
      if (!installedVersionIs(pkg)) return { ok: false, reason: `npm install left no @anthropic-ai/claude-agent-sdk@${CLAUDE_AGENT_SDK_VERSION} in ${dir}` };
    }
    const entry = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { main?: string };
    const mod = (await import(pathToFileURL(path.join(pkg, entry.main ?? 'sdk.mjs')).href)) as { query?: SdkQuery };
    if (typeof mod.query !== 'function') return { ok: false, reason: 'the installed SDK has no query()' };
    return { ok: true, query: mod.query, dir };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

function installedVersionIs(pkg: string): boolean {
  try {
    return (JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version?: string }).version === CLAUDE_AGENT_SDK_VERSION;
  } catch {
    return false;
  }
}
