/**
 * Finding agent CLIs (engines/core/agent-discovery.ts), reading their versions
 * (agent-version.ts) and the environment the engines pass (transport/env.ts), on throwaway
 * directories: the four places in order, a variable that names nothing, a refused PATH candidate,
 * an npm launcher replaced by its native binary, scripts run under this Node, the version cache and
 * a CLI that would wait on stdin; and the platform tables against what the pinned packages ship.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_CLI, CLAUDE_DEFAULT_PASS_ENV, CLAUDE_PLATFORM_PACKAGES, claudeOptionArgs, parseClaudeOptions } from '../../src/engines/claude/index.js';
import { CODEX_ENV_ALLOW, CODEX_MCP_CLI, CODEX_PLATFORM_PACKAGES } from '../../src/engines/codex/index.js';
import { ACP_PRESETS, CODEX_ACP_PLATFORMS } from '../../src/engines/acp/index.js';
import { COPILOT_PLATFORMS } from '../../src/engines/acp/presets.js';
import { findAgent, isCliPackage, searchAgent, type AgentCliSpec } from '../../src/engines/core/agent-discovery.js';
import { clearAgentVersionCache, normalizeVersion, readAgentVersion, versionWarning } from '../../src/engines/core/agent-version.js';
import { credentialHint } from '../../src/engines/core/agent-diagnosis.js';
import { EngineEvents } from '../../src/engines/core/engine-events.js';
import { buildEnv, envAllows } from '../../src/engines/transport/env.js';
import { pinnedAgentEnv } from '../support/pinned-agents.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ase-discovery-'));
  clearAgentVersionCache();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function executable(path: string, body = '#!/bin/sh\necho "9.9.9"\n'): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, body);
  chmodSync(path, 0o755);
  return path;
}

/** A test agent spec whose npm package lives (or not) under `root/pkg`. */
function spec(overrides: Partial<AgentCliSpec> = {}): AgentCliSpec {
  return {
    name: 'toy',
    title: 'Toy CLI',
    envVar: 'ASE_TOY_BIN',
    commands: ['toy'],
    packageName: 'toy-cli',
    install: 'npm install toy-cli',
    testedVersion: '1.0.0',
    fromPackage: () => {
      const path = join(root, 'pkg', 'toy');
      try {
        readFileSync(path);
        return { path, packageName: 'toy-cli-linux', packageVersion: '1.0.0-linux-x64' };
      } catch {
        return { missing: 'toy-cli-linux not installed' };
      }
    },
    versionCommand: { args: ['--version'], parse: (out) => /(\d+\.\d+\.\d+)/.exec(out)?.[1] },
    ...overrides,
  };
}

