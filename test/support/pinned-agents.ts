/**
 * The pinned agent CLIs (the exact devDependencies) named through the engines' own discovery
 * variables (`ASE_CLAUDE_BIN`, `ASE_CODEX_BIN`, …), so every test that lets an engine find its CLI
 * gets the tested version: a `claude` or `codex` on the machine's PATH (a global install, another
 * version) must never silently replace it. Set for the whole suite by the global setup
 * (test/support/pinned-agents-setup.ts) and passed on to `ase` subprocesses (test/support/ase-run.ts).
 * A CLI that is not installed is left out: the tests that need it fail with their own message.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const modules = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'node_modules');
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
const triple = `${arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl`;

/** Discovery variable → the pinned executable (or script) it should name. */
const PINNED: Record<string, string> = {
  ASE_CLAUDE_BIN: join(modules, '@anthropic-ai', `claude-code-${process.platform}-${arch}`, 'claude'),
  ASE_CODEX_BIN: join(modules, '@openai', `codex-linux-${arch}`, 'vendor', triple, 'bin', 'codex'),
  ASE_CODEX_MCP_BIN: join(modules, 'codex-mcp-cli', 'node_modules', '@openai', `codex-linux-${arch}`, 'vendor', triple, 'bin', 'codex'),
  ASE_GEMINI_BIN: join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
  ASE_CODEX_ACP_BIN: join(modules, '@zed-industries', `codex-acp-linux-${arch}`, 'bin', 'codex-acp'),
  ASE_CLAUDE_CODE_ACP_BIN: join(modules, '@zed-industries', 'claude-code-acp', 'dist', 'index.js'),
  ASE_COPILOT_BIN: join(modules, '@github', `copilot-linux-${arch}`, 'copilot'),
};

/** The discovery variables of every pinned CLI that is installed. */
export function pinnedAgentEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(PINNED).filter(([, path]) => existsSync(path)));
}