describe('the four places, in order', () => {
  it('nothing anywhere: AGENT_NOT_FOUND naming all four places', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const error = await findAgent(spec(), { env: { PATH: empty } }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'AGENT_NOT_FOUND',
      details: { agent: 'toy', looked: ['bin option: not given', 'ASE_TOY_BIN: not set', 'PATH: no "toy" in 1 directory', 'npm package: toy-cli-linux not installed'] },
    });
    expect((error as Error).message).toContain('Install it (npm install toy-cli), put toy on PATH, or name it with ASE_TOY_BIN or the bin option.');
  });

  it('each place wins over the ones after it', async () => {
    const pkgBin = executable(join(root, 'pkg', 'toy'));
    const pathBin = executable(join(root, 'path', 'toy'));
    const envBin = executable(join(root, 'env', 'my-toy'));
    const explicit = executable(join(root, 'explicit', 'toy'));
    const env = { PATH: join(root, 'path'), ASE_TOY_BIN: envBin };
    expect(await findAgent(spec(), { env: { PATH: join(root, 'nowhere') } })).toMatchObject({ source: 'package', path: pkgBin, file: pkgBin, args: [], packageVersion: '1.0.0-linux-x64' });
    expect(await findAgent(spec(), { env: { PATH: join(root, 'path') } })).toMatchObject({ source: 'path', where: 'PATH', path: pathBin });
    expect(await findAgent(spec(), { env })).toMatchObject({ source: 'env', where: 'ASE_TOY_BIN', path: envBin });
    expect(await findAgent(spec(), { env, bin: explicit })).toMatchObject({ source: 'bin', path: explicit });
    // A bare name as `bin` is looked up on PATH.
    expect(await findAgent(spec(), { env, bin: 'toy' })).toMatchObject({ source: 'bin', path: pathBin });
  });

  it('a variable (or bin) that names nothing is an error, not a reason to run another CLI', async () => {
    executable(join(root, 'path', 'toy'));
    const error = await findAgent(spec(), { env: { PATH: join(root, 'path'), ASE_TOY_BIN: join(root, 'typo') } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AGENT_NOT_FOUND', details: { looked: ['bin option: not given', `ASE_TOY_BIN: ${join(root, 'typo')} (no such executable file)`] } });
    const noBin = await findAgent(spec(), { env: { PATH: join(root, 'path') }, bin: 'not-a-command' }).catch((e: unknown) => e);
    expect(noBin).toMatchObject({ code: 'AGENT_NOT_FOUND', details: { looked: ['bin option: not-a-command (not on PATH)'] } });
    // A file that is not executable does not count as found on PATH.
    writeFileSync(join(root, 'path', 'toy'), 'x');
    chmodSync(join(root, 'path', 'toy'), 0o644);
    expect((await searchAgent(spec(), { env: { PATH: join(root, 'path') } })).found).toBeUndefined();
  });

  it('a PATH candidate the spec refuses is passed over, with the reason, for the npm package', async () => {
    executable(join(root, 'path', 'toy'));
    const pkgBin = executable(join(root, 'pkg', 'toy'));
    const refusing = spec({ accept: async (location) => (location.source === 'path' ? 'too new' : undefined) });
    const search = await searchAgent(refusing, { env: { PATH: join(root, 'path') } });
    expect(search.found).toMatchObject({ source: 'package', path: pkgBin });
    expect(search.looked).toContain(`PATH: ${join(root, 'path', 'toy')} (not used: too new)`);
  });

  it('a script runs under this Node; an npm launcher inside the agent`s package is replaced by its native binary', async () => {
    // `toy` on PATH is node_modules/.bin/toy → ../toy-cli/bin/toy.js, a launcher of the platform binary.
    const modules = join(root, 'app', 'node_modules');
    const launcher = executable(join(modules, 'toy-cli', 'bin', 'toy.js'), '#!/usr/bin/env node\n');
    writeFileSync(join(modules, 'toy-cli', 'package.json'), JSON.stringify({ name: 'toy-cli', version: '1.2.3' }));
    const native = executable(join(modules, 'toy-cli-linux', 'bin', 'toy'));
    mkdirSync(join(modules, '.bin'));
    symlinkSync('../toy-cli/bin/toy.js', join(modules, '.bin', 'toy'));
    const env = { PATH: join(modules, '.bin') };
    const plain = await findAgent(spec(), { env });
    expect(plain).toMatchObject({ source: 'path', file: process.execPath, args: [join(modules, '.bin', 'toy')], packageName: 'toy-cli', packageVersion: '1.2.3' });
    const unwrapping = spec({ packageNames: ['toy-cli'], unwrap: (dir) => (dir === join(modules, 'toy-cli') ? { path: native, packageName: 'toy-cli-linux', packageVersion: '1.2.3', pathDir: join(root, 'tools') } : undefined) });
    expect(await findAgent(unwrapping, { env })).toMatchObject({ source: 'path', file: native, args: [], path: native, packageName: 'toy-cli-linux', pathDir: join(root, 'tools') });
    expect(launcher).toBeTruthy();
  });
});

describe('versions', () => {
  it('from the package when it is one (platform suffix dropped), else from the version command, cached per file until it changes', async () => {
    expect(normalizeVersion('0.169.0-linux-x64')).toBe('0.169.0');
    expect(normalizeVersion('2.1.330')).toBe('2.1.330');
    expect(normalizeVersion('1.0.0-beta.2')).toBe('1.0.0-beta.2');
    const counter = join(root, 'count');
    const bin = executable(join(root, 'bin', 'toy'), `#!/bin/sh\necho x >> ${counter}\necho "toy 1.4.2"\n`);
    const location = { file: bin, args: [], path: bin, source: 'path' as const, where: 'PATH' };
    expect(await readAgentVersion(spec(), location)).toEqual({ version: '1.4.2', from: 'command' });
    expect(await readAgentVersion(spec(), location)).toEqual({ version: '1.4.2', from: 'command' });
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
    // Replaced in place (another size and mtime): asked again.
    writeFileSync(bin, `#!/bin/sh\necho x >> ${counter}\necho "toy 1.5.0 (upgraded)"\n`);
    utimesSync(bin, new Date(), new Date(Date.now() + 5_000));
    expect(await readAgentVersion(spec(), location)).toEqual({ version: '1.5.0', from: 'command' });
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(await readAgentVersion(spec(), { ...location, packageVersion: '2.0.0-darwin-arm64' })).toEqual({ version: '2.0.0', from: 'package' });
    expect(await readAgentVersion(spec({ versionCommand: undefined }), location)).toMatchObject({ error: expect.stringContaining('no version command') });
  });

  it('a CLI that reads its protocol from stdin sees EOF and answers; junk output is an error, not a version', async () => {
    const waiting = executable(join(root, 'bin', 'reader'), '#!/bin/sh\ncat > /dev/null\necho "reader 3.2.1"\n');
    expect(await readAgentVersion(spec(), { file: waiting, args: [], path: waiting, source: 'bin', where: 'the bin option' })).toEqual({ version: '3.2.1', from: 'command' });
    const junk = executable(join(root, 'bin', 'junk'), '#!/bin/sh\necho "no version here"\nexit 3\n');
    expect(await readAgentVersion(spec(), { file: junk, args: [], path: junk, source: 'bin', where: 'the bin option' })).toMatchObject({ error: expect.stringContaining('failed') });
    const slow = executable(join(root, 'bin', 'slow'), '#!/bin/sh\nsleep 5\n');
    const started = Date.now();
    expect(await readAgentVersion(spec(), { file: slow, args: [], path: slow, source: 'bin', where: 'the bin option' }, { timeoutMs: 200 })).toMatchObject({ error: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('warns only for a known version that differs from the tested one', () => {
    expect(versionWarning(spec(), '1.0.0', 'PATH')).toBeUndefined();
    expect(versionWarning(spec(), undefined, 'PATH')).toBeUndefined();
    expect(versionWarning(spec({ testedVersion: undefined }), '7.0.0', 'PATH')).toBeUndefined();
    expect(versionWarning(spec(), '1.0.1', 'PATH')).toBe('Toy CLI 1.0.1 (PATH) is not the version this library is tested against (1.0.0); it may work, but protocol changes are possible');
  });
});

describe('the pinned packages', () => {
  const manifest = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'node_modules', name, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };

  it('every platform each CLI ships is in its engine`s table', () => {
    expect(Object.keys(manifest('@anthropic-ai/claude-code').optionalDependencies ?? {}).filter((p) => !Object.values(CLAUDE_PLATFORM_PACKAGES).includes(p))).toEqual([]);
    const codexPkgs = Object.values(CODEX_PLATFORM_PACKAGES).map((t) => t.pkg);
    expect(Object.keys(manifest('@openai/codex').optionalDependencies ?? {}).filter((p) => !codexPkgs.includes(p))).toEqual([]);
    expect(Object.keys(manifest('@zed-industries/codex-acp').optionalDependencies ?? {}).filter((p) => !CODEX_ACP_PLATFORMS.some((k) => p === `@zed-industries/codex-acp-${k}`))).toEqual([]);
    expect(Object.keys(manifest('@github/copilot').optionalDependencies ?? {}).filter((p) => !COPILOT_PLATFORMS.some((k) => p === `@github/copilot-${k}`))).toEqual([]);
  });

  it('without PATH or variables, each engine finds the pinned CLI in its npm package', async () => {
    const none = { PATH: join(root, 'nowhere') };
    const claude = await findAgent(CLAUDE_CLI, { env: none });
    expect(claude).toMatchObject({ source: 'package', packageName: `@anthropic-ai/claude-code-${process.platform}-${process.arch}`, packageVersion: '2.1.330' });
    expect(claude.path).toContain('node_modules');
    const mcp = await findAgent(CODEX_MCP_CLI, { env: none });
    expect(mcp.path).toContain('codex-mcp-cli');
    expect(await readAgentVersion(CODEX_MCP_CLI, mcp)).toEqual({ version: '0.153.4', from: 'package' });
    // Copilot CLI: its platform binary, from the package and in place of the npm-loader.js launcher on PATH.
    const copilot = await findAgent(ACP_PRESETS.copilot.cli, { env: none });
    expect(copilot).toMatchObject({ source: 'package', args: [], packageName: `@github/copilot-linux-${process.arch}`, packageVersion: '1.0.102' });
    expect(copilot.file).toBe(copilot.path);
    const launched = await findAgent(ACP_PRESETS.copilot.cli, { env: { PATH: join(process.cwd(), 'node_modules', '.bin') } });
    expect(launched).toMatchObject({ source: 'path', file: copilot.path, args: [], packageVersion: '1.0.102' });
  });

  it('codex-mcp passes over a codex on PATH that has no mcp-server (0.169.0) for its own package', async () => {
    const pinned = pinnedAgentEnv();
    mkdirSync(join(root, 'path'));
    symlinkSync(pinned['ASE_CODEX_BIN']!, join(root, 'path', 'codex'));
    const search = await searchAgent(CODEX_MCP_CLI, { env: { PATH: join(root, 'path') } });
    expect(search.looked[2]).toBe(`PATH: ${join(root, 'path', 'codex')} (not used: codex 0.169.0 has no mcp-server (removed in 0.154.0))`);
    expect(search.found).toMatchObject({ source: 'package' });
    // Named explicitly, it is used as given: the engine's preflight then refuses it with its reason.
    expect((await searchAgent(CODEX_MCP_CLI, { env: { PATH: '' }, bin: join(root, 'path', 'codex') })).found).toMatchObject({ source: 'bin' });
  });
});

describe('environment', () => {
  const base = {
    PATH: '/bin',
    HOME: '/h',
    ANTHROPIC_API_KEY: 'a',
    ANTHROPIC_BASE_URL: 'b',
    CLAUDE_CONFIG_DIR: 'c',
    AWS_PROFILE: 'd',
    CLOUD_ML_REGION: 'e',
    VERTEX_REGION_CLAUDE_4_0_SONNET: 'f',
    GOOGLE_APPLICATION_CREDENTIALS: 'g',
    OPENAI_API_KEY: 'o',
    CODEX_HOME: 'x',
    GEMINI_API_KEY: 'gem',
    HTTPS_PROXY: 'p',
    https_proxy: 'p2',
    NO_PROXY: 'n',
    NODE_EXTRA_CA_CERTS: 'ca',
    SSL_CERT_FILE: 's',
    XDG_CONFIG_HOME: 'xdg',
    NODE_OPTIONS: '--inspect',
    SECRET_TOKEN: 'no',
    npm_config_cache: 'no',
  };

  it('names and PREFIX* patterns; NODE_OPTIONS only when set explicitly', () => {
    expect(envAllows(['ANTHROPIC_*'], 'ANTHROPIC_API_KEY')).toBe(true);
    expect(envAllows(['ANTHROPIC_*'], 'ANTHROPIC')).toBe(false);
    expect(buildEnv({ allow: ['NODE_*', 'PATH'], base })).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: 'ca' });
    expect(buildEnv({ allow: ['PATH'], base, set: { NODE_OPTIONS: '--max-old-space-size=100' } })).toEqual({ PATH: '/bin', NODE_OPTIONS: '--max-old-space-size=100' });
  });

  it('claude passes Anthropic, Claude, Bedrock and Vertex variables and the network settings; nothing else', () => {
    const env = buildEnv({ allow: CLAUDE_DEFAULT_PASS_ENV, base });
    expect(Object.keys(env).sort()).toEqual(
      ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'AWS_PROFILE', 'CLAUDE_CONFIG_DIR', 'CLOUD_ML_REGION', 'GOOGLE_APPLICATION_CREDENTIALS', 'HOME', 'HTTPS_PROXY', 'NODE_EXTRA_CA_CERTS', 'NO_PROXY', 'PATH', 'SSL_CERT_FILE', 'VERTEX_REGION_CLAUDE_4_0_SONNET', 'XDG_CONFIG_HOME', 'https_proxy'].sort(),
    );
  });

  it('codex passes OpenAI and Codex variables and the network settings; nothing else', () => {
    const env = buildEnv({ allow: CODEX_ENV_ALLOW, base });
    expect(Object.keys(env).sort()).toEqual(['CODEX_HOME', 'HOME', 'HTTPS_PROXY', 'NODE_EXTRA_CA_CERTS', 'NO_PROXY', 'OPENAI_API_KEY', 'PATH', 'SSL_CERT_FILE', 'XDG_CONFIG_HOME', 'https_proxy'].sort());
  });

  it('an auth error carries the credential hint (names only); other errors do not', () => {
    const events = new EngineEvents({ now: () => 1 });
    const seen: string[] = [];
    events.subscribe((e) => e.type === 'error' && seen.push(e.message));
    events.bind(1);
    events.authHint = credentialHint({ title: 'Toy CLI', lookedFor: ['TOY_KEY', 'TOY_TOKEN'], related: ['TOY_URL'], env: { TOY_URL: 'http://secret-host', TOY_KEY: '' } });
    events.emit({ type: 'error', kind: 'auth', message: 'Not logged in', retryable: false });
    events.emit({ type: 'error', kind: 'transient', message: 'overloaded', retryable: true });
    expect(seen).toEqual(['Not logged in (Toy CLI looks for credentials in TOY_KEY, TOY_TOKEN; its environment had TOY_URL)', 'overloaded']);
  });
});

describe('claude options → flags', () => {
  it('every option becomes its flag, in a fixed order, extraArgs last', () => {
    const options = parseClaudeOptions({
      model: 'sonnet',
      fallbackModel: ['opus', 'haiku'],
      permissionMode: 'plan',
      allowedTools: ['Bash(git log:*)', 'Edit'],
      disallowedTools: ['WebFetch'],
      systemPrompt: 'sys',
      appendSystemPrompt: 'more',
      maxTurns: 3,
      mcpServers: { files: { command: 'mcp-files', args: ['--root', '.'] }, web: { type: 'http', url: 'http://127.0.0.1:9/mcp' } },
      settings: { permissions: { allow: ['Read'] } },
      addDirs: ['/a', '/b'],
      extraArgs: ['--effort', 'high'],
    });
    expect(claudeOptionArgs(options)).toEqual([
      '--model', 'sonnet',
      '--fallback-model', 'opus,haiku',
      '--permission-mode', 'plan',
      '--allowedTools', 'Bash(git log:*),Edit',
      '--disallowedTools', 'WebFetch',
      '--system-prompt', 'sys',
      '--append-system-prompt', 'more',
      '--max-turns', '3',
      '--mcp-config', JSON.stringify({ mcpServers: { files: { command: 'mcp-files', args: ['--root', '.'] }, web: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } }),
      '--settings', JSON.stringify({ permissions: { allow: ['Read'] } }),
      '--add-dir', '/a', '--add-dir', '/b',
      '--effort', 'high',
    ]);
    expect(claudeOptionArgs(parseClaudeOptions({ settings: '/etc/claude.json' }))).toEqual(['--settings', '/etc/claude.json']);
    expect(claudeOptionArgs({})).toEqual([]);
  });

  it('refuses what the CLI would not take, with one sentence per problem', () => {
    const refuse = (options: Record<string, unknown>) => {
      try {
        parseClaudeOptions(options);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refuse({ permissionMode: 'yolo' })).toMatch(/^claude engine options: permissionMode: /);
    expect(refuse({ maxTurns: 0 })).toContain('maxTurns');
    expect(refuse({ allowedTools: 'Bash' })).toContain('allowedTools');
    expect(refuse({ mcpServers: { s: { type: 'sdk', name: 's' } } })).toContain('an MCP server is {command, args?, env?} (stdio) or {type: "http" | "sse", url, headers?}');
    expect(refuse({ passEnv: ['*'] })).toContain('"*" alone would pass everything');
    expect(refuse({ env: { '': 'x' } })).toContain('a variable name cannot be empty');
    expect(refuse({ bogus: 1, other: 2 })).toBe(
      'claude engine options: unknown options "bogus", "other" (known: addDirs, allowedTools, appendSystemPrompt, bin, controlTimeoutMs, disallowedTools, env, extraArgs, fallbackModel, hostToolsConnectTimeoutMs, initializeTimeoutMs, interruptTimeoutMs, launcher, maxLineBytes, maxTurns, mcpServers, model, onTraffic, passEnv, permissionMode, settings, shutdown, systemPrompt)',
    );
  });
});


describe('the version of a CLI inside a host application', () => {
  // The bug: the nearest package.json above a `.bin/claude` that is not a symlink into the CLI's
  // package (pnpm's shell shim, a copied binary) is the host app's, and its version (1.0.0) was
  // taken for Claude Code's, so every session warned "Claude Code 1.0.0 is not the version ...".
  it('a host app (version 1.0.0) with the real Claude Code in its node_modules behind a shim: the version is the CLI`s, no warning', async () => {
    const pinned = pinnedAgentEnv()['ASE_CLAUDE_BIN'];
    if (!pinned) throw new Error('the pinned Claude Code is not installed (npm install)');
    const app = join(root, 'host-app');
    const modules = join(app, 'node_modules');
    mkdirSync(join(modules, '@anthropic-ai'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'host-app', version: '1.0.0', private: true }));
    // The real CLI package, as the app's install put it there.
    symlinkSync(join(pinned, '..'), join(modules, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`));
    // pnpm-style `.bin` entry: a shell script, not a symlink, so its nearest package.json is the app's.
    executable(join(modules, '.bin', 'claude'), `#!/bin/sh\nbasedir=$(dirname "$0")\nexec "$basedir/../@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude" "$@"\n`);
    const location = await findAgent(CLAUDE_CLI, { env: { PATH: join(modules, '.bin') } });
    expect(location).toMatchObject({ source: 'path', path: join(modules, '.bin', 'claude') });
    expect(location.packageVersion).toBeUndefined();
    expect(location.packageName).toBeUndefined();
    const info = await readAgentVersion(CLAUDE_CLI, location, { timeoutMs: 60_000 });
    expect(info).toEqual({ version: '2.1.330', from: 'command' });
    expect(versionWarning(CLAUDE_CLI, info.version, location.where)).toBeUndefined();
    // The CLI's own package, reached through the app's node_modules: its package.json, no process.
    const direct = await findAgent(CLAUDE_CLI, { bin: join(modules, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, 'claude') });
    expect(direct).toMatchObject({ packageName: `@anthropic-ai/claude-code-${process.platform}-${process.arch}`, packageVersion: '2.1.330' });
  }, 90_000);

  it('only the CLI`s own packages (and their platform builds) count as its package', () => {
    expect(isCliPackage(CLAUDE_CLI, '@anthropic-ai/claude-code')).toBe(true);
    expect(isCliPackage(CLAUDE_CLI, '@anthropic-ai/claude-code-linux-x64-musl')).toBe(true);
    expect(isCliPackage(CLAUDE_CLI, '@anthropic-ai/claude-code-linux-arm64-android')).toBe(true);
    expect(isCliPackage(CLAUDE_CLI, 'host-app')).toBe(false);
    expect(isCliPackage(CLAUDE_CLI, '@anthropic-ai/claude-code-acp')).toBe(false);
    expect(isCliPackage(CODEX_MCP_CLI, '@openai/codex-linux-x64')).toBe(true);
  });
});
